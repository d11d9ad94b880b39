#include "openai_request.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api_error.hpp"

namespace seatrt::server {

using nlohmann::json;

namespace {

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "value";
  }
}

[[noreturn]] void wrong_type(const std::string& field, const char* expected, const json& v) {
  throw bad_request("'" + field + "' must be " + expected + ", got " + type_name(v), field);
}

// logit_bias: {"<token id>": bias in [-100, 100], ...} into the
// ascending id/value lists the sample op takes.
void parse_logit_bias(const json& v, engine::SamplingParams& s) {
  if (v.is_null()) return;
  if (!v.is_object()) wrong_type("logit_bias", "an object mapping token ids to numbers", v);
  std::map<int32_t, float> bias;
  for (const auto& [key, value] : v.items()) {
    const std::string where = "logit_bias[\"" + key + "\"]";
    // A key is a token id in decimal (JSON keys are strings): "12", not
    // "-1", "0x1f", "1.0", " 7" or a word.
    const bool digits = !key.empty() && key.size() <= 10 &&
                        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoll(key) > INT32_MAX)
      throw bad_request("'logit_bias' keys must be token ids written in decimal; got \"" + key + "\"", "logit_bias");
    const auto id = static_cast<int32_t>(std::stoll(key));
    if (!value.is_number())
      throw bad_request("'" + where + "' must be a number from -100 to 100, got " + type_name(value), "logit_bias");
    const double b = value.get<double>();
    if (!(b >= -100.0 && b <= 100.0))
      throw bad_request("'" + where + "' must be from -100 to 100; got " + value.dump(), "logit_bias");
    if (!bias.emplace(id, static_cast<float>(b)).second)
      throw bad_request("'logit_bias' names token " + std::to_string(id) + " twice", "logit_bias");
  }
  s.bias_ids.clear();
  s.bias_values.clear();
  for (const auto& [id, b] : bias) {  // ascending ids, as the sample op wants them
    s.bias_ids.push_back(id);
    s.bias_values.push_back(b);
  }
}

// Reads the fields of one request object, remembering which are known.
class Fields {
 public:
  explicit Fields(const json& body) : body_(body) {
    if (!body_.is_object()) throw bad_request("the request body must be a JSON object, got " + std::string(type_name(body)));
  }

  // Present and not null.
  const json* get(const std::string& key) {
    known_.insert(key);
    auto it = body_.find(key);
    return it == body_.end() || it->is_null() ? nullptr : &*it;
  }
  std::optional<std::string> string(const std::string& key) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) wrong_type(key, "a string", *v);
    return v->get<std::string>();
  }
  std::optional<bool> boolean(const std::string& key) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) wrong_type(key, "a boolean", *v);
    return v->get<bool>();
  }
  std::optional<int64_t> integer(const std::string& key, int64_t min, int64_t max) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) wrong_type(key, "an integer", *v);
    // An unsigned value above int64's range would wrap into a negative one
    // (2^64 - 1 read as -1, "top-k off").
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw bad_request("'" + key + "' must be between " + std::to_string(min) + " and " + std::to_string(max) +
                            ", got " + std::to_string(v->get<uint64_t>()),
                        key);
    const auto x = v->get<int64_t>();
    if (x < min || x > max)
      throw bad_request("'" + key + "' must be between " + std::to_string(min) + " and " + std::to_string(max) +
                            ", got " + std::to_string(x), key);
    return x;
  }
  std::optional<double> number(const std::string& key, double min, double max) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) wrong_type(key, "a number", *v);
    const auto x = v->get<double>();
    if (!(x >= min && x <= max))
      throw bad_request("'" + key + "' must be between " + fmt(min) + " and " + fmt(max) + ", got " + fmt(x), key);
    return x;
  }
  void reject_unknown() const {
    for (auto it = body_.begin(); it != body_.end(); ++it)
      if (!known_.count(it.key())) throw bad_request("unknown field '" + it.key() + "'", it.key());
  }

 private:
  static std::string fmt(double x) {
    std::string s = std::to_string(x);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  const json& body_;
  std::set<std::string> known_;
};

// Fields both endpoints share.
void parse_common(Fields& f, GenerationParams& g) {
  auto model = f.string("model");
  if (!model) throw bad_request("'model' is required", "model");
  g.model = *model;
  // 0 only means something to a completion that echoes its prompt (checked there).
  if (auto v = f.integer("max_tokens", 0, INT32_MAX)) g.max_tokens = *v;
  if (auto v = f.integer("max_completion_tokens", 0, INT32_MAX)) g.max_tokens = *v;
  if (auto v = f.number("temperature", 0, 2)) g.sampling.temperature = static_cast<float>(*v);
  // top_p and repetition_penalty are checked as the float the sampler gets:
  // 1e-300 is > 0 as a double but 0 as a float.
  if (auto v = f.number("top_p", 0, 1)) {
    g.sampling.top_p = static_cast<float>(*v);
    if (!(g.sampling.top_p > 0)) throw bad_request("'top_p' must be greater than 0 (as a float)", "top_p");
  }
  if (auto v = f.integer("top_k", -1, INT32_MAX)) g.sampling.top_k = *v < 0 ? 0 : static_cast<int32_t>(*v);
  if (auto v = f.number("min_p", 0, 1)) g.sampling.min_p = static_cast<float>(*v);
  if (auto v = f.number("presence_penalty", -2, 2)) g.sampling.presence_penalty = static_cast<float>(*v);
  if (auto v = f.number("frequency_penalty", -2, 2)) g.sampling.frequency_penalty = static_cast<float>(*v);
  if (auto v = f.number("repetition_penalty", 0, 100)) {
    g.sampling.repetition_penalty = static_cast<float>(*v);
    if (!(g.sampling.repetition_penalty > 0))
      throw bad_request("'repetition_penalty' must be greater than 0 (as a float)", "repetition_penalty");
  }
  if (const json* v = f.get("seed")) {
    if (!v->is_number_integer()) wrong_type("seed", "an integer", *v);
    g.sampling.seed = v->is_number_unsigned() ? v->get<uint64_t>() : static_cast<uint64_t>(v->get<int64_t>());
    g.seeded = true;
  }
  if (const json* v = f.get("stop")) {
    if (v->is_string()) {
      g.stop.push_back(v->get<std::string>());
    } else if (v->is_array()) {
      for (const auto& s : *v) {
        if (!s.is_string()) wrong_type("stop", "a string or an array of strings", *v);
        g.stop.push_back(s.get<std::string>());
      }
    } else {
      wrong_type("stop", "a string or an array of strings", *v);
    }
    for (const auto& s : g.stop)
      if (s.empty()) throw bad_request("'stop' strings must not be empty", "stop");
  }
  if (const json* v = f.get("stop_token_ids")) {
    if (!v->is_array()) wrong_type("stop_token_ids", "an array of integers", *v);
    for (const auto& t : *v) {
      if (!t.is_number_integer()) wrong_type("stop_token_ids", "an array of integers", *v);
      g.stop_token_ids.push_back(token_id_of(t, "stop_token_ids"));
    }
  }
  if (auto v = f.integer("n", 1, 16)) g.n = static_cast<int32_t>(*v);
  if (auto v = f.boolean("stream")) g.stream = *v;
  if (const json* v = f.get("stream_options")) {
    if (!v->is_object()) wrong_type("stream_options", "an object", *v);
    Fields so(*v);
    if (auto u = so.boolean("include_usage")) g.include_usage = *u;
    if (auto u = so.boolean("continuous_usage_stats")) g.continuous_usage = *u;
    so.reject_unknown();
    if (!g.stream) throw bad_request("'stream_options' is only allowed when 'stream' is true", "stream_options");
  }
  if (auto v = f.boolean("skip_special_tokens")) g.skip_special_tokens = *v;
  if (auto v = f.boolean("ignore_eos")) g.ignore_eos = *v;
  if (auto v = f.integer("min_tokens", 0, INT32_MAX)) g.min_tokens = *v;
  if (g.max_tokens && g.min_tokens > *g.max_tokens)
    throw bad_request("'min_tokens' (" + std::to_string(g.min_tokens) + ") must not exceed 'max_tokens' (" +
                          std::to_string(*g.max_tokens) + ")", "min_tokens");
  if (auto v = f.boolean("include_stop_str_in_output")) g.include_stop_str = *v;
  if (const json* v = f.get("allowed_token_ids")) {
    if (!v->is_array() || v->empty()) wrong_type("allowed_token_ids", "a non-empty array of token ids", *v);
    for (const auto& t : *v) {
      if (!t.is_number_integer()) wrong_type("allowed_token_ids", "a non-empty array of token ids", *v);
      g.allowed_token_ids.push_back(token_id_of(t, "allowed_token_ids"));
    }
  }
  if (auto v = f.integer("truncate_prompt_tokens", -1, INT32_MAX)) {
    if (*v == 0) throw bad_request("'truncate_prompt_tokens' must be -1 (max_model_len) or at least 1", "truncate_prompt_tokens");
    g.truncate_prompt_tokens = *v;
  }
  if (auto v = f.boolean("return_tokens_as_token_ids")) g.tokens_as_ids = *v;
  // Accepted and ignored: they do not change what is generated.
  f.get("user");
  f.get("metadata");
  f.get("store");
  f.get("service_tier");
  if (const json* v = f.get("logit_bias")) parse_logit_bias(*v, g.sampling);
}

void validate_messages(const json& messages) {
  if (!messages.is_array()) wrong_type("messages", "an array", messages);
  if (messages.empty()) throw bad_request("'messages' must not be empty", "messages");
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) wrong_type(where, "an object", m);
    auto role = m.find("role");
    if (role == m.end() || !role->is_string())
      throw bad_request("'" + where + ".role' is required and must be a string", where + ".role");
    static const std::set<std::string> roles{"system", "developer", "user", "assistant", "tool"};
    if (!roles.count(role->get<std::string>()))
      throw bad_request("'" + where + ".role' must be one of system, developer, user, assistant, tool; got '" +
                            role->get<std::string>() + "'", where + ".role");
    auto content = m.find("content");
    if (content == m.end() || content->is_null() || content->is_string()) continue;
    if (!content->is_array()) wrong_type(where + ".content", "a string or an array of content parts", *content);
    for (size_t j = 0; j < content->size(); ++j) {
      const auto& part = (*content)[j];
      const std::string pw = where + ".content[" + std::to_string(j) + "]";
      if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
        throw bad_request("'" + pw + "' must be an object with a string 'type'", pw);
      const auto type = part["type"].get<std::string>();
      if (type == "image_url" || type == "input_image" || type == "image")
        throw bad_request("'" + pw + "' is an image: this seat does not accept image inputs yet (vision is not served)", pw);
      if (type != "text") throw bad_request("'" + pw + ".type' '" + type + "' is not supported (only 'text')", pw);
      if (!part.contains("text") || !part["text"].is_string())
        throw bad_request("'" + pw + ".text' must be a string", pw);
    }
  }
}

// The field an error about the token limit names: max_completion_tokens wins
// when both are sent, and a null counts as absent.
const char* max_tokens_field(const json& body) {
  const auto it = body.find("max_completion_tokens");
  return it != body.end() && !it->is_null() ? "max_completion_tokens" : "max_tokens";
}

}  // namespace

int32_t token_id_of(const json& t, const std::string& field) {
  // Range-checked before narrowing: 2^32 + 1 must not become id 1.
  const bool in_range = t.is_number_unsigned() ? t.get<uint64_t>() <= uint64_t{INT32_MAX}
                                               : t.get<int64_t>() >= INT32_MIN && t.get<int64_t>() <= INT32_MAX;
  if (!in_range) throw bad_request("'" + field + "' holds a token id outside the vocabulary: " + t.dump(), field);
  return static_cast<int32_t>(t.get<int64_t>());
}

namespace {
// Depth of the deepest array/object nesting, without recursion (the check
// exists because recursive consumers of the body would overflow the stack).
size_t nesting_depth(const json& root) {
  size_t deepest = 0;
  std::vector<std::pair<const json*, size_t>> todo{{&root, 1}};
  while (!todo.empty()) {
    const auto [j, depth] = todo.back();
    todo.pop_back();
    if (!j->is_structured()) continue;
    deepest = std::max(deepest, depth);
    if (depth > kMaxJsonDepth) return depth;
    for (const auto& child : *j) todo.emplace_back(&child, depth + 1);
  }
  return deepest;
}
}  // namespace

json parse_json_body(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    // parse_error quotes the bytes it stopped at, which may not be UTF-8;
    // out_of_range is a number too large for a double (1e400).
    throw bad_request(std::string("the request body is not valid JSON: ") + e.what());
  }
  if (nesting_depth(j) > kMaxJsonDepth)
    throw bad_request("the request body nests arrays/objects deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  return j;
}

ChatRequest parse_chat_request(const json& body) {
  Fields f(body);
  ChatRequest r;
  parse_common(f, r.gen);
  if (r.gen.max_tokens && *r.gen.max_tokens == 0) {
    const char* field = max_tokens_field(body);
    throw bad_request(std::string("'") + field + "' must be at least 1", field);
  }
  const json* messages = f.get("messages");
  if (!messages) throw bad_request("'messages' is required", "messages");
  validate_messages(*messages);
  r.messages = *messages;
  if (auto v = f.boolean("logprobs")) r.gen.logprobs = *v;
  if (auto v = f.integer("top_logprobs", 0, 20)) {
    r.gen.top_logprobs = static_cast<int32_t>(*v);
    if (!r.gen.logprobs && *v > 0) throw bad_request("'top_logprobs' requires 'logprobs': true", "top_logprobs");
  }
  if (const json* v = f.get("tools")) {
    if (!v->is_array()) wrong_type("tools", "an array", *v);
    for (size_t i = 0; i < v->size(); ++i) {
      const auto& t = (*v)[i];
      const std::string w = "tools[" + std::to_string(i) + "]";
      if (!t.is_object() || t.value("type", "") != "function" || !t.contains("function") ||
          !t["function"].is_object() || !t["function"].contains("name") || !t["function"]["name"].is_string())
        throw bad_request("'" + w + "' must be {\"type\": \"function\", \"function\": {\"name\": ...}}", w);
    }
    r.tools = *v;
  }
  if (const json* v = f.get("tool_choice")) {
    if (v->is_string()) {
      const auto s = v->get<std::string>();
      if (s != "auto" && s != "none" && s != "required")
        throw bad_request("'tool_choice' must be 'auto', 'none', 'required' or a named function, got '" + s + "'",
                          "tool_choice");
    } else if (!v->is_object() || !v->contains("function") || !(*v)["function"].is_object() ||
               !(*v)["function"].contains("name") || !(*v)["function"]["name"].is_string()) {
      throw bad_request("'tool_choice' object must be {\"type\": \"function\", \"function\": {\"name\": ...}}",
                        "tool_choice");
    }
    if (r.tools.is_null() && !(v->is_string() && v->get<std::string>() == "none"))
      throw bad_request("'tool_choice' requires 'tools'", "tool_choice");
    r.tool_choice = *v;
  }
  if (const json* v = f.get("parallel_tool_calls"); v && !v->is_null()) {
    if (!v->is_boolean()) wrong_type("parallel_tool_calls", "a boolean", *v);
    r.parallel_tool_calls = v->get<bool>();
  }
  if (const json* v = f.get("response_format")) {
    if (!v->is_object() || !v->contains("type") || !(*v)["type"].is_string())
      throw bad_request("'response_format' must be an object with a string 'type'", "response_format");
    r.response_format = *v;
  }
  r.chat_template_kwargs = json::object();
  if (const json* v = f.get("chat_template_kwargs")) {
    if (!v->is_object()) wrong_type("chat_template_kwargs", "an object", *v);
    // The template and the reasoning parser must read it alike: the
    // template takes any truthy value, the parser a boolean.
    if (v->contains("enable_thinking") && !(*v)["enable_thinking"].is_boolean())
      wrong_type("chat_template_kwargs.enable_thinking", "a boolean", (*v)["enable_thinking"]);
    r.chat_template_kwargs = *v;
  }
  if (auto v = f.boolean("add_generation_prompt")) r.add_generation_prompt = *v;
  if (auto v = f.boolean("continue_final_message")) r.continue_final_message = *v;
  if (auto v = f.boolean("echo")) r.echo = *v;
  if (r.continue_final_message) {
    // As vLLM: the two ask for opposite prompts, and add_generation_prompt
    // defaults to true, so a continuation must turn it off explicitly.
    if (r.add_generation_prompt)
      throw bad_request("'continue_final_message' and 'add_generation_prompt' cannot both be true: send "
                        "\"add_generation_prompt\": false to continue the final message",
                        "continue_final_message");
    // A constrained output is matched from the start of the answer, which
    // here began in the prompt: the constraint could not see that part.
    const bool constrained_format =
        r.response_format.is_object() && r.response_format["type"] != "text";
    const bool forced_tool = r.tool_choice.is_object() || r.tool_choice == "required";
    if (constrained_format || forced_tool)
      throw bad_request(std::string("'continue_final_message' cannot be combined with ") +
                            (constrained_format ? "a constrained 'response_format'" : "a forced 'tool_choice'") +
                            ": the constraint would not see the part of the answer already in the prompt",
                        constrained_format ? "response_format" : "tool_choice");
  }
  f.reject_unknown();
  return r;
}

CompletionRequest parse_completion_request(const json& body) {
  Fields f(body);
  CompletionRequest r;
  parse_common(f, r.gen);
  const json* prompt = f.get("prompt");
  if (!prompt) throw bad_request("'prompt' is required", "prompt");
  const char* shapes = "a string, an array of strings, an array of token ids or an array of arrays of token ids";
  auto ids_of = [&](const json& a) {
    CompletionRequest::Prompt p;
    for (const auto& t : a) {
      if (!t.is_number_integer()) wrong_type("prompt", shapes, *prompt);
      p.ids.push_back(token_id_of(t, "prompt"));
    }
    return p;
  };
  if (prompt->is_string()) {
    r.prompts.push_back({prompt->get<std::string>(), {}});
  } else if (!prompt->is_array() || prompt->empty()) {
    throw bad_request(std::string("'prompt' must be ") + shapes + " (not empty)", "prompt");
  } else if ((*prompt)[0].is_number_integer()) {
    r.prompts.push_back(ids_of(*prompt));
  } else {
    for (const auto& p : *prompt) {
      if (p.is_string()) {
        r.prompts.push_back({p.get<std::string>(), {}});
      } else if (p.is_array() && !p.empty()) {
        r.prompts.push_back(ids_of(p));
      } else {
        throw bad_request(std::string("'prompt' must be ") + shapes + "; an element is neither a string nor a "
                          "non-empty array of token ids", "prompt");
      }
    }
  }
  if (auto v = f.integer("logprobs", 0, 20)) {
    r.gen.logprobs = true;
    r.gen.top_logprobs = static_cast<int32_t>(*v);
  }
  if (auto v = f.boolean("echo")) r.gen.echo = *v;
  if (r.gen.max_tokens && *r.gen.max_tokens == 0 && !r.gen.echo) {
    const std::string field = max_tokens_field(body);
    throw bad_request("'" + field + "' must be at least 1 (0, the prompt alone, only with 'echo')", field);
  }
  f.reject_unknown();
  return r;
}

}  // namespace seatrt::server
