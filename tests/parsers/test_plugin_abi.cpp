// The plugin through its C ABI, as the host uses it: dlopen the built .so,
// read the descriptor, run one request through the seatrt_parser_api table
// with a minimal host table, and check errors come back as statuses.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <string>

#include "seatrt/seatrt.h"

namespace {

struct TestStatus {
  seatrt_status_code code;
  std::string message;
};

seatrt_status* status_create(seatrt_status_code code, const char* message) {
  return reinterpret_cast<seatrt_status*>(new TestStatus{code, message ? message : ""});
}
void status_free(seatrt_status* s) { delete reinterpret_cast<TestStatus*>(s); }
seatrt_status_code status_code(const seatrt_status* s) {
  return s ? reinterpret_cast<const TestStatus*>(s)->code : SEATRT_OK;
}
const char* status_message(const seatrt_status* s) {
  return s ? reinterpret_cast<const TestStatus*>(s)->message.c_str() : "";
}
void log_line(seatrt_log_level, const char*, const char*) {}

struct Collected {
  std::string content, reasoning, arguments, id, name;
  int calls = 0;
};

}  // namespace

TEST_CASE("the plugin library serves one request through the C ABI", "[parsers][abi]") {
  void* lib = dlopen(SEATRT_PARSERS_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  auto init = reinterpret_cast<seatrt_plugin_init_fn>(dlsym(lib, SEATRT_PLUGIN_ENTRY_SYMBOL));
  REQUIRE(init != nullptr);
  const seatrt_host_api host = {sizeof(seatrt_host_api), SEATRT_ABI_MAJOR, SEATRT_ABI_MINOR, 0,
                                status_create,           status_free,      status_code,      status_message,
                                log_line};
  const seatrt_plugin* plugin = init(&host);
  REQUIRE(plugin != nullptr);
  CHECK(plugin->abi_major == SEATRT_ABI_MAJOR);
  CHECK(std::string(plugin->name) == "gemma4");
  CHECK((plugin->kinds & SEATRT_KIND_TOOL_PARSER) != 0);
  CHECK((plugin->kinds & SEATRT_KIND_REASONING_PARSER) != 0);
  CHECK(plugin->tool_parser == plugin->reasoning_parser);  // one instance does both
  REQUIRE(plugin->initialize(&host) == nullptr);
  const seatrt_parser_api* api = plugin->tool_parser;

  seatrt_parser_request request{};
  request.struct_size = sizeof(request);
  request.request_id = "abi";
  request.tools_json = R"([{"type": "function", "function": {"name": "get_weather"}}])";
  request.tool_choice_json = "\"auto\"";
  request.response_format_json = "";
  request.chat_template_kwargs_json = R"({"enable_thinking": true})";
  request.prompt_tail = "";

  // A refused request comes back as an INVALID_ARG status with a message.
  seatrt_parser_request bad = request;
  bad.tool_choice_json = R"({"type": "function", "function": {"name": "nope"}})";
  seatrt_parser* parser = nullptr;
  seatrt_status* st = api->create("", &bad, &parser);
  REQUIRE(st != nullptr);
  CHECK(status_code(st) == SEATRT_ERR_INVALID_ARG);
  CHECK(std::string(status_message(st)).find("nope") != std::string::npos);
  status_free(st);
  CHECK(parser == nullptr);
  // So is a schema whose $ref chain loops without writing anything (it once
  // overflowed the stack when the decoder reached it).
  bad = request;
  bad.tools_json = R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
      "properties": {"x": {"$ref": "#/$defs/a"}}, "required": ["x"], "$defs": {"a": {"$ref": "#/$defs/a"}}}}}])";
  bad.tool_choice_json = "\"required\"";
  st = api->create("", &bad, &parser);
  REQUIRE(st != nullptr);
  CHECK(status_code(st) == SEATRT_ERR_INVALID_ARG);
  CHECK(std::string(status_message(st)).find("$ref chain at '#/$defs/a' refers back to itself") != std::string::npos);
  status_free(st);
  CHECK(parser == nullptr);

  REQUIRE(api->create("", &request, &parser) == nullptr);
  REQUIRE(parser != nullptr);
  Collected got;
  seatrt_parser_events events{};
  events.struct_size = sizeof(events);
  events.user_data = &got;
  events.content = [](void* u, const char* t, size_t n) { static_cast<Collected*>(u)->content.append(t, n); };
  events.reasoning = [](void* u, const char* t, size_t n) { static_cast<Collected*>(u)->reasoning.append(t, n); };
  events.tool_call = [](void* u, int32_t, const char* id, const char* name, const char* t, size_t n) {
    auto* c = static_cast<Collected*>(u);
    c->arguments.append(t, n);
    c->id = id;
    c->name = name;
    ++c->calls;
  };
  const std::string output =
      "<|channel>thought\nsunny?<channel|>Checking.<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>";
  REQUIRE(api->feed(parser, nullptr, 0, output.data(), output.size(), &events) == nullptr);
  int32_t reason = -1;
  REQUIRE(api->finish(parser, SEATRT_FINISH_STOP, &events, &reason) == nullptr);
  CHECK(reason == SEATRT_FINISH_TOOL_CALLS);
  CHECK(got.reasoning == "sunny?");
  CHECK(got.content == "Checking.");
  CHECK(got.arguments == "{\"city\": \"Paris\"}");
  CHECK(got.name == "get_weather");
  CHECK(got.id.size() == 29);
  int32_t constrained = -1;
  uint32_t mask[1] = {0};
  REQUIRE(api->allowed_tokens(parser, mask, 1, &constrained) == nullptr);
  CHECK(constrained == 0);
  // Bad arguments are statuses, not crashes.
  st = api->feed(parser, nullptr, 0, nullptr, 5, &events);
  REQUIRE(st != nullptr);
  CHECK(status_code(st) == SEATRT_ERR_INVALID_ARG);
  status_free(st);
  api->destroy(parser);
  dlclose(lib);
}
