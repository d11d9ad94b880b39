// Reading a seat file: one function per section, each declaring every key
// it knows (so anything else is an unknown key) and checking values.
#include <fstream>
#include <limits>
#include <sstream>

#include "seatrt/host/seat_config.hpp"
#include "seatrt/host/regular_file.hpp"
#include "seatrt/host/status.hpp"
#include "toml_reader.hpp"

namespace fs = std::filesystem;

namespace seatrt::host {
namespace {

using detail::TableReader;
constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

fs::path resolve(const fs::path& dir, const std::string& p) {
  return (fs::path(p).is_absolute() ? fs::path(p) : dir / p).lexically_normal();
}

void require_one_of(TableReader& r, const std::string& key, const std::string& value,
                    std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return;
    list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
  }
  r.fail(key, "must be one of " + list + ", found \"" + value + "\"");
}

bool is_env_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

void read_seat(TableReader& r, SeatSection& s) {
  if (auto v = r.string("name")) s.name = *v;
  if (auto v = r.strings("served_model_names")) s.served_model_names = *v;
  r.reject_unknown_keys();
  if (s.name.empty()) r.fail("name", "is required (a non-empty string)");
  if (s.served_model_names.empty()) s.served_model_names.push_back(s.name);
  for (std::size_t i = 0; i < s.served_model_names.size(); ++i) {
    if (s.served_model_names[i].empty()) r.fail("served_model_names", "names must not be empty");
    for (std::size_t j = 0; j < i; ++j)
      if (s.served_model_names[i] == s.served_model_names[j])
        r.fail("served_model_names", "'" + s.served_model_names[i] + "' is listed twice");
  }
}

void read_server(TableReader& r, ServerSection& s) {
  if (auto v = r.string("host")) s.host = *v;
  if (auto v = r.integer("port", 1, 65535)) s.port = static_cast<int>(*v);
  if (auto v = r.string("api_key_env")) {
    if (!is_env_name(*v))
      r.fail("api_key_env", "must be the NAME of an environment variable (letters, digits, _), "
                            "found \"" + *v + "\"");
    s.api_key_env = *v;
  }
  // 0 would refuse every request (and the readiness canary) with 429.
  if (auto v = r.integer("max_queue", 1, kMaxInt)) s.max_queue = *v;
  if (auto v = r.number("drain_timeout_s", 0.0)) s.drain_timeout_s = *v;
  if (auto v = r.number("request_timeout_s", 0.0)) s.request_timeout_s = *v;
  if (auto v = r.integer("max_connections", 1, kMaxInt)) s.max_connections = *v;
  if (auto v = r.number("idle_timeout_s", 0.0)) s.idle_timeout_s = *v;
  r.reject_unknown_keys();
  if (s.host.empty()) r.fail("host", "must not be empty");
}

void read_model(TableReader& r, const fs::path& dir, ModelSection& m) {
  if (auto v = r.string("path")) m.path = resolve(dir, *v);
  if (auto v = r.string("architecture")) m.architecture = *v;
  if (auto v = r.string("quantization")) m.quantization = *v;
  if (auto v = r.integer("max_model_len", 0, kMaxInt64)) m.max_model_len = *v;
  if (auto v = r.string("chat_template")) m.chat_template = resolve(dir, *v);
  if (auto v = r.string("tokenizer")) m.tokenizer = resolve(dir, *v);
  if (const toml::table* t = r.table("options")) m.options_toml = detail::to_toml_text(*t);
  r.reject_unknown_keys();
  if (m.path.empty()) r.fail("path", "is required (the checkpoint directory)");
  if (m.architecture.empty()) r.fail("architecture", "must be \"auto\" or a plugin name");
  if (m.quantization.empty()) r.fail("quantization", "must be \"auto\", \"none\" or a plugin name");
}

void read_kernels(TableReader& r, KernelsSection& k) {
  if (auto v = r.string("provider")) k.provider = *v;
  if (auto v = r.integer("device", 0, 1024)) k.device = static_cast<int>(*v);
  if (auto v = r.string("fallback")) k.fallback = *v == "none" ? "" : *v;
  if (const toml::table* t = r.table("options")) k.options_toml = detail::to_toml_text(*t);
  if (auto v = r.boolean("graphs")) k.graphs = *v;
  k.reserve_workspace = r.boolean("reserve_workspace");
  r.reject_unknown_keys();
  if (k.provider.empty()) r.fail("provider", "must be \"auto\" or a plugin name");
}

void read_cache(TableReader& r, CacheSection& c) {
  c.kv_cache_memory = r.integer("kv_cache_memory", 1, kMaxInt64);
  c.kv_cache_max_context_multiple = r.number("kv_cache_max_context_multiple", 0.0);
  if (auto v = r.string("kv_cache_dtype")) {
    require_one_of(r, "kv_cache_dtype", *v, {"fp8", "bf16", "fp32", "auto"});
    c.kv_cache_dtype = *v;
  }
  if (auto v = r.integer("block_size", 1, 4096)) {
    if ((*v & (*v - 1)) != 0) r.fail("block_size", "must be a power of two");
    c.block_size = static_cast<int>(*v);
  }
  if (auto v = r.boolean("prefix_caching")) c.prefix_caching = *v;
  r.reject_unknown_keys();
  if (c.kv_cache_memory && c.kv_cache_max_context_multiple)
    r.fail("kv_cache_max_context_multiple",
           "give either kv_cache_memory (bytes) or kv_cache_max_context_multiple, not both");
}

void read_scheduler(TableReader& r, SchedulerSection& s) {
  if (auto v = r.integer("max_num_seqs", 1, 65536)) s.max_num_seqs = static_cast<int>(*v);
  if (auto v = r.integer("max_num_batched_tokens", 1, kMaxInt)) s.max_num_batched_tokens = *v;
  r.reject_unknown_keys();
}

void read_parsers(TableReader& r, ParsersSection& p) {
  if (auto v = r.string("tool")) p.tool = *v;
  if (auto v = r.string("reasoning")) p.reasoning = *v;
  if (auto v = r.boolean("exclude_tools_when_tool_choice_none"))
    p.exclude_tools_when_tool_choice_none = *v;
  if (const toml::table* t = r.table("chat_template_kwargs")) {
    std::ostringstream json;
    json << toml::json_formatter{*t};
    p.chat_template_kwargs = nlohmann::json::parse(json.str());
  }
  if (const toml::table* t = r.table("tool_options")) p.tool_options_toml = detail::to_toml_text(*t);
  if (const toml::table* t = r.table("reasoning_options"))
    p.reasoning_options_toml = detail::to_toml_text(*t);
  r.reject_unknown_keys();
}

void read_plugins(TableReader& r, const fs::path& dir, PluginsSection& p) {
  if (auto v = r.strings("search_paths"))
    for (const auto& s : *v) p.search_paths.push_back(resolve(dir, s));
  r.reject_unknown_keys();
}

void read_logging(TableReader& r, LoggingSection& l) {
  if (auto v = r.string("format")) {
    require_one_of(r, "format", *v, {"text", "json"});
    l.format = *v;
  }
  if (auto v = r.string("level")) {
    require_one_of(r, "level", *v, {"debug", "info", "warn", "error", "off"});
    l.level = *v;
  }
  r.reject_unknown_keys();
}

// Reads one [section] with `read` (which also receives extra args).
template <typename Fn>
void section(TableReader& root, const std::string& name, const std::string& file, Fn&& read) {
  static const toml::table kEmpty;
  const toml::table* t = root.table(name);
  TableReader r(t ? *t : kEmpty, name, file);
  read(r);
}

}  // namespace

SeatConfig parse_seat(std::string_view toml_text, const fs::path& source, const fs::path& dir) {
  const std::string file = source.string();
  toml::table doc;
  try {
    doc = toml::parse(toml_text, file);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw Error(SEATRT_ERR_INVALID_ARG, file + ":" + std::to_string(at.line) + ":" +
                                            std::to_string(at.column) + ": malformed TOML: " +
                                            std::string(e.description()));
  }
  SeatConfig seat;
  seat.file = source;
  seat.dir = fs::absolute(dir).lexically_normal();
  TableReader root(doc, "", file);
  section(root, "seat", file, [&](TableReader& r) { read_seat(r, seat.seat); });
  section(root, "server", file, [&](TableReader& r) { read_server(r, seat.server); });
  section(root, "model", file, [&](TableReader& r) { read_model(r, seat.dir, seat.model); });
  section(root, "kernels", file, [&](TableReader& r) { read_kernels(r, seat.kernels); });
  section(root, "cache", file, [&](TableReader& r) { read_cache(r, seat.cache); });
  section(root, "scheduler", file, [&](TableReader& r) { read_scheduler(r, seat.scheduler); });
  section(root, "parsers", file, [&](TableReader& r) { read_parsers(r, seat.parsers); });
  section(root, "plugins", file, [&](TableReader& r) { read_plugins(r, seat.dir, seat.plugins); });
  section(root, "logging", file, [&](TableReader& r) { read_logging(r, seat.logging); });
  root.reject_unknown_keys();
  return seat;
}

SeatConfig load_seat(const fs::path& file) {
  std::string text;
  const std::string why = read_regular_file(file, text);
  if (why == "does not exist")
    throw Error(SEATRT_ERR_NOT_FOUND, file.string() + ": cannot open the seat file: it does not exist");
  if (!why.empty()) throw Error(SEATRT_ERR_INVALID_ARG, file.string() + ": cannot read the seat file: it " + why);
  return parse_seat(text, file, fs::absolute(file).parent_path());
}

}  // namespace seatrt::host
