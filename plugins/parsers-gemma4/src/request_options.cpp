#include "request_options.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <stdexcept>


#include "markers.hpp"

namespace seatrt::parsers::gemma4 {
namespace {

using nlohmann::json;

json parse_json(const char* text, const char* what) {
  if (!text || !*text) return json();
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string(what) + " is not valid JSON: " + e.what());
  }
}

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

void read_tools(const json& tools, RequestOptions& out) {
  if (tools.is_null()) return;
  if (!tools.is_array()) throw std::invalid_argument("'tools' must be an array");
  for (const json& tool : tools) {
    const json* fn = nullptr;
    if (tool.is_object()) {
      auto it = tool.find("function");
      if (it != tool.end() && it->is_object()) fn = &*it;
    }
    if (!fn || !fn->contains("name") || !(*fn)["name"].is_string()) {
      throw std::invalid_argument("each tool must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    const std::string name = (*fn)["name"].get<std::string>();
    if (!valid_name(name)) {
      throw std::invalid_argument("tool name '" + name +
                                  "' cannot be written in Gemma-4's call syntax (letters, digits, _ . - only)");
    }
    if (std::count(out.tool_names.begin(), out.tool_names.end(), name)) {
      throw std::invalid_argument("tool '" + name + "' is declared twice");
    }
    out.tool_names.push_back(name);
  }
  out.tools = tools;
}

void read_tool_choice(const json& choice, RequestOptions& out) {
  if (choice.is_null()) return;
  if (choice.is_string()) {
    const std::string s = choice.get<std::string>();
    if (s == "auto") out.tool_choice = ToolChoice::kAuto;
    else if (s == "none") out.tool_choice = ToolChoice::kNone;
    else if (s == "required") out.tool_choice = ToolChoice::kRequired;
    else throw std::invalid_argument("tool_choice must be \"auto\", \"none\", \"required\" or a function, not \"" + s + "\"");
  } else if (choice.is_object() && choice.contains("function") && choice["function"].is_object() &&
             choice["function"].contains("name") && choice["function"]["name"].is_string()) {
    out.tool_choice = ToolChoice::kNamed;
    out.named_function = choice["function"]["name"].get<std::string>();
    if (!std::count(out.tool_names.begin(), out.tool_names.end(), out.named_function)) {
      throw std::invalid_argument("tool_choice names function '" + out.named_function +
                                  "', which is not among the request's tools");
    }
  } else {
    throw std::invalid_argument("tool_choice must be a string or {\"type\": \"function\", \"function\": {\"name\": ...}}");
  }
  if (out.tool_choice == ToolChoice::kRequired && out.tool_names.empty()) {
    throw std::invalid_argument("tool_choice \"required\" needs at least one tool");
  }
}

void read_response_format(const json& format, RequestOptions& out) {
  if (format.is_null()) return;
  if (!format.is_object() || !format.contains("type") || !format["type"].is_string()) {
    throw std::invalid_argument("response_format must be an object with a \"type\"");
  }
  const std::string type = format["type"].get<std::string>();
  if (type == "text") return;
  if (type == "json_object") {
    out.format = ResponseFormat::kJsonObject;
  } else if (type == "json_schema") {
    const json* js = format.contains("json_schema") ? &format["json_schema"] : nullptr;
    if (!js || !js->is_object() || !js->contains("schema")) {
      throw std::invalid_argument("response_format json_schema needs json_schema.schema");
    }
    out.format = ResponseFormat::kJsonSchema;
    out.format_schema = (*js)["schema"];
  } else {
    throw std::invalid_argument("unknown response_format type \"" + type + "\"");
  }
}

// The seat's options for this parser: `key = integer` lines of TOML (the
// only form its options take; other keys are left to other readers).  Read
// by hand so the plugin needs no TOML library at run time.
void read_limits(std::string_view options_toml, GrammarLimits& limits) {
  const std::pair<std::string_view, uint32_t*> known[] = {
      {"max_string_bytes", &limits.max_string_bytes}, {"max_thought_bytes", &limits.max_thought_bytes},
      {"max_array_items", &limits.max_array_items},   {"max_calls", &limits.max_calls},
      {"any_depth", &limits.any_depth},               {"max_free_keys", &limits.max_free_keys}};
  const auto trim = [](std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
    return v;
  };
  while (!options_toml.empty()) {
    const size_t eol = options_toml.find('\n');
    std::string_view line = options_toml.substr(0, eol);
    options_toml.remove_prefix(eol == std::string_view::npos ? options_toml.size() : eol + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, eq));
    std::string_view value = line.substr(eq + 1);
    value = trim(value.substr(0, value.find('#')));
    for (const auto& [name, field] : known) {
      if (key != name) continue;
      uint64_t v = 0;
      const bool digits = !value.empty() && value.size() <= 8 &&
                          std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
      for (char c : value) v = v * 10 + static_cast<uint64_t>(c - '0');
      if (!digits || v < 1 || v > (1u << 24)) {
        throw std::invalid_argument("parser option " + std::string(name) + " must be an integer from 1 to 16777216");
      }
      *field = static_cast<uint32_t>(v);
    }
  }
}

}  // namespace

bool prompt_ends_in_channel(std::string_view tail, bool* wrote_label) {
  constexpr std::string_view kScanned[] = {kChannelOpen,  kChannelClose, kToolCallOpen, kToolCallClose,
                                           "<|turn>",     "<turn|>",     "<|tool_response>",
                                           "<tool_response|>"};
  size_t best = std::string_view::npos;
  std::string_view last;
  for (std::string_view m : kScanned) {
    const size_t at = tail.rfind(m);
    if (at != std::string_view::npos && (best == std::string_view::npos || at > best)) {
      best = at;
      last = m;
    }
  }
  if (last != kChannelOpen) return false;
  if (wrote_label) *wrote_label = best + kChannelOpen.size() < tail.size();
  return true;
}

RequestOptions read_request(std::string_view options_toml, const seatrt_parser_request& request) {
  RequestOptions out;
  read_limits(options_toml, out.limits);
  read_tools(parse_json(request.tools_json, "tools"), out);
  read_tool_choice(parse_json(request.tool_choice_json, "tool_choice"), out);
  read_response_format(parse_json(request.response_format_json, "response_format"), out);
  const json kwargs = parse_json(request.chat_template_kwargs_json, "chat_template_kwargs");
  if (kwargs.is_object()) {
    auto it = kwargs.find("enable_thinking");
    if (it != kwargs.end() && it->is_boolean()) out.enable_thinking = it->get<bool>();
  }
  // (SEATRT_HAS_FIELD's NULL test, on a reference, would not compile cleanly.)
  if (request.struct_size >= offsetof(seatrt_parser_request, parallel_tool_calls) + sizeof(int32_t))
    out.parallel_calls = request.parallel_tool_calls != 0;
  if (request.prompt_tail && request.prompt_tail_len > 0) {
    out.prompt_in_channel = prompt_ends_in_channel(
        std::string_view(request.prompt_tail, request.prompt_tail_len), &out.prompt_wrote_label);
  }
  return out;
}

}  // namespace seatrt::parsers::gemma4
