#include "responses_output.hpp"

#include <utility>

#include "serve_generation.hpp"

namespace seatrt::server {

using ojson = nlohmann::ordered_json;

ResponsesOutput::ResponsesOutput(std::string id, std::string model, int64_t created_at, ojson echo, Emit emit)
    : id_(std::move(id)), model_(std::move(model)), created_at_(created_at), echo_(std::move(echo)),
      emit_(std::move(emit)) {}

bool ResponsesOutput::emit(const std::string& type, ojson event) {
  if (!emit_) return true;
  ojson e = {{"type", type}, {"sequence_number", sequence_++}};
  for (auto& [key, value] : event.items()) e[key] = std::move(value);
  return emit_(type, e);
}

ojson ResponsesOutput::response() const {
  ojson r = {{"id", id_},
             {"object", "response"},
             {"created_at", created_at_},
             {"status", status_},
             {"background", false},
             {"error", error_},
             {"incomplete_details", incomplete_details_}};
  for (const char* key : {"instructions", "max_output_tokens"}) r[key] = echo_.value(key, ojson());
  r["model"] = model_;
  r["output"] = output_;
  for (const char* key : {"parallel_tool_calls", "previous_response_id", "reasoning", "store", "temperature", "text",
                          "tool_choice", "tools", "top_p", "truncation"})
    r[key] = echo_.value(key, ojson());
  r["usage"] = usage_;
  r["user"] = echo_.value("user", ojson());
  r["metadata"] = echo_.value("metadata", ojson::object());
  return r;
}

bool ResponsesOutput::start() {
  return emit("response.created", {{"response", response()}}) &&
         emit("response.in_progress", {{"response", response()}});
}

bool ResponsesOutput::open(Open kind, const ToolCallDelta* call) {
  const auto index = static_cast<int64_t>(output_.size());
  text_.clear();
  open_ = kind;
  if (kind == Open::reasoning) {
    output_.push_back({{"id", random_id("rs_")}, {"type", "reasoning"}, {"summary", ojson::array()},
                       {"content", ojson::array()}, {"status", "in_progress"}});
    return emit("response.output_item.added", {{"output_index", index}, {"item", item()}}) &&
           emit("response.content_part.added", {{"item_id", item()["id"]}, {"output_index", index},
                                                {"content_index", 0},
                                                {"part", {{"type", "reasoning_text"}, {"text", ""}}}});
  }
  if (kind == Open::message) {
    output_.push_back({{"id", random_id("msg_")}, {"type", "message"}, {"status", "in_progress"},
                       {"role", "assistant"}, {"content", ojson::array()}});
    logprobs_ = ojson::array();
    return emit("response.output_item.added", {{"output_index", index}, {"item", item()}}) &&
           emit("response.content_part.added",
                {{"item_id", item()["id"]}, {"output_index", index}, {"content_index", 0},
                 {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", ojson::array()},
                           {"logprobs", ojson::array()}}}});
  }
  open_call_ = call->index;
  output_.push_back({{"id", random_id("fc_")}, {"type", "function_call"}, {"status", "in_progress"},
                     {"arguments", ""}, {"call_id", call->id}, {"name", call->name}});
  return emit("response.output_item.added", {{"output_index", index}, {"item", item()}});
}

bool ResponsesOutput::close(const char* status) {
  if (open_ == Open::none) return true;
  const auto index = static_cast<int64_t>(output_.size()) - 1;
  ojson& it = item();
  const ojson item_id = it["id"];
  bool ok = true;
  if (open_ == Open::reasoning) {
    const ojson part = {{"type", "reasoning_text"}, {"text", text_}};
    it["content"] = ojson::array({part});
    ok = emit("response.reasoning_text.done",
              {{"item_id", item_id}, {"output_index", index}, {"content_index", 0}, {"text", text_}}) &&
         emit("response.content_part.done",
              {{"item_id", item_id}, {"output_index", index}, {"content_index", 0}, {"part", part}});
  } else if (open_ == Open::message) {
    const ojson part = {{"type", "output_text"}, {"text", text_}, {"annotations", ojson::array()},
                        {"logprobs", logprobs_}};
    it["content"] = ojson::array({part});
    ok = emit("response.output_text.done", {{"item_id", item_id}, {"output_index", index}, {"content_index", 0},
                                            {"text", text_}, {"logprobs", logprobs_}}) &&
         emit("response.content_part.done",
              {{"item_id", item_id}, {"output_index", index}, {"content_index", 0}, {"part", part}});
  } else {
    it["arguments"] = text_;
    ok = emit("response.function_call_arguments.done",
              {{"item_id", item_id}, {"output_index", index}, {"arguments", text_}});
  }
  it["status"] = status;
  open_ = Open::none;
  open_call_ = -1;
  return ok && emit("response.output_item.done", {{"output_index", index}, {"item", it}});
}

bool ResponsesOutput::add(const ParsedDelta& in, const ojson& logprobs, int64_t completion_tokens, bool last_of_cut) {
  ParsedDelta delta = in;
  // The chat answer's rule (the parser's): a thought cut off with nothing
  // else said is also the content, so a chat answer is never empty.  Here
  // the reasoning item says it, incomplete, and there is no message (as
  // OpenAI answers a response cut while reasoning).
  if (last_of_cut && !delta.content.empty() && delta.tool_calls.empty() && output_.size() <= 1 &&
      (open_ == Open::reasoning || !delta.reasoning.empty())) {
    const std::string thought = (open_ == Open::reasoning ? text_ : std::string()) + delta.reasoning;
    if (thought.ends_with(delta.content)) delta.content.clear();
  }
  const int64_t new_tokens = completion_tokens - seen_tokens_;
  seen_tokens_ = completion_tokens;
  if (!delta.reasoning.empty() && delta.content.empty() && delta.tool_calls.empty()) reasoning_tokens_ += new_tokens;
  for (const auto& lp : logprobs) pending_logprobs_.push_back(lp);
  // Tokens that went to a thought or a call are not the message's text, nor
  // is a token that shows nothing while one is open (the marker closing it).
  if (delta.content.empty() &&
      (!delta.reasoning.empty() || !delta.tool_calls.empty() || open_ == Open::reasoning || open_ == Open::call))
    pending_logprobs_ = ojson::array();
  // Each write stops at the first that finds the client gone.
  auto index = [&] { return static_cast<int64_t>(output_.size()) - 1; };
  if (!delta.reasoning.empty()) {
    if (open_ != Open::reasoning && !(close("completed") && open(Open::reasoning, nullptr))) return false;
    text_ += delta.reasoning;
    if (!emit("response.reasoning_text.delta", {{"item_id", item()["id"]}, {"output_index", index()},
                                                {"content_index", 0}, {"delta", delta.reasoning}}))
      return false;
  }
  if (!delta.content.empty()) {
    if (open_ != Open::message && !(close("completed") && open(Open::message, nullptr))) return false;
    text_ += delta.content;
    ojson these = std::exchange(pending_logprobs_, ojson::array());
    for (const auto& lp : these) logprobs_.push_back(lp);
    if (!emit("response.output_text.delta", {{"item_id", item()["id"]}, {"output_index", index()},
                                             {"content_index", 0}, {"delta", delta.content}, {"logprobs", these}}))
      return false;
  }
  for (const auto& call : delta.tool_calls) {
    if ((open_ != Open::call || open_call_ != call.index) && !(close("completed") && open(Open::call, &call)))
      return false;
    if (call.arguments.empty()) continue;
    text_ += call.arguments;
    if (!emit("response.function_call_arguments.delta",
              {{"item_id", item()["id"]}, {"output_index", index()}, {"delta", call.arguments}}))
      return false;
  }
  return true;
}

bool ResponsesOutput::finish(const std::string& finish_reason, const ojson& chat_usage) {
  const bool cut = finish_reason == "length";
  // Logprobs of tokens whose text never showed (an end token) stay with the message.
  if (open_ == Open::message)
    for (const auto& lp : std::exchange(pending_logprobs_, ojson::array())) logprobs_.push_back(lp);
  const bool ok = close(cut ? "incomplete" : "completed");
  status_ = cut ? "incomplete" : "completed";
  if (cut) incomplete_details_ = {{"reason", "max_output_tokens"}};
  const int64_t input = chat_usage.value("prompt_tokens", int64_t{0});
  const int64_t output = chat_usage.value("completion_tokens", int64_t{0});
  const int64_t cached = chat_usage.contains("prompt_tokens_details")
                             ? chat_usage["prompt_tokens_details"].value("cached_tokens", int64_t{0})
                             : 0;
  usage_ = {{"input_tokens", input},
            // cache_write_tokens: what a prompt-cache write is billed for; the prefix cache has no such cost.
            {"input_tokens_details", {{"cached_tokens", cached}, {"cache_write_tokens", 0}}},
            {"output_tokens", output},
            {"output_tokens_details", {{"reasoning_tokens", reasoning_tokens_}}},
            {"total_tokens", input + output}};
  return ok && emit(cut ? "response.incomplete" : "response.completed", {{"response", response()}});
}

bool ResponsesOutput::fail(const std::string& code, const std::string& message) {
  status_ = "failed";
  error_ = {{"code", code}, {"message", message}};
  return emit("response.failed", {{"response", response()}});
}

}  // namespace seatrt::server
