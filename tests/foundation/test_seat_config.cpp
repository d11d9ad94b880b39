// Seat files: the schema, defaults, path resolution, and every kind of bad
// input, each giving one line that names file, position and key.
#include <catch2/catch.hpp>

#include <toml++/toml.h>

#include "seatrt/host/seat_config.hpp"
#include "seatrt/host/status.hpp"

using namespace seatrt::host;
namespace fs = std::filesystem;

namespace {

const char* const kMinimal = R"(
[seat]
name = "s"
[model]
path = "ckpt"
)";

SeatConfig parse(const std::string& text) { return parse_seat(text, "seat.toml", "/seats"); }

// The Error message parse() throws for `text` ("" if none).
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    CHECK(e.code() == SEATRT_ERR_INVALID_ARG);
    const std::string message = e.what();
    CHECK(message.find('\n') == std::string::npos);  // one line
    return message;
  }
  return "";
}

}  // namespace

TEST_CASE("a minimal seat gets the documented defaults") {
  const SeatConfig s = parse(kMinimal);
  CHECK(s.seat.name == "s");
  CHECK(s.seat.served_model_names == std::vector<std::string>{"s"});
  CHECK(s.server.host == "127.0.0.1");
  CHECK(s.server.port == 8000);
  CHECK_FALSE(s.server.api_key_env.has_value());
  CHECK(s.model.path == fs::path("/seats/ckpt"));
  CHECK(s.model.architecture == "auto");
  CHECK(s.model.quantization == "auto");
  CHECK(s.kernels.provider == "auto");
  CHECK(s.kernels.fallback == "cpu");
  CHECK_FALSE(s.cache.kv_cache_memory.has_value());
  CHECK(s.cache.kv_cache_dtype == "auto");
  CHECK(s.cache.block_size == 16);
  CHECK(s.cache.prefix_caching);
  CHECK(s.parsers.tool.empty());
  CHECK(s.parsers.chat_template_kwargs == nlohmann::json::object());
  CHECK(s.plugins.search_paths.empty());
  CHECK(s.logging.format == "text");
}

TEST_CASE("every key is read, relative paths resolve against the seat's directory") {
  const SeatConfig s = parse(R"(
[seat]
name = "x"
served_model_names = ["x", "alias"]
[server]
host = "0.0.0.0"
port = 9001
api_key_env = "MY_KEY"
max_queue = 5
drain_timeout_s = 2.5
request_timeout_s = 60
[model]
path = "/abs/ckpt"
architecture = "gemma4"
quantization = "none"
max_model_len = 1024
chat_template = "t/chat.jinja"
tokenizer = "../tok/tokenizer.json"
[model.options]
trace = true
[kernels]
provider = "cuda"
device = 1
fallback = "none"
reserve_workspace = false
[kernels.options]
graphs = false
[cache]
kv_cache_memory = 9114000000
kv_cache_dtype = "fp8"
block_size = 32
prefix_caching = false
[scheduler]
max_num_seqs = 32
max_num_batched_tokens = 2048
[parsers]
tool = "gemma4"
reasoning = "libparsers.so"
exclude_tools_when_tool_choice_none = true
[parsers.chat_template_kwargs]
enable_thinking = false
[parsers.tool_options]
strict = true
[parsers.reasoning_options]
x = 1
[plugins]
search_paths = ["p", "/abs/plugins"]
[logging]
format = "json"
level = "debug"
)");
  CHECK(s.seat.served_model_names == std::vector<std::string>{"x", "alias"});
  CHECK(s.server.port == 9001);
  CHECK(s.server.api_key_env == "MY_KEY");
  CHECK(s.server.max_queue == 5);
  CHECK(s.server.drain_timeout_s == Approx(2.5));
  CHECK(s.server.request_timeout_s == Approx(60));
  CHECK(s.model.path == fs::path("/abs/ckpt"));
  CHECK(s.model.chat_template == fs::path("/seats/t/chat.jinja"));
  CHECK(s.model.tokenizer == fs::path("/tok/tokenizer.json"));
  CHECK(s.model.max_model_len == 1024);
  CHECK(toml::parse(s.model.options_toml)["trace"].value<bool>() == true);
  CHECK(s.kernels.device == 1);
  CHECK(s.kernels.fallback.empty());
  CHECK(s.kernels.reserve_workspace == false);
  CHECK(toml::parse(s.kernels.options_toml)["graphs"].value<bool>() == false);
  CHECK(s.cache.kv_cache_memory == 9114000000);
  CHECK(s.cache.kv_cache_dtype == "fp8");
  CHECK(s.cache.block_size == 32);
  CHECK_FALSE(s.cache.prefix_caching);
  CHECK(s.scheduler.max_num_seqs == 32);
  CHECK(s.scheduler.max_num_batched_tokens == 2048);
  CHECK(s.parsers.reasoning == "libparsers.so");
  CHECK(s.parsers.exclude_tools_when_tool_choice_none);
  CHECK(s.parsers.chat_template_kwargs == nlohmann::json{{"enable_thinking", false}});
  CHECK(toml::parse(s.parsers.tool_options_toml)["strict"].value<bool>() == true);
  CHECK(toml::parse(s.parsers.reasoning_options_toml)["x"].value<int64_t>() == 1);
  CHECK(s.plugins.search_paths == std::vector<fs::path>{"/seats/p", "/abs/plugins"});
  CHECK(s.logging.format == "json");
  CHECK(s.logging.level == "debug");

  SECTION("the resolved seat prints as TOML that reads back the same") {
    const std::string text = seat_to_toml(s);
    const SeatConfig again = parse_seat(text, "printed.toml", "/elsewhere");
    CHECK(again.server.port == 9001);
    CHECK(again.model.tokenizer == s.model.tokenizer);
    CHECK(again.cache.kv_cache_memory == s.cache.kv_cache_memory);
    CHECK(again.kernels.fallback.empty());
    CHECK(again.kernels.reserve_workspace == false);
    CHECK(again.parsers.chat_template_kwargs == s.parsers.chat_template_kwargs);
    CHECK(again.plugins.search_paths == s.plugins.search_paths);
  }
}

TEST_CASE("the committed seat files are valid") {
  const fs::path configs = fs::path(SEATRT_SOURCE_DIR) / "configs";
  const SeatConfig fast = load_seat(configs / "char-rp-fast.toml");
  CHECK(fast.seat.served_model_names.size() == 2);
  CHECK(fast.model.max_model_len == 262144);
  CHECK(fast.cache.kv_cache_memory == 9114000000);
  CHECK(fast.cache.kv_cache_dtype == "fp8");
  CHECK(fast.scheduler.max_num_seqs == 32);
  CHECK(fast.parsers.tool == "gemma4");
  CHECK(fast.parsers.reasoning == "gemma4");
  CHECK(fast.parsers.chat_template_kwargs == nlohmann::json{{"enable_thinking", false}});
  CHECK(fast.parsers.exclude_tools_when_tool_choice_none);
  CHECK_FALSE(fast.model.chat_template.has_value());
  CHECK(fast.server.api_key_env.has_value());
  CHECK(fast.kernels.provider == "auto");
  CHECK_FALSE(fast.kernels.reserve_workspace.has_value());  // the provider's default: on for a GPU

  const SeatConfig demo = load_seat(configs / "demo.toml");
  CHECK(demo.server.host == "127.0.0.1");
  CHECK(demo.server.port == 8000);
  CHECK(demo.kernels.provider == "cpu");
  CHECK(demo.model.path == (fs::path(SEATRT_SOURCE_DIR) / "tests/fixtures/gemma4-tiny-moe").lexically_normal());
  CHECK(demo.plugins.search_paths.at(0) == (fs::path(SEATRT_SOURCE_DIR) / "build/plugins").lexically_normal());
}

TEST_CASE("malformed TOML is reported with file, line and column") {
  const std::string m = error_of("[seat]\nname = \"s\"\nport = = 3\n");
  CHECK_THAT(m, Catch::StartsWith("seat.toml:3:"));
  CHECK_THAT(m, Catch::Contains("malformed TOML"));
}

TEST_CASE("unknown keys and sections are errors suggesting the closest valid key") {
  const std::string key = error_of(std::string(kMinimal) + "[server]\nprot = 80\n");
  CHECK_THAT(key, Catch::StartsWith("seat.toml:7:"));
  CHECK_THAT(key, Catch::Contains("unknown key 'server.prot'"));
  CHECK_THAT(key, Catch::Contains("did you mean 'server.port'?"));

  const std::string section = error_of(std::string(kMinimal) + "[schedular]\nmax_num_seqs = 4\n");
  CHECK_THAT(section, Catch::Contains("unknown key 'schedular'"));
  CHECK_THAT(section, Catch::Contains("did you mean 'scheduler'?"));

  const std::string far = error_of(std::string(kMinimal) + "[cache]\nzzzzzzzzzz = 1\n");
  CHECK_THAT(far, Catch::Contains("valid keys here:"));
  CHECK_THAT(far, Catch::Contains("kv_cache_memory"));
}

TEST_CASE("wrong types name the key, the expected and the found type") {
  const std::string port = error_of(std::string(kMinimal) + "[server]\nport = \"8000\"\n");
  CHECK_THAT(port, Catch::Contains("'server.port' must be an integer, found string"));
  CHECK_THAT(port, Catch::StartsWith("seat.toml:7:"));
  CHECK_THAT(error_of(std::string(kMinimal) + "[cache]\nprefix_caching = 1\n"),
             Catch::Contains("'cache.prefix_caching' must be a boolean, found integer"));
  CHECK_THAT(error_of("seat = 3\n"), Catch::Contains("'seat' must be a table, found integer"));
  CHECK_THAT(error_of("[seat]\nname = \"s\"\nserved_model_names = [\"a\", 2]\n[model]\npath=\"p\"\n"),
             Catch::Contains("must be an array of strings"));
  CHECK_THAT(error_of(std::string(kMinimal) + "[server]\ndrain_timeout_s = true\n"),
             Catch::Contains("'server.drain_timeout_s' must be a number, found boolean"));
}

TEST_CASE("values are range- and enum-checked") {
  CHECK_THAT(error_of(std::string(kMinimal) + "[server]\nport = 70000\n"),
             Catch::Contains("'server.port': must be between 1 and 65535"));
  CHECK_THAT(error_of(std::string(kMinimal) + "[cache]\nkv_cache_dtype = \"fp16\"\n"),
             Catch::Contains("must be one of \"fp8\", \"bf16\", \"fp32\", \"auto\""));
  CHECK_THAT(error_of(std::string(kMinimal) + "[cache]\nblock_size = 24\n"),
             Catch::Contains("power of two"));
  CHECK_THAT(error_of(std::string(kMinimal) +
                      "[cache]\nkv_cache_memory = 100\nkv_cache_max_context_multiple = 2.0\n"),
             Catch::Contains("not both"));
  CHECK_THAT(error_of(std::string(kMinimal) + "[server]\napi_key_env = \"sk-123 secret\"\n"),
             Catch::Contains("NAME of an environment variable"));
  CHECK_THAT(error_of(std::string(kMinimal) + "[logging]\nformat = \"xml\"\n"),
             Catch::Contains("'logging.format'"));
  CHECK_THAT(error_of(std::string(kMinimal) + "[scheduler]\nmax_num_seqs = 0\n"),
             Catch::Contains("'scheduler.max_num_seqs'"));
  CHECK_THAT(error_of(std::string(kMinimal) + "[cache]\nkv_cache_max_context_multiple = -1\n"),
             Catch::Contains("must be greater than"));
}

TEST_CASE("required keys and duplicate names are reported") {
  CHECK_THAT(error_of("[model]\npath = \"p\"\n"), Catch::Contains("'seat.name': is required"));
  CHECK_THAT(error_of("[seat]\nname = \"s\"\n"), Catch::Contains("'model.path': is required"));
  CHECK_THAT(error_of("[seat]\nname = \"s\"\nserved_model_names = [\"a\", \"a\"]\n[model]\npath=\"p\"\n"),
             Catch::Contains("'a' is listed twice"));
}

TEST_CASE("an unreadable seat file is an error naming it") {
  try {
    load_seat("/nonexistent/seat.toml");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("/nonexistent/seat.toml"));
  }
}
