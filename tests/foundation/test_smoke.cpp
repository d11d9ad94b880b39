// The SDK examples through the host, as `seatrt check` runs them: a
// kernel (rms_norm, checked against values worked out by hand) and the
// example tool parser (whole text and byte-by-byte streaming).
#include <catch2/catch.hpp>

#include <map>

#include "seatrt/host/kernel_dispatch.hpp"
#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/smoke.hpp"
#include "seatrt/host/status.hpp"

using namespace seatrt::host;

namespace {
const std::filesystem::path kExamples = SEATRT_EXAMPLES_DIR;
}

TEST_CASE("kernel smoke runs rms_norm through the example provider") {
  PluginRegistry registry({kExamples});
  auto plugin = registry.load("example-cpu", SEATRT_KIND_KERNELS);
  KernelDispatch dispatch({plugin->descriptor().kernels, plugin->name()}, {});
  // Row 1: [1,2,3,4], mean square 7.5, 1/sqrt(7.5) = 0.365148;
  // row 2: [-1,0.5,0,2], mean square 1.3125, 1/sqrt(1.3125) = 0.872872;
  // times weight [1, 0.5, 2, 1].
  CHECK(kernel_smoke(dispatch, "", 0) ==
        "rms_norm via example-cpu -> [0.3651, 0.3651, 2.1909, 1.4606, -0.8729, 0.2182, 0.0000, "
        "1.7457]");
  CHECK_THROWS_WITH(kernel_smoke(dispatch, "", 1), Catch::Contains("example-cpu has one device"));
}

TEST_CASE("parser smoke shows the example parser's events") {
  PluginRegistry registry({kExamples});
  auto plugin = registry.load("example-call", SEATRT_KIND_TOOL_PARSER);
  CHECK(parser_smoke(plugin->descriptor().tool_parser, "", nlohmann::json::object()) ==
        "content=\"Checking.\\n\" tool_call[0]=get_weather({\"city\": \"Paris\"}) finish=tool_calls");
}

namespace {

struct Events {
  std::string content;
  std::map<int, std::string> names, args, ids;
};

seatrt_parser_events events_for(Events& e) {
  seatrt_parser_events ev{};
  ev.struct_size = sizeof ev;
  ev.user_data = &e;
  ev.content = [](void* u, const char* t, size_t n) { static_cast<Events*>(u)->content.append(t, n); };
  ev.reasoning = [](void*, const char*, size_t) { FAIL("no reasoning expected"); };
  ev.tool_call = [](void* u, int32_t i, const char* id, const char* name, const char* a, size_t n) {
    auto* events = static_cast<Events*>(u);
    events->ids[i] = id;
    events->names[i] = name;
    events->args[i].append(a, n);
  };
  return ev;
}

// Runs the example parser over `text` split into pieces of `piece` bytes.
Events run_parser(const seatrt_parser_api& api, const std::string& text, std::size_t piece,
                  const char* tool_choice, int32_t* client_reason) {
  seatrt_parser_request request{};
  request.struct_size = sizeof request;
  request.tool_choice_json = tool_choice;
  seatrt_parser* parser = nullptr;
  throw_if_error(api.create("", &request, &parser));
  Events e;
  const seatrt_parser_events ev = events_for(e);
  for (std::size_t i = 0; i < text.size(); i += piece) {
    const std::string part = text.substr(i, piece);
    throw_if_error(api.feed(parser, nullptr, 0, part.data(), part.size(), &ev));
  }
  throw_if_error(api.finish(parser, SEATRT_FINISH_STOP, &ev, client_reason));
  api.destroy(parser);
  return e;
}

}  // namespace

TEST_CASE("the example tool parser holds back possible calls and streams content") {
  PluginRegistry registry({kExamples});
  auto plugin = registry.load("example-call", SEATRT_KIND_TOOL_PARSER);
  const seatrt_parser_api api = read_table(plugin->descriptor().tool_parser);
  CHECK(api.allowed_tokens == nullptr);
  const std::string text =
      "Let me look.\nCALL get_weather {\"city\": \"Oslo\"}\nCALLING is not a call\n"
      "CALL lookup {\"q\": 1}";  // last call unterminated: flushed by finish()
  for (std::size_t piece : {std::size_t{1}, std::size_t{3}, text.size()}) {
    int32_t reason = -1;
    const Events e = run_parser(api, text, piece, "\"auto\"", &reason);
    CHECK(e.content == "Let me look.\nCALLING is not a call\n");
    CHECK(e.names == std::map<int, std::string>{{0, "get_weather"}, {1, "lookup"}});
    CHECK(e.args == std::map<int, std::string>{{0, "{\"city\": \"Oslo\"}"}, {1, "{\"q\": 1}"}});
    CHECK(e.ids.at(1) == "call_1");
    CHECK(reason == SEATRT_FINISH_TOOL_CALLS);
  }
  SECTION("tool_choice none: every line is content") {
    int32_t reason = -1;
    const Events e = run_parser(api, text, 2, "\"none\"", &reason);
    CHECK(e.content == text);
    CHECK(e.names.empty());
    CHECK(reason == SEATRT_FINISH_STOP);
  }
}
