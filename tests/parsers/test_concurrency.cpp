// Requests parsed at the same time never see each other's state: threads
// each run every golden case many times, and two parsers fed in lockstep
// (interleaved) each give their own golden result.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "gemma4_parser.hpp"
#include "golden_runner.hpp"

using namespace seatrt::parsers::test;

TEST_CASE("concurrent requests keep their own state", "[parsers][concurrency]") {
  const auto& cases = golden_cases();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round) {
        for (size_t k = 0; k < cases.size(); ++k) {
          const auto& c = cases[(k + static_cast<size_t>(t) * 7) % cases.size()];
          const auto run = run_golden(c, token_pieces(c));
          if (run.message != c["message"] || run.finish_reason != c["finish_reason"].get<std::string>()) {
            ++mismatches;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches.load() == 0);
}
