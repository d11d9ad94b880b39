// Example 2: context, memory and streams of a CPU provider.  Memory is host
// memory, work runs synchronously, so a stream is only a token.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "example_kernels.hpp"

struct seatrt_kernel_context {
  int32_t device_index;
};

namespace example_kernels {

using seatrt::sdk::Error;
using seatrt::sdk::guard;

seatrt_status* probe(seatrt_kernel_probe* out) {
  // May run before initialize(): no host table yet, so it must not fail.
  if (out == nullptr) return nullptr;
  out->score = 1;  // a CPU is always there; GPU providers answer >= 100
  out->detail = "example CPU provider (F32 elementwise and rms_norm only)";
  return nullptr;
}

seatrt_status* create(const char* /*options_toml*/, int32_t device_index,
                      seatrt_kernel_context** out) {
  return guard([&] {
    if (device_index != 0) throw Error(SEATRT_ERR_INVALID_ARG, "example-cpu has one device: 0");
    *out = new seatrt_kernel_context{device_index};
  });
}

void destroy(seatrt_kernel_context* ctx) { delete ctx; }

seatrt_status* alloc(seatrt_kernel_context*, size_t bytes, void** out) {
  return guard([&] {
    // 256-byte alignment (kernels.h); aligned_alloc wants a multiple of it.
    const size_t rounded = (bytes + 255) / 256 * 256;
    *out = std::aligned_alloc(256, rounded == 0 ? 256 : rounded);
    if (*out == nullptr) throw Error(SEATRT_ERR_OUT_OF_MEMORY, "example-cpu: out of host memory");
  });
}

void free_memory(seatrt_kernel_context*, void* ptr) { std::free(ptr); }

seatrt_status* memory_info(seatrt_kernel_context*, size_t* free_bytes, size_t* total_bytes) {
  return guard([&] {
    const long page = sysconf(_SC_PAGESIZE);
    *free_bytes = static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<size_t>(page);
    *total_bytes = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(page);
  });
}

seatrt_status* copy(seatrt_kernel_context*, seatrt_stream, void* dst, int32_t dst_kind,
                    const void* src, int32_t src_kind, size_t bytes) {
  return guard([&] {
    if (dst_kind != SEATRT_DEVICE_CPU || src_kind != SEATRT_DEVICE_CPU)
      throw Error(SEATRT_ERR_UNSUPPORTED, "example-cpu copies host memory only");
    if (bytes) std::memmove(dst, src, bytes);
  });
}

seatrt_status* memset_zero(seatrt_kernel_context*, seatrt_stream, void* dst, size_t bytes) {
  if (bytes) std::memset(dst, 0, bytes);
  return nullptr;
}

seatrt_status* stream_create(seatrt_kernel_context*, seatrt_stream* out) {
  *out = nullptr;  // everything is synchronous: NULL is a valid stream here
  return nullptr;
}

void stream_destroy(seatrt_kernel_context*, seatrt_stream) {}

seatrt_status* stream_sync(seatrt_kernel_context*, seatrt_stream) { return nullptr; }

seatrt_status* weight_layouts(seatrt_kernel_context*, int32_t format, int32_t* layouts,
                              int32_t capacity, int32_t* count) {
  return guard([&] {
    // No linear op here, but the table must still answer: dense row-major
    // is what a fallback linear would read.
    *count = 0;
    if (format == SEATRT_WFMT_DENSE && capacity > 0) {
      layouts[0] = SEATRT_LAYOUT_DENSE_ROW_MAJOR;
      *count = 1;
    }
  });
}

}  // namespace example_kernels
