// Kernel activity records of this process through CUPTI (NVIDIA's profiling
// interface, the one torch.profiler uses), for seatrt-step-profile's
// --timeline: the start and end of every kernel, graph-launched ones
// included, on CUPTI's clock.  libcupti is opened at run time (dlopen), so the
// tool has no link dependency on it and reports why when it is missing:
// SEATRT_CUPTI_LIB names the library, else the usual places are tried.
// Built only where the CUDA toolkit's CUPTI headers are found; elsewhere
// open() says so.
//
// One trace at a time per process (CUPTI's buffer callbacks are global);
// start()/stop() from one thread.  Enable before the graphs to trace are
// instantiated: graphs captured while tracing was off may not report their
// kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel_timeline.hpp"

namespace seatrt::bench {

class CuptiTrace {
 public:
  // The trace, or null with *why set (no library, no headers at build time,
  // a CUPTI call that failed).
  static std::unique_ptr<CuptiTrace> open(std::string* why);
  ~CuptiTrace();
  CuptiTrace(const CuptiTrace&) = delete;
  CuptiTrace& operator=(const CuptiTrace&) = delete;

  // Turn kernel activity recording on; records of earlier traces are dropped.
  void start();
  // CUPTI's timestamp now (ns, the clock of the records).
  uint64_t now() const;
  // Flush, turn recording off and return the kernels recorded since start()
  // (names shortened by short_kernel_name).  *dropped: records CUPTI lost.
  std::vector<KernelRecord> stop(uint64_t* dropped);

  struct Api;  // the library's entry points (cupti_trace.cpp)

 private:
  explicit CuptiTrace(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
  bool on_ = false;
};

}  // namespace seatrt::bench
