// A seat: one endpoint + one model, described by one TOML file.  The schema
// (every key, its type and default) is documented in configs/README.md.
//
// load_seat() validates everything it can without touching plugins or the
// checkpoint: unknown keys are errors with the closest valid key suggested,
// wrong types name the key, the expected and the found type, malformed TOML
// reports file:line:column.  Each failure is an Error (INVALID_ARG) whose
// message is one line starting with the file name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace seatrt::host {

struct SeatSection {
  std::string name;                             // required
  std::vector<std::string> served_model_names;  // [0] primary; rest aliases; default {name}
};

struct ServerSection {
  std::string host = "127.0.0.1";
  int port = 8000;                          // 1..65535
  std::optional<std::string> api_key_env;  // env var holding the key; absent = no auth
  int64_t max_queue = 256;                 // waiting requests before 429
  double drain_timeout_s = 30.0;           // SIGTERM: how long in-flight requests may finish
  double request_timeout_s = 600.0;
  int64_t max_connections = 1024;          // open connections; more get 503 and are closed
  double idle_timeout_s = 60.0;            // a connection silent this long while a request is awaited is closed
};

struct ModelSection {
  std::filesystem::path path;               // absolute (resolved against the seat file's dir)
  std::string architecture = "auto";        // "auto" or a plugin name/path
  std::string quantization = "auto";        // "auto", "none" or a plugin name/path
  int64_t max_model_len = 0;                // 0 = the model's max_position_embeddings
  std::optional<std::filesystem::path> chat_template;  // absolute; absent = the model's own
  std::optional<std::filesystem::path> tokenizer;      // absolute; absent = <path>/tokenizer.json
  std::string options_toml;                 // [model.options] as TOML text ("" when absent)
};

struct KernelsSection {
  std::string provider = "auto";  // "auto" (highest probe score) or a plugin name/path
  int device = 0;
  std::string fallback = "cpu";   // provider for NULL ops; "" or "none" = no fallback
  std::string options_toml;       // [kernels.options] as TOML text
  bool graphs = true;             // replay decode steps as captured graphs where the provider can
  // Run the largest steps once at load so the provider's working memory is
  // allocated (and measured) before the seat is ready
  // (engine/workspace_reserve.hpp).  Absent = on for a device provider, off
  // for the CPU provider (its per-call memory is freed after each call).
  std::optional<bool> reserve_workspace;
};

struct CacheSection {
  // Exactly one of the two sizes may be given; neither = 2x max context.
  std::optional<int64_t> kv_cache_memory;               // bytes
  std::optional<double> kv_cache_max_context_multiple;  // pool tokens / max_model_len
  std::string kv_cache_dtype = "auto";                  // "fp8" | "bf16" | "auto"
  int block_size = 16;
  bool prefix_caching = true;
};

struct SchedulerSection {
  int max_num_seqs = 256;
  int64_t max_num_batched_tokens = 8192;
};

struct ParsersSection {
  std::string tool;       // plugin name/path, "" = none
  std::string reasoning;  // plugin name/path, "" = none
  bool exclude_tools_when_tool_choice_none = false;
  nlohmann::json chat_template_kwargs = nlohmann::json::object();  // default template kwargs
  std::string tool_options_toml;       // [parsers.tool_options] as TOML text
  std::string reasoning_options_toml;  // [parsers.reasoning_options] as TOML text
};

struct PluginsSection {
  // Absolute (resolved against the seat file's dir).  Empty = the default
  // paths (see default_plugin_search_paths()).
  std::vector<std::filesystem::path> search_paths;
};

struct LoggingSection {
  std::string format = "text";  // "text" | "json"
  std::string level = "info";   // "debug" | "info" | "warn" | "error" | "off"
};

struct SeatConfig {
  std::filesystem::path file;  // the seat file as given
  std::filesystem::path dir;   // absolute directory relative paths resolve against
  SeatSection seat;
  ServerSection server;
  ModelSection model;
  KernelsSection kernels;
  CacheSection cache;
  SchedulerSection scheduler;
  ParsersSection parsers;
  PluginsSection plugins;
  LoggingSection logging;
};

// Reads and validates a seat file.  Throws Error (one line) on any problem,
// including an unreadable file.
SeatConfig load_seat(const std::filesystem::path& file);

// Same, from text: `source` names it in messages, `dir` resolves relative
// paths.
SeatConfig parse_seat(std::string_view toml_text, const std::filesystem::path& source,
                      const std::filesystem::path& dir);

// The resolved seat as TOML text (every key, defaults filled in): what
// `seatrt check` prints and GET /v1/seat reports.
std::string seat_to_toml(const SeatConfig& seat);

}  // namespace seatrt::host
