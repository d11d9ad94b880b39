// seatrt-step-profile --timeline's analysis (tools/bench/kernel_timeline.cpp)
// on hand-made kernel timelines whose figures are worked out below by hand.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "kernel_timeline.hpp"

using seatrt::bench::analyze_timeline;
using seatrt::bench::KernelRecord;
using seatrt::bench::short_kernel_name;
using seatrt::bench::StepWindow;

namespace {

const seatrt::bench::KernelNameStats& by_name(const seatrt::bench::TimelineReport& r, const std::string& name) {
  for (const auto& k : r.by_name)
    if (k.name == name) return k;
  throw std::runtime_error("no row for " + name);
}

}  // namespace

TEST_CASE("timeline: what each kernel adds to its stream, with overlap (PDL) and a second stream") {
  // One step, window [0, 100000] ns.  Stream 1: a 0-10 us, b starts early
  // (PDL) at 8 us and ends at 20 us, c 25-30 us (a 5 us gap).  Stream 2:
  // d 12-40 us.  Ends: a adds 10, b adds 20-10 = 10, c adds 30-20 = 10; d is
  // its stream's first kernel and adds its 28 us.  Busy: [0, 40] minus
  // nothing (d covers the gap 20-25) = 40 us; span 40 us; idle 0.
  std::vector<KernelRecord> rec = {
      {"a", 1, 0, 10000}, {"b", 1, 8000, 20000}, {"c", 1, 25000, 30000}, {"d", 2, 12000, 40000}};
  const auto r = analyze_timeline(rec, {StepWindow{0, 100000}});
  REQUIRE(r.steps.size() == 1);
  CHECK(r.steps[0].kernels == 4);
  CHECK(r.steps[0].streams == 2);
  CHECK(r.steps[0].span_us == Approx(40.0));
  CHECK(r.steps[0].busy_us == Approx(40.0));
  CHECK(r.steps[0].idle_us == Approx(0.0));
  CHECK(r.steps[0].duration_sum_us == Approx(10 + 12 + 5 + 28));
  CHECK(by_name(r, "a").adds_us_per_step == Approx(10.0));
  CHECK(by_name(r, "b").adds_us_per_step == Approx(10.0));
  CHECK(by_name(r, "b").mean_gap_us == Approx(-2.0));  // started 2 us before a ended
  CHECK(by_name(r, "c").adds_us_per_step == Approx(10.0));
  CHECK(by_name(r, "c").mean_gap_us == Approx(5.0));
  CHECK(by_name(r, "d").adds_us_per_step == Approx(28.0));
  CHECK(r.by_name.front().name == "d");  // largest adds first
  REQUIRE(r.median_kernels.size() == 4);
  CHECK(r.median_kernels[1].name == "b");  // start order
}

TEST_CASE("timeline: idle time, steps cut by the windows, per-step averages and the median step") {
  // Step 1 (window 0-50 us): k 0-10, k 20-30 on stream 7: busy 20, idle 10.
  // Step 2 (window 100-200 us): k 100-110, then m 110-150: span 50.
  // Step 3 (window 300-400 us): k 300-305: span 5.
  // A record at 60 us falls between windows and is ignored.
  std::vector<KernelRecord> rec = {{"k", 7, 0, 10000},        {"k", 7, 20000, 30000},  {"zz", 7, 60000, 61000},
                                   {"k", 7, 100000, 110000},  {"m", 7, 110000, 150000}, {"k", 7, 300000, 305000}};
  const auto r = analyze_timeline(rec, {{0, 50000}, {100000, 200000}, {300000, 400000}});
  REQUIRE(r.steps.size() == 3);
  CHECK(r.steps[0].span_us == Approx(30.0));
  CHECK(r.steps[0].busy_us == Approx(20.0));
  CHECK(r.steps[0].idle_us == Approx(10.0));
  CHECK(r.steps[1].span_us == Approx(50.0));
  CHECK(r.steps[2].span_us == Approx(5.0));
  // k: 4 calls over 3 steps; adds 10 + 20 (30 - 10) + 10 + 5 = 45 us in all.
  const auto& k = by_name(r, "k");
  CHECK(k.calls_per_step == Approx(4.0 / 3.0));
  CHECK(k.adds_us_per_step == Approx(45.0 / 3.0));
  CHECK(k.mean_duration_us == Approx((10 + 10 + 10 + 5) / 4.0));
  CHECK(k.mean_gap_us == Approx(10.0));  // one gap: 20 - 10
  CHECK(by_name(r, "m").adds_us_per_step == Approx(40.0 / 3.0));
  for (const auto& row : r.by_name) CHECK(row.name != "zz");
  // Spans 30, 50, 5: the median is step 1 (30 us), offsets from its start.
  CHECK(r.median_step == 0);
  REQUIRE(r.median_kernels.size() == 2);
  CHECK(r.median_kernels[1].start_ns == 20000);
  CHECK(r.median_kernels[1].end_ns == 30000);
}

TEST_CASE("timeline: bad windows and records are refused; nothing in the windows gives an empty report") {
  CHECK_THROWS_AS(analyze_timeline({}, {{10, 5}}), std::invalid_argument);
  CHECK_THROWS_AS(analyze_timeline({}, {{0, 50}, {40, 90}}), std::invalid_argument);
  CHECK_THROWS_AS(analyze_timeline({{"x", 1, 20, 10}}, {{0, 50}}), std::invalid_argument);
  const auto r = analyze_timeline({{"x", 1, 100, 110}}, {{0, 50}});
  CHECK(r.steps.empty());
  CHECK(r.by_name.empty());
  CHECK(r.median_step == -1);
}

TEST_CASE("short kernel names: demangled, without namespaces, return type or parameters") {
  // _ZN6seatrt4cuda12_GLOBAL__N_111gemv_kernelILi1ELi2EEEvPKfPf is
  // void seatrt::cuda::(anonymous namespace)::gemv_kernel<1, 2>(float const*, float*)
  CHECK(short_kernel_name("_ZN6seatrt4cuda12_GLOBAL__N_111gemv_kernelILi1ELi2EEEvPKfPf") == "gemv_kernel<1, 2>");
  // A plain C name and an unmangled qualified one pass through shortened.
  CHECK(short_kernel_name("simple_kernel") == "simple_kernel");
  CHECK(short_kernel_name("void ns::(anonymous namespace)::k<ns::A<2>>(int)") == "k<ns::A<2>>");
}
