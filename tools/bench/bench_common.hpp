// What the op benchmarks (bench_ops, bench_prefill, bench_attention) share:
// a minimal host status API, loading the CUDA provider through the plugin
// ABI, device buffers, tensor descriptors, timing and the copy-bandwidth
// ceiling.  Header only on purpose: bench_ops.cpp must stay buildable by a
// plain g++ with only the SDK headers (docs/benchmarks.md).
#ifndef SEATRT_TOOLS_BENCH_COMMON_HPP
#define SEATRT_TOOLS_BENCH_COMMON_HPP

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "seatrt/cpp/graph.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/cpp/tensor.hpp"
#include "seatrt/seatrt.h"

namespace seatrt_bench {

// The host API the provider reports errors through: a status is a code and
// a message; logging is dropped.
struct Status { seatrt_status_code code; std::string msg; };
inline seatrt_status* st_create(seatrt_status_code c, const char* m) { return reinterpret_cast<seatrt_status*>(new Status{c, m ? m : ""}); }
inline void st_free(seatrt_status* s) { delete reinterpret_cast<Status*>(s); }
inline seatrt_status_code st_code(const seatrt_status* s) { return s ? reinterpret_cast<const Status*>(s)->code : SEATRT_OK; }
inline const char* st_msg(const seatrt_status* s) { return s ? reinterpret_cast<const Status*>(s)->msg.c_str() : ""; }
inline void st_log(seatrt_log_level, const char*, const char*) {}

// Throws with `what` and the provider's message when `s` is an error.
inline void ok(seatrt_status* s, const char* what) {
  if (!s) return;
  const std::string m = st_msg(s);
  st_free(s);
  throw std::runtime_error(std::string(what) + ": " + m);
}

// The provider, its context and the one stream every benchmark runs on.
inline const seatrt_kernel_api* K = nullptr;
inline seatrt_kernel_context* C = nullptr;
inline seatrt_stream S = nullptr;

// Loads the provider at `path`, prints its probe and, when it can run here,
// creates K, C and S.  False when the probe scores 0 (no usable device):
// the caller then exits 77 (skipped).
inline bool open_provider(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw std::runtime_error(dlerror());
  static seatrt_host_api host{sizeof(seatrt_host_api), SEATRT_ABI_MAJOR, SEATRT_ABI_MINOR, 0, st_create, st_free, st_code, st_msg, st_log};
  auto init = reinterpret_cast<seatrt_plugin_init_fn>(dlsym(lib, SEATRT_PLUGIN_ENTRY_SYMBOL));
  const seatrt_plugin* p = init(&host);
  ok(p->initialize(&host), "initialize");
  K = p->kernels;
  seatrt_kernel_probe pr{sizeof(seatrt_kernel_probe), 0, nullptr};
  ok(K->probe(&pr), "probe");
  std::printf("device: %s (score %u)\n", pr.detail, pr.score);
  if (pr.score == 0) return false;
  ok(K->create("", 0, &C), "create");
  ok(K->stream_create(C, &S), "stream");
  return true;
}

inline void* dev_alloc(size_t bytes) {
  void* p = nullptr;
  ok(K->alloc(C, bytes, &p), "alloc");
  return p;
}

inline void upload(void* dst, const void* src, size_t bytes) {
  ok(K->copy(C, S, dst, SEATRT_DEVICE_CUDA, src, SEATRT_DEVICE_CPU, bytes), "upload");
}

// A row-major device tensor.
inline seatrt_tensor tensor(void* data, int32_t dtype, std::initializer_list<int64_t> shape) {
  return seatrt::sdk::contiguous_tensor(data, dtype, shape, SEATRT_DEVICE_CUDA);
}
inline seatrt_tensor tensor(void* data, int32_t dtype, int64_t rows, int64_t cols) {
  return tensor(data, dtype, {rows, cols});
}

// An NVFP4 weight descriptor (compressed-tensors row-major, groups of 16)
// of `out` x `in`, its buffers and scales still to be filled in.
inline seatrt_linear_weight nvfp4_shape(int64_t out, int64_t in) {
  seatrt_linear_weight w{};
  w.struct_size = sizeof w;
  w.format = SEATRT_WFMT_NVFP4;
  w.layout = SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR;
  w.group_size = 16;
  w.out_features = out;
  w.in_features = in;
  return w;
}

inline double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Median seconds per call of `step` over `reps` timed runs of `iters` each,
// after one warm-up call.
inline double time_it(const std::function<void()>& step, int iters, int reps = 5) {
  step();
  ok(K->stream_sync(C, S), "sync");
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    for (int i = 0; i < iters; ++i) step();
    ok(K->stream_sync(C, S), "sync");
    t.push_back((now() - t0) / iters);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// While time_plan records a step, the operations it runs are appended here
// instead of run.
inline seatrt::sdk::GraphBuilder* recording = nullptr;

// Appends an operation to `g` with copies of the tensor descriptors it
// points at: a step's descriptors are often its locals, and a plan keeps
// pointers into its graph.  Weights and caches must outlive the plan.
template <seatrt_op_kind Kind>
void record(seatrt::sdk::GraphBuilder& g, const typename seatrt::sdk::OpArgs<Kind>::type& args, const char* what) {
  auto& copy = g.add<Kind>(args, what);
  auto* bytes = reinterpret_cast<char*>(&copy);
  for (const seatrt::sdk::OpField& f : seatrt::sdk::op_info(Kind)->fields) {
    if (f.type != seatrt::sdk::FieldType::tensor) continue;
    const seatrt_tensor* t = nullptr;
    std::memcpy(&t, bytes + f.offset, sizeof t);
    if (!t) continue;
    const seatrt_tensor* kept = g.tensor(*t);
    std::memcpy(bytes + f.offset, &kept, sizeof kept);
  }
}

// Runs one operation on S, or records it while a plan is being recorded.
template <seatrt_op_kind Kind>
void run(const typename seatrt::sdk::OpArgs<Kind>::type& args, const char* what) {
  if (recording) return record<Kind>(*recording, args, what);
  const seatrt_op op = seatrt::sdk::make_op<Kind>(args);
  ok(K->run(C, S, &op), what);
}

// Same as time_it, launching `step` recorded into a plan made for many
// launches (what a repeating decode step runs).
inline double time_graph(const std::function<void()>& step, int iters) {
  step();  // uploads tables / grows scratch before planning
  ok(K->stream_sync(C, S), "sync");
  seatrt::sdk::GraphBuilder g;
  recording = &g;
  step();
  recording = nullptr;
  const seatrt_op_graph graph = g.graph("bench step", 0);
  seatrt_plan* plan = nullptr;
  ok(K->plan(C, &graph, &plan), "plan");
  const double t = time_it([&] { ok(K->plan_launch(C, S, plan), "plan_launch"); }, iters);
  K->plan_destroy(C, plan);
  return t;
}

// Device-to-device copy bandwidth (bytes read + written per second) over a
// `bytes` copy, median of 3 x 10; prints it and returns it.
inline double copy_bandwidth(size_t bytes) {
  void* a = dev_alloc(bytes);
  void* b = dev_alloc(bytes);
  const double tc = time_it([&] { ok(K->copy(C, S, b, SEATRT_DEVICE_CUDA, a, SEATRT_DEVICE_CUDA, bytes), "copy"); }, 10, 3);
  const double bw = 2.0 * static_cast<double>(bytes) / tc;
  std::printf("copy bandwidth: %.3f TB/s (%zu GiB D2D, median of 3 x 10)\n", bw / 1e12, bytes >> 30);
  K->free_memory(C, a);
  K->free_memory(C, b);
  return bw;
}

// "1,4,8" -> {1, 4, 8}; stops at the first item that is not a number.
inline std::vector<int64_t> parse_list(const char* s) {
  std::vector<int64_t> v;
  while (s && *s) {
    char* end = nullptr;
    v.push_back(std::strtoll(s, &end, 10));
    if (end == s) break;
    s = *end == ',' ? end + 1 : end;
  }
  return v;
}

}  // namespace seatrt_bench

#endif  // SEATRT_TOOLS_BENCH_COMMON_HPP
