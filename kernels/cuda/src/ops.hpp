// The op slots of the CUDA provider's kernel table (the C signatures of
// kernels.h).  Each checks its arguments, then enqueues the kernels.  They
// throw; plugin.cpp wraps every one in seatrt::sdk::guard.
#pragma once

#include "seatrt/seatrt.h"

namespace seatrt::cuda {

// device.cpp
void probe(seatrt_kernel_probe* out);
seatrt_kernel_context* create(const char* options_toml, int32_t device_index);
void destroy(seatrt_kernel_context* ctx);
void* alloc(seatrt_kernel_context* ctx, size_t bytes);
void free_memory(seatrt_kernel_context* ctx, void* ptr);
void memory_info(seatrt_kernel_context* ctx, size_t* free_bytes, size_t* total_bytes);
void copy(seatrt_kernel_context* ctx, seatrt_stream stream, void* dst, int32_t dst_kind, const void* src,
          int32_t src_kind, size_t bytes);
void memset_zero(seatrt_kernel_context* ctx, seatrt_stream stream, void* dst, size_t bytes);
seatrt_stream stream_create(seatrt_kernel_context* ctx);
void stream_destroy(seatrt_kernel_context* ctx, seatrt_stream stream);
void stream_sync(seatrt_kernel_context* ctx, seatrt_stream stream);
void stream_wait(seatrt_kernel_context* ctx, seatrt_stream waiter, seatrt_stream signaler);  // ABI 1.3
void graph_begin(seatrt_kernel_context* ctx, seatrt_stream stream);
seatrt_graph* graph_end(seatrt_kernel_context* ctx, seatrt_stream stream);
void graph_launch(seatrt_kernel_context* ctx, seatrt_stream stream, seatrt_graph* graph);
void graph_destroy(seatrt_kernel_context* ctx, seatrt_graph* graph);

// ops.cpp
void elementwise(seatrt_kernel_context*, seatrt_stream, const seatrt_elementwise_args*);
void embedding(seatrt_kernel_context*, seatrt_stream, const seatrt_embedding_args*);
void rms_norm(seatrt_kernel_context*, seatrt_stream, const seatrt_rms_norm_args*);
void glu(seatrt_kernel_context*, seatrt_stream, const seatrt_glu_args*);
void rope(seatrt_kernel_context*, seatrt_stream, const seatrt_rope_args*);
void gather_rows(seatrt_kernel_context*, seatrt_stream, const seatrt_gather_rows_args*);
void router_topk(seatrt_kernel_context*, seatrt_stream, const seatrt_router_topk_args*);
void add_rms_norm(seatrt_kernel_context*, seatrt_stream, const seatrt_add_rms_norm_args*);    // ABI 1.1
void rms_norm_rope(seatrt_kernel_context*, seatrt_stream, const seatrt_rms_norm_rope_args*);  // ABI 1.1
void add_rms_norm_pair(seatrt_kernel_context*, seatrt_stream, const seatrt_add_rms_norm_pair_args*);  // ABI 1.4

// ops_attention.cpp
void kv_store(seatrt_kernel_context*, seatrt_stream, const seatrt_kv_store_args*);
void attention(seatrt_kernel_context*, seatrt_stream, const seatrt_attention_args*);
void qkv_norm_rope_store(seatrt_kernel_context*, seatrt_stream, const seatrt_qkv_norm_rope_store_args*);  // ABI 1.4

// ops_linear.cpp
void weight_layouts(seatrt_kernel_context* ctx, int32_t format, int32_t* layouts, int32_t capacity,
                    int32_t* count);
void prepare_weight(seatrt_kernel_context* ctx, seatrt_linear_weight* weight);
void release_weight(seatrt_kernel_context* ctx, seatrt_linear_weight* weight);
void linear(seatrt_kernel_context*, seatrt_stream, const seatrt_linear_args*);
void moe(seatrt_kernel_context*, seatrt_stream, const seatrt_moe_args*);

// ops_fused.cpp (ABI 1.2)
void linear_multi(seatrt_kernel_context*, seatrt_stream, const seatrt_linear_multi_args*);
void linear_glu(seatrt_kernel_context*, seatrt_stream, const seatrt_linear_glu_args*);
void rms_norm_multi(seatrt_kernel_context*, seatrt_stream, const seatrt_rms_norm_multi_args*);

// ops_route.cpp (ABI 1.5)
void route(seatrt_kernel_context*, seatrt_stream, const seatrt_route_args*);

// ops_prefetch.cpp (ABI 1.6)
void prefetch_weights(seatrt_kernel_context*, seatrt_stream, const seatrt_prefetch_weights_args*);

// sample.cpp
void sample(seatrt_kernel_context*, seatrt_stream, const seatrt_sample_args*);

}  // namespace seatrt::cuda
