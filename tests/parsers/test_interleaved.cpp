// Two requests fed in lockstep in one thread (as a batch scheduler does)
// each get exactly their own golden message and delta sequence.
#include <catch2/catch.hpp>

#include "golden_runner.hpp"

using namespace seatrt::parsers::test;

TEST_CASE("interleaved requests do not mix", "[parsers][concurrency]") {
  const auto& cases = golden_cases();
  for (size_t k = 0; k < cases.size(); ++k) {
    const auto& a = cases[k];
    const auto& b = cases[(k + 5) % cases.size()];
    GoldenSession sa(a), sb(b);
    const auto pa = token_pieces(a), pb = token_pieces(b);
    for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
      if (i < pa.size()) sa.feed(pa[i]);
      if (i < pb.size()) sb.feed(pb[i]);
    }
    const auto ra = sa.finish(), rb = sb.finish();
    INFO(a["name"] << " with " << b["name"]);
    CHECK(ra.message == a["message"]);
    CHECK(rb.message == b["message"]);
    CHECK(ra.finish_reason == a["finish_reason"].get<std::string>());
    CHECK(rb.finish_reason == b["finish_reason"].get<std::string>());
  }
}
