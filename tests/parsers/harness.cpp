#include "harness.hpp"

#include <algorithm>

namespace seatrt::parsers::test {

namespace {

const TestVocab* owner(const seatrt_vocab* v) { return static_cast<const TestVocab*>(v->host_state); }

void token_bytes(const seatrt_vocab* v, int32_t id, const char** data, size_t* len) {
  const TestVocab* o = owner(v);
  if (id < 0 || id >= o->size()) {
    *data = nullptr;
    *len = 0;
    return;
  }
  *data = o->bytes(id).data();
  *len = o->bytes(id).size();
}
int32_t token_id(const seatrt_vocab* v, const char* text) { return owner(v)->id(text); }
int32_t is_special(const seatrt_vocab* v, int32_t id) { return owner(v)->special(id) ? 1 : 0; }

}  // namespace

TestVocab::TestVocab(std::vector<Token> tokens) : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) ids_.emplace(tokens_[i].bytes, static_cast<int32_t>(i));
  vocab_.struct_size = sizeof(seatrt_vocab);
  vocab_.size = static_cast<int32_t>(tokens_.size());
  vocab_.host_state = this;
  vocab_.token_bytes = token_bytes;
  vocab_.token_id = token_id;
  vocab_.is_special = is_special;
}

int32_t TestVocab::id(std::string_view text) const {
  auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<TestVocab::Token> gemma4_specials() {
  std::vector<TestVocab::Token> out;
  for (const char* s : {"<pad>", "<eos>", "<bos>", "<|tool_call>", "<tool_call|>", "<|tool_response>",
                        "<tool_response|>", "<|\"|>", "<|channel>", "<channel|>", "<|turn>", "<turn|>", "<|think|>",
                        "<|tool>", "<tool|>", "<|image|>"}) {
    out.push_back({s, true});
  }
  return out;
}

void Recorder::add(const std::string& kind, const nlohmann::json& delta, std::string_view text) {
  if (steps_.empty()) begin_step();
  nlohmann::json& step = steps_.back();
  if (!step.empty()) {
    nlohmann::json& last = step.back();
    if (kind != "tool_calls" && last.contains(kind)) {
      last[kind] = last[kind].get<std::string>() + std::string(text);
      return;
    }
    if (kind == "tool_calls" && last.contains("tool_calls") &&
        last["tool_calls"][0]["index"] == delta["tool_calls"][0]["index"]) {
      auto& fn = last["tool_calls"][0]["function"];
      fn["arguments"] = fn["arguments"].get<std::string>() + std::string(text);
      return;
    }
  }
  step.push_back(delta);
}

void Recorder::content(std::string_view text) {
  if (text.empty()) problems_.push_back("empty content event");
  content_ += text;
  content_seen_ = true;
  add("content", {{"content", std::string(text)}}, text);
}

void Recorder::reasoning(std::string_view text) {
  if (text.empty()) problems_.push_back("empty reasoning event");
  reasoning_ += text;
  add("reasoning_content", {{"reasoning_content", std::string(text)}}, text);
}

void Recorder::tool_call(int index, const std::string& id, const std::string& name, std::string_view delta) {
  const bool id_ok = id.size() == 29 && id.starts_with("call_") &&
                     std::all_of(id.begin() + 5, id.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
                     });
  if (!id_ok) problems_.push_back("bad call id '" + id + "'");
  if (name.empty()) problems_.push_back("tool call delta without a name");
  if (index < 0 || static_cast<size_t>(index) > ids_.size()) {
    problems_.push_back("tool call index out of order: " + std::to_string(index));
    return;
  }
  if (static_cast<size_t>(index) == ids_.size()) {
    for (const std::string& other : ids_) {
      if (other == id) problems_.push_back("call id reused: " + id);
    }
    ids_.push_back(id);
    names_.push_back(name);
    arguments_.emplace_back();
  } else if (ids_[static_cast<size_t>(index)] != id || names_[static_cast<size_t>(index)] != name) {
    problems_.push_back("id or name changed within call " + std::to_string(index));
  }
  arguments_[static_cast<size_t>(index)] += delta;
  nlohmann::json d = {{"tool_calls",
                       {{{"index", index},
                         {"id", "ID" + std::to_string(index)},
                         {"type", "function"},
                         {"function", {{"name", name}, {"arguments", std::string(delta)}}}}}}};
  add("tool_calls", d, delta);
}

nlohmann::json Recorder::message() const {
  nlohmann::json m = {{"role", "assistant"}};
  m["content"] = (content_seen_ || ids_.empty()) ? nlohmann::json(content_) : nlohmann::json(nullptr);
  if (!reasoning_.empty()) m["reasoning_content"] = reasoning_;
  if (!ids_.empty()) {
    nlohmann::json calls = nlohmann::json::array();
    for (size_t i = 0; i < ids_.size(); ++i) {
      calls.push_back({{"id", "ID" + std::to_string(i)},
                       {"type", "function"},
                       {"function", {{"name", names_[i]}, {"arguments", arguments_[i]}}}});
    }
    m["tool_calls"] = calls;
  }
  return m;
}

}  // namespace seatrt::parsers::test
