// Where a decode step's GPU time goes when it runs from a CUDA graph: the
// analysis of kernel activity records (start/end per kernel, from CUPTI:
// cupti_trace.hpp) cut into steps by host-taken timestamps on the same clock.
// The per-op profiler of the CUDA provider times ops eagerly with events; a
// graph replay has no per-op timing of its own, and with programmatic
// dependent launch a kernel starts before its predecessor ends and waits
// inside, so a kernel's duration overstates what it costs the step.  What a
// kernel costs is what it adds to its stream's end: its end minus the end of
// the kernel before it on that stream (the first kernel of a step counts from
// the step's first start).  Summed over one stream that is the stream's span.
//
// Pure functions over plain records (no CUDA): tests/foundation/
// test_kernel_timeline.cpp checks them on hand-made timelines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seatrt::bench {

struct KernelRecord {
  std::string name;  // short name: short_kernel_name() of the mangled one
  uint32_t stream = 0;
  uint64_t start_ns = 0, end_ns = 0;
};

// A step's host-side window [begin_ns, end_ns] on the records' clock: a
// kernel belongs to the step its start falls in.
struct StepWindow {
  uint64_t begin_ns = 0, end_ns = 0;
};

// One kernel name's figures over the steps analysed.
struct KernelNameStats {
  std::string name;
  double calls_per_step = 0;
  double mean_duration_us = 0;  // start to end, PDL waiting included
  double adds_us_per_step = 0;  // what it adds to its stream's end, summed per step
  double mean_gap_us = 0;       // its start minus the previous end on its stream (< 0: overlapped)
};

struct StepStats {
  int32_t kernels = 0;
  double span_us = 0;  // first kernel start to last kernel end
  double busy_us = 0;  // time some kernel is running (the union of the intervals)
  double idle_us = 0;  // span - busy: no kernel running at all
  double duration_sum_us = 0;
  int32_t streams = 0;
};

struct TimelineReport {
  std::vector<StepStats> steps;          // in the windows' order; steps with no kernel are left out
  std::vector<KernelNameStats> by_name;  // sorted by adds_us_per_step, largest first
  int32_t median_step = -1;              // index into steps (by span), -1 when none
  // The kernels of the median step in start order, with start offsets from
  // the step's first start (for reading the step's shape).
  std::vector<KernelRecord> median_kernels;
};

// Records outside every window are ignored; overlapping windows are an
// error (std::invalid_argument), as is a record ending before it starts.
TimelineReport analyze_timeline(std::vector<KernelRecord> records, const std::vector<StepWindow>& windows);

// "void seatrt::cuda::(anonymous namespace)::gemv_kernel<1, 2>(Args)" ->
// "gemv_kernel<1, 2>": demangled (when the name is mangled), without
// namespaces, return type or parameter list; unknown forms pass through.
std::string short_kernel_name(const std::string& mangled);

}  // namespace seatrt::bench
