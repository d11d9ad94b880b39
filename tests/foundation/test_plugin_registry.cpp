// Plugin loading: name and path resolution inside the search paths, every
// refusal (one line naming the file), and the ABI versioning rule with the
// host version injected.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>

#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/seat_plugins.hpp"
#include "seatrt/host/status.hpp"

using namespace seatrt::host;
namespace fs = std::filesystem;

namespace {

// The host's ABI version as messages print it (from the SDK header).
const std::string kHostAbi = std::to_string(SEATRT_ABI_MAJOR) + "." + std::to_string(SEATRT_ABI_MINOR);

const fs::path kTestPlugins = SEATRT_TEST_PLUGIN_DIR;
const fs::path kExamples = SEATRT_EXAMPLES_DIR;

// The one-line message of the Error `fn` throws ("" if none).
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    const std::string message = e.what();
    CHECK(message.find('\n') == std::string::npos);
    return message;
  }
  return "";
}

// A fresh temporary directory, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "seatrt-test-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("scan lists every library with its descriptor or the reason it is unusable") {
  PluginRegistry registry({kTestPlugins, kExamples});
  const auto found = registry.scan();
  auto find = [&](const std::string& file) -> const PluginCandidate* {
    for (const auto& c : found)
      if (c.path.filename() == file) return &c;
    return nullptr;
  };
  const PluginCandidate* call = find("libseatrt_example_tool_parser.so");
  REQUIRE(call != nullptr);
  CHECK(call->error.empty());
  CHECK(call->name == "example-call");
  CHECK(call->kinds == SEATRT_KIND_TOOL_PARSER);
  CHECK(call->abi_major == SEATRT_ABI_MAJOR);
  REQUIRE(find("libbroken_not_elf.so") != nullptr);
  CHECK_THAT(find("libbroken_not_elf.so")->error, Catch::Contains("not a loadable shared library"));
  REQUIRE(find("libtest_other_major.so") != nullptr);
  CHECK_THAT(find("libtest_other_major.so")->error, Catch::Contains("ABI 1.7"));
}

TEST_CASE("plugins load by name or by path relative to a search path") {
  PluginRegistry registry({kTestPlugins, kExamples});
  auto by_name = registry.load("example-call", SEATRT_KIND_TOOL_PARSER);
  CHECK(by_name->name() == "example-call");
  CHECK(by_name->abi_version() == kHostAbi);
  CHECK(by_name->descriptor().tool_parser != nullptr);
  auto by_path = registry.load("libseatrt_example_tool_parser.so", SEATRT_KIND_TOOL_PARSER);
  CHECK(by_path == by_name);  // one library, loaded and initialised once
  auto absolute = registry.load((kExamples / "libseatrt_example_tool_parser.so").string(),
                                SEATRT_KIND_TOOL_PARSER);
  CHECK(absolute == by_name);
}

TEST_CASE("paths that escape the search paths are refused") {
  TempDir outside;
  fs::copy_file(kExamples / "libseatrt_example_tool_parser.so", outside.path / "libescaped.so");
  TempDir search;
  fs::create_symlink(outside.path / "libescaped.so", search.path / "liblink.so");
  PluginRegistry registry({search.path});

  const std::string dotdot = error_of([&] {
    registry.load("../" + outside.path.filename().string() + "/libescaped.so", SEATRT_KIND_TOOL_PARSER);
  });
  CHECK_THAT(dotdot, Catch::Contains("outside the plugin search paths"));
  const std::string link = error_of([&] { registry.load("liblink.so", SEATRT_KIND_TOOL_PARSER); });
  CHECK_THAT(link, Catch::Contains("outside the plugin search paths"));
  const std::string absolute = error_of(
      [&] { registry.load((outside.path / "libescaped.so").string(), SEATRT_KIND_TOOL_PARSER); });
  CHECK_THAT(absolute, Catch::Contains("outside the plugin search paths"));
  // Name lookup does not follow the escaping symlink either.
  CHECK_THAT(error_of([&] { registry.load("example-call", SEATRT_KIND_TOOL_PARSER); }),
             Catch::Contains("no tool parser plugin named 'example-call'"));
}

TEST_CASE("each bad plugin gets one line naming the file and the problem") {
  PluginRegistry registry({kTestPlugins, kExamples});
  SECTION("missing file") {
    const std::string m = error_of([&] { registry.load("libnope.so", SEATRT_KIND_KERNELS); });
    CHECK_THAT(m, Catch::Contains("'libnope.so' does not exist in the plugin search paths"));
  }
  SECTION("unknown name, with a suggestion") {
    const std::string m = error_of([&] { registry.load("example-cal", SEATRT_KIND_TOOL_PARSER); });
    CHECK_THAT(m, Catch::Contains("no tool parser plugin named 'example-cal'"));
    CHECK_THAT(m, Catch::Contains("did you mean 'example-call'?"));
  }
  SECTION("not a shared library, with dlopen's reason") {
    const std::string m = error_of([&] { registry.load("libbroken_not_elf.so", SEATRT_KIND_KERNELS); });
    CHECK_THAT(m, Catch::Contains("libbroken_not_elf.so' is not a loadable shared library: "));
    // dlopen's own words (glibc): "invalid ELF header" or "file too short".
    CHECK((m.find("ELF") != std::string::npos || m.find("too short") != std::string::npos));
  }
  SECTION("no entry symbol") {
    const std::string m = error_of([&] { registry.load("libbroken_no_entry.so", SEATRT_KIND_KERNELS); });
    CHECK_THAT(m, Catch::Contains("libbroken_no_entry.so' is not a seatrt plugin: it lacks the "
                                  "entry symbol seatrt_plugin_init"));
  }
  SECTION("other ABI major, naming both versions") {
    const std::string m = error_of([&] { registry.load("libtest_other_major.so", SEATRT_KIND_TOOL_PARSER); });
    CHECK_THAT(m, Catch::Contains("libtest_other_major.so' was built for seatrt ABI 1.7 but this "
                                  "host implements ABI " + kHostAbi));
  }
  SECTION("newer minor than the host") {
    const std::string m = error_of([&] { registry.load("libtest_newer_minor.so", SEATRT_KIND_TOOL_PARSER); });
    CHECK_THAT(m, Catch::Contains("ABI 2.99, newer than this host's ABI " + kHostAbi));
  }
  SECTION("initialize fails: the plugin's own message is shown") {
    const std::string m = error_of([&] { registry.load("test-init-fails", SEATRT_KIND_TOOL_PARSER); });
    CHECK_THAT(m, Catch::Contains("plugin 'test-init-fails'"));
    CHECK_THAT(m, Catch::Contains("failed to initialize: test-init-fails: the licence file "
                                  "/etc/nowhere.lic is missing"));
  }
  SECTION("initialize throws: reported, and the host carries on") {
    const std::string m = error_of([&] { registry.load("test-init-throws", SEATRT_KIND_TOOL_PARSER); });
    CHECK_THAT(m, Catch::Contains("plugin 'test-init-throws'"));
    CHECK_THAT(m, Catch::Contains("threw an exception"));
    CHECK_THAT(m, Catch::Contains("test-init-throws: exception escaping initialize"));
    // The host survives and keeps loading other plugins.
    CHECK(registry.load("example-call", SEATRT_KIND_TOOL_PARSER)->name() == "example-call");
  }
  SECTION("a different kind than asked, naming what it provides") {
    const std::string m = error_of([&] { registry.load("example-call", SEATRT_KIND_KERNELS); });
    CHECK_THAT(m, Catch::Contains("plugin 'example-call'"));
    CHECK_THAT(m, Catch::Contains("provides tool parser, not a kernel provider"));
    const std::string by_path = error_of(
        [&] { registry.load("libseatrt_example_minimal.so", SEATRT_KIND_ARCHITECTURE); });
    CHECK_THAT(by_path, Catch::Contains("provides nothing, not an architecture"));
  }
  SECTION("a search path that does not exist") {
    const std::string m = error_of([&] { PluginRegistry({"/nonexistent/plugins"}); });
    CHECK_THAT(m, Catch::Contains("'/nonexistent/plugins' does not exist"));
  }
}

TEST_CASE("ABI rule: a plugin built for an older minor loads into a newer host") {
  // Host 2.3 (injected), plugin descriptor 2.0 with a shorter struct.
  PluginRegistry registry({kTestPlugins}, AbiVersion{2, 3});
  auto plugin = registry.load("test-old-minor", SEATRT_KIND_KERNELS);
  CHECK(plugin->abi_version() == "2.0");
  CHECK(plugin->descriptor().struct_size < sizeof(seatrt_plugin));
  // The slot beyond the plugin's struct_size holds poison in the library;
  // the host must read it as absent.
  CHECK(plugin->descriptor().reasoning_parser == nullptr);
  // Its kernel table is short too: the graph slots read as absent.
  const seatrt_kernel_api table = read_table(plugin->descriptor().kernels);
  CHECK(table.probe != nullptr);
  CHECK(table.plan == nullptr);
  CHECK(table.plan_destroy == nullptr);
  // Loaded twice, initialised once.
  auto again = registry.load("libtest_old_minor.so", SEATRT_KIND_KERNELS);
  CHECK(again == plugin);
  CHECK(probe_provider(*plugin).detail == "initialize calls: 1");
}

TEST_CASE("ABI rule: another major is refused whatever the minors") {
  PluginRegistry host3({kTestPlugins}, AbiVersion{3, 0});
  const std::string m = error_of([&] { host3.load("libtest_old_minor.so", SEATRT_KIND_KERNELS); });
  CHECK_THAT(m, Catch::Contains("was built for seatrt ABI 2.0 but this host implements ABI 3.0"));
  // And the 1.7 plugin is accepted by a 1.x host (its major matches).
  PluginRegistry host1_8({kTestPlugins}, AbiVersion{1, 8});
  CHECK(host1_8.scan().size() > 0);
  bool listed_ok = false;
  for (const auto& c : host1_8.scan())
    if (c.name == "test-other-major") listed_ok = c.error.empty();
  CHECK(listed_ok);
}

TEST_CASE("a plugin file that disappears between scan and load is reported") {
  TempDir dir;
  fs::copy_file(kExamples / "libseatrt_example_minimal.so", dir.path / "libgone.so");
  PluginRegistry registry({dir.path});
  CHECK(registry.scan().size() == 1);
  fs::remove(dir.path / "libgone.so");
  CHECK_THAT(error_of([&] { registry.load("libgone.so", SEATRT_KIND_KERNELS); }),
             Catch::Contains("does not exist"));
}
