// Device-level slots: probe, contexts (and their options), memory and streams.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "context.hpp"
#include "ops.hpp"
#include "profile.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::cuda {

void probe(seatrt_kernel_probe* out) {
  if (!out) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda probe: out is NULL");
  // The answer cannot change while the library is loaded: compute it once.
  static std::once_flag once;
  static std::string detail;
  static uint32_t score = 0;
  std::call_once(once, [] {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    cudaGetLastError();
    if (err == cudaErrorInsufficientDriver) { detail = "no CUDA driver"; return; }
    if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) { detail = "no device"; return; }
    if (err != cudaSuccess) { detail = std::string("CUDA unavailable: ") + cudaGetErrorName(err); return; }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
      cudaGetLastError();
      detail = "no device (cudaGetDeviceProperties failed)";
      return;
    }
    char gib[32];
    std::snprintf(gib, sizeof gib, "%.0f", static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
    detail = std::string(prop.name) + ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
             gib + " GiB";
    if (prop.major == 9 && prop.minor == 0) score = 200;
    else detail += " (this build has code for sm_90a only)";
  });
  out->score = score;
  out->detail = detail.c_str();
}

namespace {

[[noreturn]] void bad_option(const std::string& what) {
  throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda: [kernels.options] " + what);
}

// The provider's [kernels.options]: prefill_bf16, lm_head_gemm and the
// planner's fuse, streams and pair_min_rows are read here; the profile keys
// are passed on to parse_profile_options (profile.cpp) as TOML text.
struct ProviderOptions {
  bool prefill_bf16 = false;
  bool lm_head_gemm = true;  // README.md: measured faster at batch 1-32
  PlanOptions plan;
  ProfileOptions profile;
};

bool read_bool(toml::table& table, const std::string& key) {
  const auto value = table[key].value<bool>();
  if (!table[key].is_boolean() || !value) bad_option(key + " must be true or false");
  return *value;
}

int64_t read_int(toml::table& table, const std::string& key, int64_t lo, int64_t hi) {
  const auto value = table[key].value<int64_t>();
  if (!table[key].is_integer() || !value || *value < lo || *value > hi)
    bad_option(key + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  return *value;
}

ProviderOptions parse_options(const char* options_toml) {
  ProviderOptions o;
  if (!options_toml || !*options_toml) {
    o.profile = parse_profile_options(options_toml);  // still reads the environment
    return o;
  }
  toml::table table;
  try {
    table = toml::parse(options_toml);
  } catch (const toml::parse_error&) {
    parse_profile_options(options_toml);  // throws the parse error with its line and column
    throw;
  }
  std::vector<std::string> keys;
  for (const auto& [key, value] : table) keys.emplace_back(key.str());
  for (const std::string& key : keys) {
    if (key == "profile" || key == "profile_file") continue;
    if (key == "prefill_bf16") o.prefill_bf16 = read_bool(table, key);
    else if (key == "lm_head_gemm") o.lm_head_gemm = read_bool(table, key);
    else if (key == "fuse") o.plan.fuse = read_bool(table, key);
    else if (key == "streams") o.plan.streams = static_cast<int32_t>(read_int(table, key, 1, 2));
    else if (key == "pair_min_rows") o.plan.pair_min_rows = read_int(table, key, 0, INT64_MAX);
    else
      bad_option("has unknown option '" + key +
                 "' (the cuda provider knows: prefill_bf16, lm_head_gemm, fuse, streams, pair_min_rows, "
                 "profile, profile_file)");
    table.erase(key);
  }
  std::ostringstream rest;
  rest << table;
  o.profile = parse_profile_options(rest.str().c_str());
  return o;
}

}  // namespace

seatrt_kernel_context* create(const char* options_toml, int32_t device_index) {
  const ProviderOptions options = parse_options(options_toml);
  const ProfileOptions& profile = options.profile;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) check(err, "cudaGetDeviceCount");
  if (device_index < 0 || device_index >= count)
    throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda: device index " + std::to_string(device_index) +
                                                 " out of range (" + std::to_string(count) + " devices)");
  check(cudaSetDevice(device_index), "cudaSetDevice");
  auto ctx = std::make_unique<seatrt_kernel_context>();
  ctx->device = device_index;
  ctx->prefill_bf16 = options.prefill_bf16;
  ctx->lm_head_gemm = options.lm_head_gemm;
  ctx->plan_options = options.plan;
  if (profile.enabled) ctx->profiler = new Profiler(profile);
  return ctx.release();
}

void destroy(seatrt_kernel_context* ctx) {
  if (!ctx) return;
  if (ctx->profiler) {
    cudaSetDevice(ctx->device);
    ctx->profiler->dump();
    delete ctx->profiler;
    ctx->profiler = nullptr;
  }
  release_context_memory(ctx);
  delete ctx;
}

void* alloc(seatrt_kernel_context* ctx, size_t bytes) {
  use_device(ctx);
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc of " + std::to_string(bytes) + " bytes");
  return p;
}

void free_memory(seatrt_kernel_context* ctx, void* ptr) {
  if (!ctx || !ptr) return;
  cudaSetDevice(ctx->device);
  cudaFree(ptr);
  cudaGetLastError();
}

void memory_info(seatrt_kernel_context* ctx, size_t* free_bytes, size_t* total_bytes) {
  use_device(ctx);
  if (!free_bytes || !total_bytes) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda memory_info: NULL output");
  check(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
}

void copy(seatrt_kernel_context* ctx, seatrt_stream stream, void* dst, int32_t dst_kind, const void* src,
          int32_t src_kind, size_t bytes) {
  use_device(ctx);
  if (bytes == 0) return;
  if (!dst || !src) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda copy: NULL pointer");
  const bool d = dst_kind == SEATRT_DEVICE_CUDA, s = src_kind == SEATRT_DEVICE_CUDA;
  if ((dst_kind != SEATRT_DEVICE_CPU && !d) || (src_kind != SEATRT_DEVICE_CPU && !s))
    throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda copy: unknown device kind");
  const cudaMemcpyKind kind = d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  check(cudaMemcpyAsync(dst, src, bytes, kind, static_cast<cudaStream_t>(stream)), "cudaMemcpyAsync");
}

void memset_zero(seatrt_kernel_context* ctx, seatrt_stream stream, void* dst, size_t bytes) {
  use_device(ctx);
  if (bytes == 0) return;
  check(cudaMemsetAsync(dst, 0, bytes, static_cast<cudaStream_t>(stream)), "cudaMemsetAsync");
}

seatrt_stream stream_create(seatrt_kernel_context* ctx) {
  use_device(ctx);
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  return s;
}

void stream_destroy(seatrt_kernel_context* ctx, seatrt_stream stream) {
  if (!ctx || !stream) return;
  cudaSetDevice(ctx->device);
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  {
    std::lock_guard<std::mutex> lock(ctx->mutex);
    auto it = ctx->scratch.find(stream);
    if (it != ctx->scratch.end()) {
      if (it->second.ptr) cudaFree(it->second.ptr);
      ctx->scratch.erase(it);
    }
  }
  cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  cudaGetLastError();
}

void stream_sync(seatrt_kernel_context* ctx, seatrt_stream stream) {
  use_device(ctx);
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "execution error on the stream");
}

}  // namespace seatrt::cuda
