// `seatrt parse`: runs a model's raw output (special tokens as text) through
// the seat's tool/reasoning parser plugins, as the server does, and prints
// the OpenAI assistant message, or with --stream the SSE chunks a streaming
// client would receive.  For checking parsers from the command line.
#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/status.hpp"
#include "seatrt/parser.h"
#include "seatrt/text/hf_tokenizer.hpp"
#include "seatrt/text/tokenizer.hpp"

namespace seatrt::cli {
namespace {

using nlohmann::json;

constexpr const char* kUsage =
    "parse --tokenizer TOKENIZER.json --tool NAME --reasoning NAME [--kwargs JSON] [--tools JSON]\n"
    "      [--tool-choice JSON] [--response-format JSON] [--prompt-tail TEXT] [--finish stop|length]\n"
    "      [--plugins DIR]... [--stream] < model_output.txt";

struct Options {
  std::string tokenizer, tool, reasoning, kwargs = "{}", tools, tool_choice, response_format, prompt_tail;
  std::string finish = "stop";
  std::vector<std::filesystem::path> plugin_dirs;
  bool stream = false;
};

// What one feed/finish step produced, merged per kind (one SSE chunk each).
class StepDeltas {
 public:
  void content(std::string_view t) { append("content", t); }
  void reasoning(std::string_view t) { append("reasoning_content", t); }
  void tool_call(int32_t index, const char* id, const char* name, std::string_view args) {
    if (!deltas_.empty() && deltas_.back().contains("tool_calls") && deltas_.back()["tool_calls"][0]["index"] == index) {
      auto& fn = deltas_.back()["tool_calls"][0]["function"];
      fn["arguments"] = fn["arguments"].get<std::string>() + std::string(args);
      return;
    }
    // As the server streams them (OpenAI's shape): id, type and name in a
    // call's first delta only, then index and argument pieces (the openai
    // SDK's stream helper concatenates every string it is sent again).
    json call = {{"index", index}};
    if (std::find(started_.begin(), started_.end(), index) == started_.end()) {
      started_.push_back(index);
      call["id"] = id;
      call["type"] = "function";
      call["function"] = {{"name", name}, {"arguments", std::string(args)}};
    } else {
      call["function"] = {{"arguments", std::string(args)}};
    }
    deltas_.push_back({{"tool_calls", json::array({call})}});
  }
  std::vector<json> take() {
    std::vector<json> out;
    out.swap(deltas_);
    return out;
  }

 private:
  void append(const char* key, std::string_view t) {
    if (!deltas_.empty() && deltas_.back().contains(key)) {
      deltas_.back()[key] = deltas_.back()[key].get<std::string>() + std::string(t);
    } else {
      deltas_.push_back({{key, std::string(t)}});
    }
  }
  std::vector<json> deltas_;
  std::vector<int32_t> started_;  // call indexes whose first delta went out
};

// One parser instance; content may be forwarded to the next parser in the
// chain (reasoning parser -> tool parser) instead of to the output.
class Instance {
 public:
  Instance(const seatrt_parser_api& api, seatrt_parser* parser) : api_(api), parser_(parser) {}
  ~Instance() { api_.destroy(parser_); }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  void feed(const std::vector<int32_t>& ids, const std::string& text, StepDeltas& out, Instance* next) {
    Context ctx{&out, next, &ids};
    host::throw_if_error(api_.feed(parser_, ids.data(), ids.size(), text.data(), text.size(), &events(ctx)),
                         "parser feed");
  }
  int32_t finish(int32_t reason, StepDeltas& out, Instance* next) {
    const std::vector<int32_t> none;
    Context ctx{&out, next, &none};
    int32_t client = reason;
    host::throw_if_error(api_.finish(parser_, reason, &events(ctx), &client), "parser finish");
    return client;
  }

 private:
  struct Context {
    StepDeltas* out;
    Instance* next;
    const std::vector<int32_t>* ids;
    seatrt_parser_events events{};
  };
  static seatrt_parser_events& events(Context& ctx) {
    auto& e = ctx.events;
    e.struct_size = sizeof(e);
    e.user_data = &ctx;
    e.content = [](void* u, const char* t, size_t n) {
      auto* c = static_cast<Context*>(u);
      if (c->next) {
        c->next->feed(*c->ids, std::string(t, n), *c->out, nullptr);
      } else {
        c->out->content({t, n});
      }
    };
    e.reasoning = [](void* u, const char* t, size_t n) { static_cast<Context*>(u)->out->reasoning({t, n}); };
    e.tool_call = [](void* u, int32_t index, const char* id, const char* name, const char* t, size_t n) {
      static_cast<Context*>(u)->out->tool_call(index, id, name, {t, n});
    };
    return e;
  }
  const seatrt_parser_api& api_;
  seatrt_parser* parser_;
};

const char* reason_name(int32_t r) {
  switch (r) {
    case SEATRT_FINISH_LENGTH: return "length";
    case SEATRT_FINISH_TOOL_CALLS: return "tool_calls";
    case SEATRT_FINISH_ERROR: return "error";
    default: return "stop";
  }
}

// The OpenAI message assembled from every delta.
json assemble(const std::vector<json>& deltas) {
  std::string content, reasoning;
  bool content_seen = false;
  json calls = json::array();
  for (const json& d : deltas) {
    if (d.contains("content")) {
      content += d["content"].get<std::string>();
      content_seen = true;
    }
    if (d.contains("reasoning_content")) reasoning += d["reasoning_content"].get<std::string>();
    if (d.contains("tool_calls")) {
      const json& tc = d["tool_calls"][0];
      const size_t index = tc["index"].get<size_t>();
      if (index >= calls.size()) {
        calls.push_back({{"id", tc["id"]}, {"type", "function"},
                         {"function", {{"name", tc["function"]["name"]}, {"arguments", ""}}}});
      }
      auto& args = calls[index]["function"]["arguments"];
      args = args.get<std::string>() + tc["function"]["arguments"].get<std::string>();
    }
  }
  json m = {{"role", "assistant"}};
  m["content"] = (content_seen || calls.empty()) ? json(content) : json(nullptr);
  if (!reasoning.empty()) m["reasoning_content"] = reasoning;
  if (!calls.empty()) m["tool_calls"] = calls;
  return m;
}

void print_chunk(const json& delta, const json& finish_reason) {
  const json chunk = {{"object", "chat.completion.chunk"},
                      {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish_reason}}}}};
  std::printf("data: %s\n\n", chunk.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
}

struct VocabView {
  static const text::Tokenizer& tok(const seatrt_vocab* v) { return *static_cast<const text::Tokenizer*>(v->host_state); }
  static void token_bytes(const seatrt_vocab* v, int32_t id, const char** data, size_t* len) {
    const std::string_view b = tok(v).token_bytes(id);
    *data = b.data();
    *len = b.size();
  }
  static int32_t token_id(const seatrt_vocab* v, const char* t) { return tok(v).token_id(t); }
  static int32_t is_special(const seatrt_vocab* v, int32_t id) { return tok(v).is_special(id) ? 1 : 0; }
};

int parse_output(const Options& o) {
  const std::string output((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  std::unique_ptr<text::Tokenizer> tokenizer = std::filesystem::is_directory(o.tokenizer)
                                                   ? text::load_tokenizer(o.tokenizer)
                                                   : text::load_hf_tokenizer(o.tokenizer);
  seatrt_vocab vocab{};
  vocab.struct_size = sizeof(vocab);
  vocab.size = tokenizer->vocab_size();
  vocab.host_state = tokenizer.get();
  vocab.token_bytes = VocabView::token_bytes;
  vocab.token_id = VocabView::token_id;
  vocab.is_special = VocabView::is_special;

  host::PluginRegistry registry(o.plugin_dirs.empty() ? host::default_plugin_search_paths() : o.plugin_dirs);
  std::shared_ptr<host::LoadedPlugin> tool_plugin, reasoning_plugin;
  seatrt_parser_api tool_api{}, reasoning_api{};
  if (!o.tool.empty()) {
    tool_plugin = registry.load(o.tool, SEATRT_KIND_TOOL_PARSER);
    tool_api = host::read_table(tool_plugin->descriptor().tool_parser);
  }
  if (!o.reasoning.empty()) {
    reasoning_plugin = registry.load(o.reasoning, SEATRT_KIND_REASONING_PARSER);
    reasoning_api = host::read_table(reasoning_plugin->descriptor().reasoning_parser);
  }
  seatrt_parser_request request{};
  request.struct_size = sizeof(request);
  request.request_id = "seatrt-parse";
  request.tools_json = o.tools.c_str();
  request.tool_choice_json = o.tool_choice.c_str();
  request.response_format_json = o.response_format.c_str();
  request.chat_template_kwargs_json = o.kwargs.c_str();
  request.prompt_tail = o.prompt_tail.c_str();
  request.prompt_tail_len = o.prompt_tail.size();
  request.vocab = &vocab;
  const auto make = [&](const seatrt_parser_api& api) {
    seatrt_parser* p = nullptr;
    host::throw_if_error(api.create("", &request, &p), "parser create");
    return std::make_unique<Instance>(api, p);
  };
  // Same table for both kinds: one instance does both (parser.h).
  const bool one = tool_plugin && reasoning_plugin && tool_plugin->descriptor().tool_parser ==
                                                          reasoning_plugin->descriptor().reasoning_parser;
  std::unique_ptr<Instance> first, second;
  if (reasoning_plugin) first = make(reasoning_api);
  if (tool_plugin && !one) (first ? second : first) = make(tool_api);

  const std::vector<int32_t> ids = tokenizer->encode(output, false);
  StepDeltas step;
  std::vector<json> all;
  if (o.stream) print_chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
  const auto flush = [&] {
    for (json& d : step.take()) {
      if (o.stream) print_chunk(d, nullptr);
      all.push_back(std::move(d));
    }
  };
  for (int32_t id : ids) {
    const std::vector<int32_t> one_id{id};
    const std::string text(tokenizer->token_bytes(id));
    if (first) first->feed(one_id, text, step, second.get());
    else step.content(text);
    flush();
  }
  const int32_t engine_reason = o.finish == "length" ? SEATRT_FINISH_LENGTH : SEATRT_FINISH_STOP;
  int32_t reason = engine_reason;
  if (first) reason = first->finish(engine_reason, step, second.get());
  if (second) reason = second->finish(engine_reason, step, nullptr);
  flush();
  if (o.stream) {
    print_chunk(json::object(), reason_name(reason));
    std::printf("data: [DONE]\n\n");
  } else {
    const json choice = {{"index", 0}, {"message", assemble(all)}, {"finish_reason", reason_name(reason)}};
    std::printf("%s\n", choice.dump(2, ' ', false, json::error_handler_t::replace).c_str());
  }
  return 0;
}

int run_parse(std::span<const std::string> args) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&](std::string& field) {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      field = args[++i];
    };
    if (a == "--tokenizer") value(o.tokenizer);
    else if (a == "--tool") value(o.tool);
    else if (a == "--reasoning") value(o.reasoning);
    else if (a == "--kwargs") value(o.kwargs);
    else if (a == "--tools") value(o.tools);
    else if (a == "--tool-choice") value(o.tool_choice);
    else if (a == "--response-format") value(o.response_format);
    else if (a == "--prompt-tail") value(o.prompt_tail);
    else if (a == "--finish") value(o.finish);
    else if (a == "--stream") o.stream = true;
    else if (a == "--plugins") {
      std::string dir;
      value(dir);
      o.plugin_dirs.emplace_back(dir);
    } else {
      std::fprintf(stderr, "seatrt parse: unexpected argument '%s'\nusage: seatrt %s\n", a.c_str(), kUsage);
      return 2;
    }
  }
  if (o.tokenizer.empty() || (o.tool.empty() && o.reasoning.empty()) || (o.finish != "stop" && o.finish != "length")) {
    std::fprintf(stderr, "seatrt parse: --tokenizer and a --tool or --reasoning parser are required\nusage: seatrt %s\n",
                 kUsage);
    return 2;
  }
  try {
    return parse_output(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seatrt parse: %s\n", e.what());
    return 1;
  }
}

}  // namespace

SEATRT_CLI_COMMAND("parse", kUsage, "run model output through tool/reasoning parser plugins; print the message",
                   run_parse)

}  // namespace seatrt::cli
