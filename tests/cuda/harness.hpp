// Test harness for the CUDA provider: loads provider plugins through the
// ABI (dlopen + seatrt_plugin_init, a minimal host table), and moves
// host-side arrays to and from a provider's device.  The CUDA provider is
// checked against the CPU provider (kernels/cpu, an independent fp32
// implementation) on the same random inputs.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "seatrt/cpp/graph.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/seatrt.h"

namespace seatrt_test {

// Exit code CTest reads as "skipped" (SKIP_RETURN_CODE).
constexpr int kSkipCode = 77;

const seatrt_host_api* test_host();
// Takes a status; throws std::runtime_error with its message if not NULL.
void ok(seatrt_status* s, const std::string& what);
// Takes a status; returns its code (SEATRT_OK for NULL) and frees it.
seatrt_status_code code_of(seatrt_status* s);

// One loaded provider with a context and a stream.
class Provider {
 public:
  Provider(const std::string& path, const char* what);
  ~Provider();
  const seatrt_kernel_api& api() const { return *api_; }
  seatrt_kernel_probe probe() const;
  void open();  // create context + stream
  seatrt_kernel_context* ctx() const { return ctx_; }
  seatrt_stream stream() const { return stream_; }
  int32_t kind() const { return api_->device_kind; }
  void sync();

  // Runs one operation on the provider's stream; the status as run() gave it.
  seatrt_status* run(const seatrt_op& op);
  template <seatrt_op_kind K>
  seatrt_status* run(const typename seatrt::sdk::OpArgs<K>::type& args) {
    return run(seatrt::sdk::make_op<K>(args));
  }
  // Runs a builder's nodes one by one through run(), in order (the reference
  // a plan must equal).
  void run_nodes(const seatrt::sdk::GraphBuilder& g);

  // A device tensor of `shape` holding `bytes` (raw, dtype-encoded).
  seatrt_tensor upload(const void* bytes, size_t nbytes, int32_t dtype, std::vector<int64_t> shape);
  seatrt_tensor empty(int32_t dtype, std::vector<int64_t> shape);
  std::vector<uint8_t> download(const seatrt_tensor& t);
  std::vector<float> download_f32(const seatrt_tensor& t);  // F32 or BF16 tensors as floats

 private:
  void* lib_ = nullptr;
  const seatrt_kernel_api* api_ = nullptr;
  seatrt_kernel_context* ctx_ = nullptr;
  seatrt_stream stream_ = nullptr;
  std::vector<void*> allocations_;
};

// A plan of a graph on a provider, destroyed with it.
class Plan {
 public:
  // Plans g.graph(name, launches) on p; throws when plan() fails.
  Plan(Provider& p, seatrt::sdk::GraphBuilder& g, const std::string& name, int32_t launches = 1);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  void launch();  // on the provider's stream
  // plan_describe's lines, joined with newlines.
  std::string describe() const;

 private:
  Provider& p_;
  seatrt_plan* plan_ = nullptr;
};

// The two providers under test (set up by main).
Provider& cuda();
Provider& cpu();

std::mt19937& rng();  // seeded from std::random_device; seed printed by main

size_t elem_bytes(int32_t dtype);
int64_t count(const std::vector<int64_t>& shape);
uint16_t to_bf16(float f);
float from_bf16(uint16_t b);
// n random floats, normal(0, sd), encoded as dtype (F32 or BF16).
std::vector<uint8_t> random_values(int64_t n, int32_t dtype, float sd = 1.0f);
std::vector<float> decode(const std::vector<uint8_t>& raw, int32_t dtype);

// The same host data uploaded to both providers.
struct Pair {
  seatrt_tensor cuda;
  seatrt_tensor cpu;
  const seatrt_tensor& on(bool gpu) const { return gpu ? cuda : cpu; }
};
Pair both(const std::vector<uint8_t>& raw, int32_t dtype, std::vector<int64_t> shape);
Pair both_empty(int32_t dtype, std::vector<int64_t> shape);
Pair both_random(int32_t dtype, std::vector<int64_t> shape, float sd = 1.0f);

// The args of an elementwise op (b may be NULL for the unary ops).
seatrt_elementwise_args ew(int op, const seatrt_tensor* a, const seatrt_tensor* b, float alpha, seatrt_tensor* out);

// max |a - b| / max(max |b|, floor): the relative error of a against b.
// NaN anywhere gives infinity, so it never passes a bound.
double rel_error(const std::vector<float>& a, const std::vector<float>& b, double floor = 1e-6);

}  // namespace seatrt_test
