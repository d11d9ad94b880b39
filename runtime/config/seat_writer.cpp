// The resolved seat back as TOML: every key with its effective value, so an
// operator sees exactly what will run (defaults included).
#include <sstream>

#include "seatrt/host/seat_config.hpp"
#include "toml_reader.hpp"

namespace seatrt::host {
namespace {

toml::array string_array(const std::vector<std::string>& items) {
  toml::array out;
  for (const auto& s : items) out.push_back(s);
  return out;
}

// A free table kept as TOML text, parsed back to nest it.
toml::table free_table(const std::string& text) {
  return text.empty() ? toml::table{} : toml::parse(text);
}

}  // namespace

std::string seat_to_toml(const SeatConfig& s) {
  toml::table seat{{"name", s.seat.name},
                   {"served_model_names", string_array(s.seat.served_model_names)}};
  toml::table server{{"host", s.server.host},
                     {"port", s.server.port},
                     {"max_queue", s.server.max_queue},
                     {"drain_timeout_s", s.server.drain_timeout_s},
                     {"request_timeout_s", s.server.request_timeout_s},
                     {"max_connections", s.server.max_connections},
                     {"idle_timeout_s", s.server.idle_timeout_s}};
  if (s.server.api_key_env) server.insert("api_key_env", *s.server.api_key_env);
  toml::table model{{"path", s.model.path.string()},
                    {"architecture", s.model.architecture},
                    {"quantization", s.model.quantization},
                    {"max_model_len", s.model.max_model_len},
                    {"options", free_table(s.model.options_toml)}};
  if (s.model.chat_template) model.insert("chat_template", s.model.chat_template->string());
  if (s.model.tokenizer) model.insert("tokenizer", s.model.tokenizer->string());
  toml::table kernels{{"provider", s.kernels.provider},
                      {"device", s.kernels.device},
                      {"fallback", s.kernels.fallback.empty() ? "none" : s.kernels.fallback},
                      {"graphs", s.kernels.graphs},
                      {"options", free_table(s.kernels.options_toml)}};
  if (s.kernels.reserve_workspace) kernels.insert("reserve_workspace", *s.kernels.reserve_workspace);
  toml::table cache{{"kv_cache_dtype", s.cache.kv_cache_dtype},
                    {"block_size", s.cache.block_size},
                    {"prefix_caching", s.cache.prefix_caching}};
  if (s.cache.kv_cache_memory) cache.insert("kv_cache_memory", *s.cache.kv_cache_memory);
  if (s.cache.kv_cache_max_context_multiple)
    cache.insert("kv_cache_max_context_multiple", *s.cache.kv_cache_max_context_multiple);
  toml::table scheduler{{"max_num_seqs", s.scheduler.max_num_seqs},
                        {"max_num_batched_tokens", s.scheduler.max_num_batched_tokens}};
  toml::table parsers{
      {"tool", s.parsers.tool},
      {"reasoning", s.parsers.reasoning},
      {"exclude_tools_when_tool_choice_none", s.parsers.exclude_tools_when_tool_choice_none},
      {"tool_options", free_table(s.parsers.tool_options_toml)},
      {"reasoning_options", free_table(s.parsers.reasoning_options_toml)}};
  toml::table kwargs;
  for (const auto& [key, value] : s.parsers.chat_template_kwargs.items()) {
    // Scalars only are meaningful template switches; anything else is kept
    // as its JSON text so nothing is silently dropped from the report.
    if (value.is_boolean()) kwargs.insert(key, value.get<bool>());
    else if (value.is_number_integer()) kwargs.insert(key, value.get<int64_t>());
    else if (value.is_number()) kwargs.insert(key, value.get<double>());
    else if (value.is_string()) kwargs.insert(key, value.get<std::string>());
    else kwargs.insert(key, value.dump());
  }
  parsers.insert("chat_template_kwargs", std::move(kwargs));
  toml::array search_paths;
  for (const auto& p : s.plugins.search_paths) search_paths.push_back(p.string());
  toml::table plugins{{"search_paths", std::move(search_paths)}};
  toml::table logging{{"format", s.logging.format}, {"level", s.logging.level}};

  toml::table doc{{"seat", seat},       {"server", server},       {"model", model},
                  {"kernels", kernels}, {"cache", cache},         {"scheduler", scheduler},
                  {"parsers", parsers}, {"plugins", plugins},     {"logging", logging}};
  std::ostringstream out;
  out << doc;
  return out.str();
}

}  // namespace seatrt::host
