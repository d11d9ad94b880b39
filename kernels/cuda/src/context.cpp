#include "context.hpp"

#include "seatrt/cpp/plugin.hpp"

namespace seatrt::cuda {

void check(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return;
  seatrt_status_code code = SEATRT_ERR_INTERNAL;
  switch (err) {
    case cudaErrorMemoryAllocation: code = SEATRT_ERR_OUT_OF_MEMORY; break;
    case cudaErrorInvalidValue: case cudaErrorInvalidDevicePointer: case cudaErrorInvalidDevice:
      code = SEATRT_ERR_INVALID_ARG; break;
    case cudaErrorNoDevice: case cudaErrorInsufficientDriver: case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated: case cudaErrorNotReady:
      code = SEATRT_ERR_UNAVAILABLE; break;
    default: break;
  }
  cudaGetLastError();  // clear a non-sticky error so later calls do not see it
  throw sdk::Error(code, "cuda: " + what + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

void use_device(seatrt_kernel_context* ctx) {
  if (!ctx) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda: context is NULL");
  check(cudaSetDevice(ctx->device), "cudaSetDevice");
}

namespace {

// Grows `s` (under ctx->mutex) to at least `bytes`; `what` names it in errors.
void grow(seatrt_kernel_context::Scratch& s, seatrt_stream stream, size_t bytes, const char* what) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture), "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone)
    throw sdk::Error(SEATRT_ERR_UNAVAILABLE, std::string("cuda: ") + what +
                                                 " memory must grow while a graph is being captured; run the "
                                                 "same shapes once before capturing");
  if (s.ptr) s.retired.push_back(s.ptr);  // see Scratch::retired
  s.ptr = nullptr;
  s.bytes = 0;
  const size_t grown = bytes + bytes / 4;
  check(cudaMalloc(&s.ptr, grown), std::string("cudaMalloc ") + what + " of " + std::to_string(grown) + " bytes");
  s.bytes = grown;
}

}  // namespace

void* scratch(seatrt_kernel_context* ctx, seatrt_stream stream, size_t bytes) {
  std::lock_guard<std::mutex> lock(ctx->mutex);
  auto& s = ctx->scratch[stream];
  if (s.bytes < bytes) grow(s, stream, bytes, "scratch");
  return s.ptr;
}

void* route_buffer(seatrt_kernel_context* ctx, seatrt_stream stream, size_t bytes) {
  std::lock_guard<std::mutex> lock(ctx->mutex);
  auto& s = ctx->route[stream];
  if (s.bytes >= bytes) return s.ptr;
  grow(s, stream, bytes < 256 ? 256 : bytes, "route buffer");
  // In stream order before the launch that reads it.
  check(cudaMemsetAsync(s.ptr, 0, 256, static_cast<cudaStream_t>(stream)), "cudaMemsetAsync (route counter)");
  return s.ptr;
}

void* pinned(seatrt_kernel_context* ctx, size_t bytes) {
  std::lock_guard<std::mutex> lock(ctx->mutex);
  if (ctx->pinned_bytes >= bytes) return ctx->pinned;
  if (ctx->pinned) cudaFreeHost(ctx->pinned);
  ctx->pinned = nullptr;
  ctx->pinned_bytes = 0;
  check(cudaMallocHost(&ctx->pinned, bytes), "cudaMallocHost of " + std::to_string(bytes) + " bytes");
  ctx->pinned_bytes = bytes;
  return ctx->pinned;
}

void release_context_memory(seatrt_kernel_context* ctx) {
  cudaSetDevice(ctx->device);
  cudaDeviceSynchronize();
  for (auto& [stream, s] : ctx->scratch) {
    if (s.ptr) cudaFree(s.ptr);
    for (void* p : s.retired) cudaFree(p);
  }
  ctx->scratch.clear();
  for (auto& [stream, s] : ctx->route) {
    if (s.ptr) cudaFree(s.ptr);
    for (void* p : s.retired) cudaFree(p);
  }
  ctx->route.clear();
  for (auto& [key, t] : ctx->moe_tables)
    if (t.device) cudaFree(t.device);
  ctx->moe_tables.clear();
  if (ctx->pinned) cudaFreeHost(ctx->pinned);
  ctx->pinned = nullptr;
}

}  // namespace seatrt::cuda
