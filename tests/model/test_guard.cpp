// The architecture-class guard: the broken fixture (the MoE quantized with
// the dense recipe, routers in the quantize set) is refused at load, by the
// loader and by `seatrt check`'s model hook, with a message that names a
// router module and the fix; the good fixtures pass with the expected counts.
#include <catch2/catch.hpp>
#include <sstream>

#include "fixture_support.hpp"
#include "seatrt/host/model_check.hpp"
#include "seatrt/host/status.hpp"
#include "seatrt/model/status.hpp"

namespace seatrt::test {
namespace {

using Catch::Matchers::Contains;

std::vector<std::string> inspect_lines(const std::string& name) {
  auto session = cpu_session();
  const auto prepared = session->prepare(fixture(name));
  std::vector<std::string> lines;
  prepared->inspect([&](const std::string& line) { lines.push_back(line); });
  return lines;
}

bool has_line(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

TEST_CASE("guard accepts the MoE fixture and counts its Linears", "[guard]") {
  const auto lines = inspect_lines("gemma4-tiny-moe");
  CHECK(has_line(lines, "class: moe"));
  CHECK(has_line(lines, "expert_linears: 144 (6 layers x 8 experts x 3)"));
  CHECK(has_line(lines, "guard: ok"));
  CHECK(has_line(lines, "0 missing, 0 unexpected, 0 misshapen"));
}

TEST_CASE("guard accepts the dense fixture as the dense class", "[guard]") {
  const auto lines = inspect_lines("gemma4-tiny-dense");
  CHECK(has_line(lines, "class: dense"));
  CHECK(has_line(lines, "guard: ok"));
}

TEST_CASE("a MoE with quantized routers is refused by inspect and by the loader", "[guard]") {
  auto session = cpu_session();
  const auto dir = fixture("gemma4-tiny-broken-router");
  std::vector<std::string> lines;
  const auto prepared = session->prepare(dir);
  REQUIRE_THROWS_WITH(prepared->inspect([&](const std::string& l) { lines.push_back(l); }),
                      Contains("model.language_model.layers.0.router.proj") && Contains("re:.*router") &&
                          Contains("re-quantize"));
  CHECK(has_line(lines, "guard: REFUSED"));
  // load() runs the guard before any weight is read.
  REQUIRE_THROWS_WITH(session->load(dir, 16), Contains("router.proj") && Contains("quantized"));
}

TEST_CASE("seatrt check's model hook refuses the broken fixture", "[guard]") {
  host::SeatConfig seat;
  seat.model.path = fixture("gemma4-tiny-broken-router");
  host::SeatPlugins plugins;
  plugins.search_paths = {plugin_dir()};
  std::ostringstream out;
  REQUIRE_THROWS_WITH(host::check_model(seat, plugins, out), Contains("router.proj"));
  seat.model.path = fixture("gemma4-tiny-moe");
  std::ostringstream good;
  host::check_model(seat, plugins, good);
  CHECK_THAT(good.str(), Contains("model guard: ok"));
}

}  // namespace
}  // namespace seatrt::test
