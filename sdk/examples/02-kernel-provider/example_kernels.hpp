// Example 2, shared declarations: the device-management slots (context.cpp)
// and the operations (ops.cpp: elementwise and rms_norm) of the
// "example-cpu" provider.
#pragma once

#include "seatrt/cpp/plugin.hpp"

namespace example_kernels {

// Context, memory, streams, weights: what every provider must have.
seatrt_status* probe(seatrt_kernel_probe* out);
seatrt_status* create(const char* options_toml, int32_t device_index, seatrt_kernel_context** out);
void destroy(seatrt_kernel_context* ctx);
seatrt_status* alloc(seatrt_kernel_context* ctx, size_t bytes, void** out);
void free_memory(seatrt_kernel_context* ctx, void* ptr);
seatrt_status* memory_info(seatrt_kernel_context* ctx, size_t* free_bytes, size_t* total_bytes);
seatrt_status* copy(seatrt_kernel_context* ctx, seatrt_stream stream, void* dst, int32_t dst_kind,
                    const void* src, int32_t src_kind, size_t bytes);
seatrt_status* memset_zero(seatrt_kernel_context* ctx, seatrt_stream stream, void* dst, size_t bytes);
seatrt_status* stream_create(seatrt_kernel_context* ctx, seatrt_stream* out);
void stream_destroy(seatrt_kernel_context* ctx, seatrt_stream stream);
seatrt_status* stream_sync(seatrt_kernel_context* ctx, seatrt_stream stream);
seatrt_status* weight_layouts(seatrt_kernel_context* ctx, int32_t format, int32_t* layouts,
                              int32_t capacity, int32_t* count);

// Operations: 1 when run() takes `op` (elementwise or rms_norm, F32 host
// tensors), and running it.
int32_t supports(seatrt_kernel_context* ctx, const seatrt_op* op);
seatrt_status* run(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_op* op);

}  // namespace example_kernels
