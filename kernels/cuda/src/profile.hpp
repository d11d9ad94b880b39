// Opt-in per-op GPU timer of the CUDA provider: where a decode step's time
// goes, op by op.  Turned on by `profile = true` in the seat's
// [kernels.options] (or SEATRT_CUDA_PROFILE=1 in the environment); when off
// the only cost is one pointer test per op.
//
// When on, every op slot (plugin.cpp's SEATRT_CUDA_OP) records a cudaEvent
// pair around its launches on the op's stream.  Events come from a pool
// made at context creation (no allocation per op); the pairs are resolved
// lazily, when the pool fills and at dump, and aggregated per key: op name,
// variant (elementwise kind, attention window/full), a Linear's
// out_features x in_features, and the op's rows (the first axis of its main
// tensor) and the stream (numbered in order of first use: a tool running
// one batch size per stream reads each apart).  Ops enqueued while their stream is being
// captured into a graph are not recorded (events would become graph nodes).
// The table goes to stderr, and as TSV to `profile_file` when one is named,
// at context destroy.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "seatrt/seatrt.h"

namespace seatrt::cuda {

struct ProfileOptions {
  bool enabled = false;
  std::string file;  // TSV dump at context destroy; empty = stderr only
};

// Parses the provider's [kernels.options] TOML (keys: profile = bool,
// profile_file = string; anything else is refused with an error naming it),
// then applies SEATRT_CUDA_PROFILE=1 / SEATRT_CUDA_PROFILE_FILE=path.
ProfileOptions parse_profile_options(const char* options_toml);

// What one op call is aggregated under.  Plain values: no allocation per op.
struct OpKey {
  const char* op = "";
  const char* variant = "";
  int64_t out_features = 0;
  int64_t in_features = 0;
  int64_t rows = 0;
  int32_t stream = 0;  // ordinal, set by Profiler::begin
  auto tie() const {
    return std::make_tuple(stream, std::string(op), std::string(variant), out_features, in_features, rows);
  }
  bool operator<(const OpKey& o) const { return tie() < o.tie(); }
};

class Profiler {
 public:
  // Creates the event pool (pairs of timing events) on the current device.
  Profiler(ProfileOptions options, int32_t pairs = 4096);
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Records the start event of `key` on `stream` and returns a ticket for
  // end(), or -1 when nothing is recorded (the stream is capturing).
  int64_t begin(cudaStream_t stream, const OpKey& key);
  // Records the end event of `ticket`'s pair on `stream` (nothing when the
  // pool was resolved in between by another thread: that pair is dropped).
  void end(cudaStream_t stream, int64_t ticket);
  // Resolves what is pending and writes the table (stderr, and the file).
  void dump();

 private:
  struct Stats {
    int64_t count = 0;
    double total_ms = 0;
  };
  struct Pending {
    OpKey key;
    int32_t pair = 0;
    bool ended = false;
  };
  // Waits for the pending pairs, adds them to `stats_`; caller holds mutex_.
  void resolve_locked();

  ProfileOptions options_;
  std::mutex mutex_;
  std::vector<cudaEvent_t> start_, stop_;
  std::vector<Pending> pending_;  // capacity = pool size, reserved once
  std::map<OpKey, Stats> stats_;
  std::map<cudaStream_t, int32_t> stream_ordinal_;
  int64_t dropped_ = 0;     // pairs that failed to record or resolve
  int64_t generation_ = 0;  // resolutions so far: part of each ticket
};

// The aggregation key of one op call.  Rows = first axis of the op's main
// tensor (x, a, q, logits, k or ids, whichever the args have).
template <class Args>
OpKey op_key(const char* op, const Args* args) {
  OpKey k;
  k.op = op;
  if (!args) return k;
  const auto rows = [](const seatrt_tensor* t) -> int64_t { return t && t->ndim > 0 ? t->shape[0] : 0; };
  if constexpr (requires { args->x->shape[0]; }) k.rows = rows(args->x);
  else if constexpr (requires { args->a->shape[0]; }) k.rows = rows(args->a);
  else if constexpr (requires { args->q->shape[0]; }) k.rows = rows(args->q);
  else if constexpr (requires { args->logits->shape[0]; }) k.rows = rows(args->logits);
  else if constexpr (requires { args->k->shape[0]; }) k.rows = rows(args->k);
  else if constexpr (requires { args->ids->shape[0]; }) k.rows = rows(args->ids);
  if constexpr (requires { args->weight->out_features; }) {
    if (args->weight) {
      k.out_features = args->weight->out_features;
      k.in_features = args->weight->in_features;
    }
  }
  if constexpr (requires { args->window; }) k.variant = args->window > 0 ? "window" : "full";
  if constexpr (std::is_same_v<Args, seatrt_elementwise_args>) {
    static constexpr const char* kNames[] = {"add", "mul", "scale", "softcap", "copy"};
    k.variant = args->op >= 0 && args->op < 5 ? kNames[args->op] : "other";
  }
  return k;
}

// The context's profiler, or NULL when profiling is off (or ctx is NULL).
Profiler* profiler_of(seatrt_kernel_context* ctx);

// RAII: times one op slot when `profiler` is non-NULL.  Never throws.
class OpTimer {
 public:
  template <class Args>
  OpTimer(Profiler* profiler, seatrt_stream stream, const char* op, const Args* args)
      : profiler_(profiler), stream_(static_cast<cudaStream_t>(stream)) {
    if (!profiler_) return;
    try {
      pair_ = profiler_->begin(stream_, op_key(op, args));
    } catch (...) {
      pair_ = -1;
    }
  }
  ~OpTimer() {
    if (!profiler_ || pair_ < 0) return;
    try {
      profiler_->end(stream_, pair_);
    } catch (...) {
    }
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  Profiler* profiler_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int64_t pair_ = -1;
};

}  // namespace seatrt::cuda
