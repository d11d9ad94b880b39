#include "responses_request.hpp"

#include <set>
#include <string>

#include "api_error.hpp"

namespace seatrt::server {

namespace {

using ojson = nlohmann::ordered_json;

[[noreturn]] void refuse(const std::string& field, const std::string& why) {
  throw bad_request("'" + field + "' " + why, field);
}

const ojson* get(const ojson& body, const char* key) {
  auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::string string_at(const ojson& v, const std::string& where) {
  if (!v.is_string()) refuse(where, "must be a string");
  return v.get<std::string>();
}

// A message's content: a string, or parts of text.  Returns the chat form
// (a string, or [{"type": "text", "text": ...}]).
ojson message_content(const ojson& content, const std::string& where) {
  if (content.is_string()) return content;
  if (!content.is_array()) refuse(where, "must be a string or an array of content parts");
  ojson parts = ojson::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const auto& part = content[i];
    const std::string pw = where + "[" + std::to_string(i) + "]";
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
      refuse(pw, "must be an object with a string 'type'");
    const std::string type = part["type"].get<std::string>();
    if (type == "input_text" || type == "output_text") {
      parts.push_back({{"type", "text"}, {"text", string_at(part.value("text", ojson()), pw + ".text")}});
    } else if (type == "refusal") {
      parts.push_back({{"type", "text"}, {"text", string_at(part.value("refusal", ojson()), pw + ".refusal")}});
    } else if (type == "input_image" || type == "input_file" || type == "input_audio") {
      refuse(pw + ".type", "'" + type + "' is not served: this seat takes text only (no vision, files or audio)");
    } else {
      refuse(pw + ".type", "'" + type + "' is not a content part this server knows");
    }
  }
  return parts;
}

// The text of a reasoning item: its reasoning_text content, else its summary.
std::string reasoning_text(const ojson& item, const std::string& where) {
  std::string text;
  for (const char* key : {"content", "summary"}) {
    const ojson* parts = get(item, key);
    if (!parts) continue;
    if (!parts->is_array()) refuse(where + "." + key, "must be an array");
    for (size_t i = 0; i < parts->size(); ++i) {
      const std::string pw = where + "." + key + "[" + std::to_string(i) + "]";
      if (!(*parts)[i].is_object()) refuse(pw, "must be an object with a string 'text'");
      text += string_at((*parts)[i].value("text", ojson()), pw + ".text");
    }
    if (!text.empty()) break;
  }
  return text;
}

// `input` as chat messages (after any instructions already in `messages`).
void input_messages(const ojson& input, ojson& messages) {
  if (input.is_string()) {
    messages.push_back({{"role", "user"}, {"content", input}});
    return;
  }
  if (!input.is_array() || input.empty()) refuse("input", "must be a string or a non-empty array of input items");
  // A reasoning item belongs to the assistant output right after it; several
  // in a turn (before its text, before its calls) are joined by a line break.
  // One followed by no assistant output (a user message or a tool's output
  // next, or the input's end) has no turn to go with: dropped.
  std::string pending_reasoning;
  auto attach_reasoning = [&](ojson& m) {
    if (pending_reasoning.empty()) return;
    const std::string before = m.contains("reasoning") ? m["reasoning"].get<std::string>() + "\n" : "";
    m["reasoning"] = before + pending_reasoning;
    pending_reasoning.clear();
  };
  auto assistant_turn = [&]() -> ojson& {
    // Function calls join the assistant message right before them (one
    // turn: text, then calls), else open one.
    if (messages.empty() || messages.back().value("role", "") != "assistant") {
      messages.push_back({{"role", "assistant"}});
    }
    ojson& m = messages.back();
    attach_reasoning(m);
    return m;
  };
  for (size_t i = 0; i < input.size(); ++i) {
    const auto& item = input[i];
    const std::string where = "input[" + std::to_string(i) + "]";
    if (!item.is_object()) refuse(where, "must be an object");
    const std::string type = item.contains("type") ? string_at(item["type"], where + ".type") : "message";
    if (type == "message") {
      const std::string role = string_at(item.value("role", ojson()), where + ".role");
      if (role != "user" && role != "assistant" && role != "system" && role != "developer")
        refuse(where + ".role", "must be user, assistant, system or developer; got '" + role + "'");
      if (!item.contains("content")) refuse(where + ".content", "is required");
      ojson m = {{"role", role}, {"content", message_content(item["content"], where + ".content")}};
      if (role == "assistant") attach_reasoning(m);
      pending_reasoning.clear();
      messages.push_back(std::move(m));
    } else if (type == "function_call") {
      ojson call = {{"id", string_at(item.value("call_id", ojson()), where + ".call_id")},
                    {"type", "function"},
                    {"function",
                     {{"name", string_at(item.value("name", ojson()), where + ".name")},
                      {"arguments", string_at(item.value("arguments", ojson()), where + ".arguments")}}}};
      ojson& turn = assistant_turn();
      if (!turn.contains("tool_calls")) turn["tool_calls"] = ojson::array();
      turn["tool_calls"].push_back(std::move(call));
    } else if (type == "function_call_output") {
      const ojson* output = get(item, "output");
      if (!output) refuse(where + ".output", "is required");
      std::string text;
      if (output->is_string()) {
        text = output->get<std::string>();
      } else {
        for (const auto& part : message_content(*output, where + ".output")) text += part["text"].get<std::string>();
      }
      pending_reasoning.clear();
      messages.push_back({{"role", "tool"},
                          {"tool_call_id", string_at(item.value("call_id", ojson()), where + ".call_id")},
                          {"content", text}});
    } else if (type == "reasoning") {
      const std::string text = reasoning_text(item, where);
      if (!text.empty()) pending_reasoning += (pending_reasoning.empty() ? "" : "\n") + text;
    } else {
      refuse(where + ".type", "'" + type + "' is not served (message, function_call, function_call_output and "
                              "reasoning items are; nothing is stored, so item_reference has nothing to refer to)");
    }
  }
}

// The chat form of `tools`; *echo receives them as the Response repeats
// them (the checked fields only).
ojson chat_tools(const ojson& tools, ojson* echo) {
  if (!tools.is_array()) refuse("tools", "must be an array");
  ojson out = ojson::array();
  *echo = ojson::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const auto& t = tools[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    if (!t.is_object()) refuse(where, "must be an object");
    const std::string type = string_at(t.value("type", ojson()), where + ".type");
    if (type != "function") refuse(where + ".type", "'" + type + "' is not served: only function tools are");
    ojson fn = {{"name", string_at(t.value("name", ojson()), where + ".name")}};
    ojson repeated = {{"type", "function"}, {"name", fn["name"]}};
    if (const ojson* d = get(t, "description"))
      fn["description"] = repeated["description"] = string_at(*d, where + ".description");
    if (const ojson* p = get(t, "parameters")) {
      if (!p->is_object()) refuse(where + ".parameters", "must be a JSON schema object");
      fn["parameters"] = repeated["parameters"] = *p;
    }
    if (const ojson* s = get(t, "strict")) {
      if (!s->is_boolean()) refuse(where + ".strict", "must be a boolean");
      repeated["strict"] = *s;
    }
    echo->push_back(std::move(repeated));
    out.push_back({{"type", "function"}, {"function", std::move(fn)}});
  }
  return out;
}

ojson chat_tool_choice(const ojson& choice) {
  if (choice.is_string()) return choice;  // auto / none / required: the chat checks apply
  if (!choice.is_object()) refuse("tool_choice", "must be a string or an object");
  const std::string type = string_at(choice.value("type", ojson()), "tool_choice.type");
  if (type != "function") refuse("tool_choice.type", "'" + type + "' is not served: only 'function' is");
  return {{"type", "function"}, {"function", {{"name", string_at(choice.value("name", ojson()), "tool_choice.name")}}}};
}

ojson chat_response_format(const ojson& text) {
  if (!text.is_object()) refuse("text", "must be an object");
  for (const auto& [key, value] : text.items())
    if (key != "format" && key != "verbosity") refuse("text." + key, "is not a field of 'text'");
  const ojson* format = get(text, "format");
  if (!format) return nullptr;
  if (!format->is_object()) refuse("text.format", "must be an object");
  const std::string type = string_at(format->value("type", ojson()), "text.format.type");
  if (type == "text") return nullptr;
  if (type == "json_object") return {{"type", "json_object"}};
  if (type != "json_schema") refuse("text.format.type", "must be text, json_object or json_schema; got '" + type + "'");
  const ojson* schema = get(*format, "schema");
  if (!schema) refuse("text.format.schema", "is required for json_schema");
  if (!schema->is_object()) refuse("text.format.schema", "must be a JSON schema object");
  const ojson* name = get(*format, "name");
  ojson js = {{"name", name ? ojson(string_at(*name, "text.format.name")) : ojson("response")}, {"schema", *schema}};
  if (const ojson* strict = get(*format, "strict")) {
    if (!strict->is_boolean()) refuse("text.format.strict", "must be a boolean");
    js["strict"] = *strict;
  }
  if (const ojson* d = get(*format, "description")) (void)string_at(*d, "text.format.description");
  return {{"type", "json_schema"}, {"json_schema", std::move(js)}};
}

// Fields the chat endpoint takes under the same name (vLLM's sampling
// extensions included), copied as sent.
const std::set<std::string> kSameAsChat = {"model", "temperature", "top_p", "stream", "parallel_tool_calls",
                                           "user", "metadata", "service_tier", "seed", "top_k", "min_p",
                                           "repetition_penalty", "presence_penalty", "frequency_penalty", "stop"};
// Accepted and without effect here (said in docs/api.md).
const std::set<std::string> kIgnored = {"store", "stream_options", "prompt_cache_key", "safety_identifier"};
// Refused: they need state or services this server does not have.
const std::set<std::string> kNotServed = {"previous_response_id", "conversation", "prompt", "max_tool_calls"};

}  // namespace

ResponsesTranslation translate_responses_request(const ojson& body) {
  if (!body.is_object()) throw bad_request("the request body must be a JSON object");
  static const std::set<std::string> kOwn = {"input", "instructions", "max_output_tokens", "tools", "tool_choice",
                                             "text", "reasoning", "include", "top_logprobs", "truncation",
                                             "background"};
  for (const auto& [key, value] : body.items()) {
    if (kNotServed.count(key) && !value.is_null())
      refuse(key, "is not served: this server keeps no state between requests (send the whole conversation as "
                  "'input')");
    if (!kOwn.count(key) && !kSameAsChat.count(key) && !kIgnored.count(key) && !kNotServed.count(key))
      throw bad_request("unknown field '" + key + "'", key);
  }
  if (const ojson* b = get(body, "background"); b && !(b->is_boolean() && !b->get<bool>()))
    refuse("background", "is not served: responses are answered in the request, not stored for later");
  if (const ojson* t = get(body, "truncation"); t && *t != "disabled")
    refuse("truncation", "must be \"disabled\": an input longer than the context is refused, not cut");

  ResponsesTranslation out;
  ojson& chat = out.chat_body;
  chat = ojson::object();
  for (const auto& [key, value] : body.items())
    if (kSameAsChat.count(key) && !value.is_null()) chat[key] = value;

  ojson messages = ojson::array();
  const ojson* instructions = get(body, "instructions");
  if (instructions) messages.push_back({{"role", "system"}, {"content", string_at(*instructions, "instructions")}});
  const ojson* input = get(body, "input");
  if (!input) refuse("input", "is required");
  input_messages(*input, messages);
  chat["messages"] = std::move(messages);

  const ojson* tools = get(body, "tools");
  ojson tools_echo = ojson::array();
  if (tools) {
    ojson chat_form = chat_tools(*tools, &tools_echo);
    if (!chat_form.empty()) chat["tools"] = std::move(chat_form);
  }
  if (const ojson* choice = get(body, "tool_choice")) chat["tool_choice"] = chat_tool_choice(*choice);
  const ojson* text = get(body, "text");
  if (text) {
    ojson format = chat_response_format(*text);
    if (!format.is_null()) chat["response_format"] = std::move(format);
  }
  const ojson* reasoning = get(body, "reasoning");
  if (reasoning) {
    if (!reasoning->is_object()) refuse("reasoning", "must be an object");
    for (const auto& [key, value] : reasoning->items())
      if (key != "effort" && key != "summary" && key != "generate_summary")
        refuse("reasoning." + key, "is not a field of 'reasoning'");
    if (const ojson* effort = get(*reasoning, "effort")) {
      static const std::set<std::string> kEfforts = {"none", "minimal", "low", "medium", "high", "xhigh"};
      const std::string e = string_at(*effort, "reasoning.effort");
      if (!kEfforts.count(e)) refuse("reasoning.effort", "must be none, minimal, low, medium, high or xhigh");
      // The model thinks or does not: any effort but none turns it on.
      chat["chat_template_kwargs"] = {{"enable_thinking", e != "none"}};
    }
  }
  if (const ojson* m = get(body, "max_output_tokens")) {
    // Checked here so the error names the field the client sent.
    if (!m->is_number_integer() || (m->is_number_unsigned() ? m->get<uint64_t>() < 1 : m->get<int64_t>() < 1))
      refuse("max_output_tokens", "must be an integer of at least 1");
    chat["max_tokens"] = *m;
  }
  bool logprobs = false;
  if (const ojson* include = get(body, "include")) {
    if (!include->is_array()) refuse("include", "must be an array of strings");
    for (size_t i = 0; i < include->size(); ++i)
      logprobs |= string_at((*include)[i], "include[" + std::to_string(i) + "]") == "message.output_text.logprobs";
  }
  if (const ojson* top = get(body, "top_logprobs")) {
    chat["top_logprobs"] = *top;
    logprobs = true;
  }
  if (logprobs) chat["logprobs"] = true;

  // Checked here: the Response object repeats them, typed.
  const ojson* metadata = get(body, "metadata");
  if (metadata) {
    if (!metadata->is_object()) refuse("metadata", "must be an object of strings");
    for (const auto& [key, value] : metadata->items())
      if (!value.is_string()) refuse("metadata." + key, "must be a string");
  }
  const ojson* user = get(body, "user");
  if (user && !user->is_string()) refuse("user", "must be a string");

  // Absent and null read alike: the default.
  auto or_default = [&](const char* key, ojson fallback) {
    const ojson* v = get(body, key);
    return v ? *v : fallback;
  };
  ojson& echo = out.echo;
  echo["instructions"] = instructions ? *instructions : ojson();
  echo["max_output_tokens"] = or_default("max_output_tokens", nullptr);
  echo["metadata"] = metadata ? *metadata : ojson::object();
  echo["parallel_tool_calls"] = or_default("parallel_tool_calls", true);
  echo["previous_response_id"] = nullptr;
  echo["reasoning"] = {{"effort", reasoning ? reasoning->value("effort", ojson()) : ojson()}, {"summary", nullptr}};
  echo["store"] = false;  // nothing is stored, whatever was asked
  echo["temperature"] = or_default("temperature", 1.0);
  // The format as served (a json_schema's default name filled in).
  ojson format = {{"type", "text"}};
  if (chat.contains("response_format")) {
    const ojson& rf = chat["response_format"];
    format = {{"type", rf["type"]}};
    if (rf["type"] == "json_schema") {
      for (const auto& [key, value] : rf["json_schema"].items()) format[key] = value;
      if (const ojson* d = get((*text)["format"], "description")) format["description"] = *d;
    }
  }
  echo["text"] = {{"format", std::move(format)}};
  const ojson* choice = get(body, "tool_choice");  // checked above: a string, or a named function
  echo["tool_choice"] = !choice              ? ojson("auto")
                        : choice->is_object() ? ojson{{"type", "function"}, {"name", (*choice)["name"]}}
                                              : *choice;
  echo["tools"] = std::move(tools_echo);
  echo["top_p"] = or_default("top_p", 1.0);
  echo["truncation"] = "disabled";
  echo["user"] = user ? *user : ojson();
  return out;
}

}  // namespace seatrt::server
