// The CUDA provider's operations: the device slots of kernels.h and one
// function per operation kind and per fused operation (fused_args.hpp).
// Each checks its arguments, then enqueues the kernels.  The op functions
// take args already read by the SDK's shared checker (run.cpp).  They
// throw; plugin.cpp wraps every slot in seatrt::sdk::guard.
#pragma once

#include <string>

#include "fused_args.hpp"
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

// ops.cpp
void elementwise(seatrt_kernel_context*, seatrt_stream, const seatrt_elementwise_args*);
void embedding(seatrt_kernel_context*, seatrt_stream, const seatrt_embedding_args*);
void rms_norm(seatrt_kernel_context*, seatrt_stream, const seatrt_rms_norm_args*);
void glu(seatrt_kernel_context*, seatrt_stream, const seatrt_glu_args*);
void rope(seatrt_kernel_context*, seatrt_stream, const seatrt_rope_args*);
void gather_rows(seatrt_kernel_context*, seatrt_stream, const seatrt_gather_rows_args*);
void router_topk(seatrt_kernel_context*, seatrt_stream, const seatrt_router_topk_args*);
void add_rms_norm(seatrt_kernel_context*, seatrt_stream, const AddRmsNormArgs*);
void rms_norm_rope(seatrt_kernel_context*, seatrt_stream, const RmsNormRopeArgs*);
void add_rms_norm_pair(seatrt_kernel_context*, seatrt_stream, const AddRmsNormPairArgs*);

// ops_attention.cpp
void kv_store(seatrt_kernel_context*, seatrt_stream, const seatrt_kv_store_args*);
void attention(seatrt_kernel_context*, seatrt_stream, const seatrt_attention_args*);
void qkv_norm_rope_store(seatrt_kernel_context*, seatrt_stream, const QkvNormRopeStoreArgs*);

// ops_linear.cpp
void weight_layouts(seatrt_kernel_context* ctx, int32_t format, int32_t* layouts, int32_t capacity,
                    int32_t* count);
void prepare_weight(seatrt_kernel_context* ctx, seatrt_linear_weight* weight);
void release_weight(seatrt_kernel_context* ctx, seatrt_linear_weight* weight);
void linear(seatrt_kernel_context*, seatrt_stream, const seatrt_linear_args*);
void moe(seatrt_kernel_context*, seatrt_stream, const seatrt_moe_args*);

// ops_fused.cpp
void linear_multi(seatrt_kernel_context*, seatrt_stream, const LinearMultiArgs*);
void linear_glu(seatrt_kernel_context*, seatrt_stream, const LinearGluArgs*);
void rms_norm_multi(seatrt_kernel_context*, seatrt_stream, const RmsNormMultiArgs*);

// ops_route.cpp
void route(seatrt_kernel_context*, seatrt_stream, const RouteArgs*);

// sample.cpp
void sample(seatrt_kernel_context*, seatrt_stream, const seatrt_sample_args*);

// supports.cpp: why this provider does not run `op` ("" when it does).
// `op` must have passed the shared checker; reads only the args.
std::string unsupported_reason(const seatrt_op& op);

// run.cpp: the shared checker (seatrt/cpp/op_registry.hpp); throws
// INVALID_ARG, or UNSUPPORTED for a newer caller's fields.
void check_op(const seatrt_op* op);
// One operation through the shared checker, then its function.
// Throws INVALID_ARG / UNSUPPORTED as kernels.h says for run().
void run_op(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_op* op);
// supports() of kernels.h.
bool supports_op(const seatrt_op* op);

// plan.cpp: the graph slots.
seatrt_plan* plan(seatrt_kernel_context* ctx, const seatrt_op_graph* graph);
void plan_launch(seatrt_kernel_context* ctx, seatrt_stream stream, seatrt_plan* plan);
void plan_destroy(seatrt_kernel_context* ctx, seatrt_plan* plan);
void plan_describe(const seatrt_plan* plan, seatrt_line_fn line, void* user_data);

}  // namespace seatrt::cuda
