// The "cuda" kernel-provider plugin: its descriptor and kernel table.  Every
// slot runs its implementation (ops.hpp) inside seatrt::sdk::guard, so no
// exception crosses the ABI.
#include "ops.hpp"
#include "profile.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace {

namespace sdk = seatrt::sdk;
namespace cu = seatrt::cuda;

constexpr const char* kName = "cuda";

seatrt_status* initialize(const seatrt_host_api* host) {
  sdk::set_host(host);
  return nullptr;
}

seatrt_status* probe(seatrt_kernel_probe* out) { return sdk::guard([&] { cu::probe(out); }); }

seatrt_status* create(const char* options, int32_t device, seatrt_kernel_context** out) {
  return sdk::guard([&] {
    if (!out) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda create: out is NULL");
    *out = cu::create(options, device);
  });
}

void destroy(seatrt_kernel_context* ctx) { sdk::guard([&] { cu::destroy(ctx); }); }

seatrt_status* alloc(seatrt_kernel_context* ctx, size_t bytes, void** out) {
  return sdk::guard([&] {
    if (!out) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda alloc: out is NULL");
    *out = cu::alloc(ctx, bytes);
  });
}

void free_memory(seatrt_kernel_context* ctx, void* ptr) { sdk::guard([&] { cu::free_memory(ctx, ptr); }); }

seatrt_status* memory_info(seatrt_kernel_context* ctx, size_t* f, size_t* t) {
  return sdk::guard([&] { cu::memory_info(ctx, f, t); });
}

seatrt_status* copy(seatrt_kernel_context* ctx, seatrt_stream s, void* dst, int32_t dk, const void* src, int32_t sk,
                    size_t bytes) {
  return sdk::guard([&] { cu::copy(ctx, s, dst, dk, src, sk, bytes); });
}

seatrt_status* memset_zero(seatrt_kernel_context* ctx, seatrt_stream s, void* dst, size_t bytes) {
  return sdk::guard([&] { cu::memset_zero(ctx, s, dst, bytes); });
}

seatrt_status* stream_create(seatrt_kernel_context* ctx, seatrt_stream* out) {
  return sdk::guard([&] {
    if (!out) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda stream_create: out is NULL");
    *out = cu::stream_create(ctx);
  });
}

void stream_destroy(seatrt_kernel_context* ctx, seatrt_stream s) { sdk::guard([&] { cu::stream_destroy(ctx, s); }); }

seatrt_status* stream_sync(seatrt_kernel_context* ctx, seatrt_stream s) {
  return sdk::guard([&] { cu::stream_sync(ctx, s); });
}
seatrt_status* stream_wait(seatrt_kernel_context* ctx, seatrt_stream waiter, seatrt_stream signaler) {
  return sdk::guard([&] { cu::stream_wait(ctx, waiter, signaler); });
}

seatrt_status* weight_layouts(seatrt_kernel_context* ctx, int32_t format, int32_t* layouts, int32_t capacity,
                              int32_t* count) {
  return sdk::guard([&] { cu::weight_layouts(ctx, format, layouts, capacity, count); });
}

seatrt_status* prepare_weight(seatrt_kernel_context* ctx, seatrt_linear_weight* w) {
  return sdk::guard([&] { cu::prepare_weight(ctx, w); });
}

void release_weight(seatrt_kernel_context* ctx, seatrt_linear_weight* w) {
  sdk::guard([&] { cu::release_weight(ctx, w); });
}

// One wrapper per op: same shape for all of them.  The timer records GPU
// time per op only when the context's profiler is on (profile.hpp).
#define SEATRT_CUDA_OP(name, args_type)                                                     \
  seatrt_status* name(seatrt_kernel_context* ctx, seatrt_stream s, const args_type* args) { \
    return sdk::guard([&] {                                                                 \
      const cu::OpTimer timer(cu::profiler_of(ctx), s, #name, args);                        \
      cu::name(ctx, s, args);                                                               \
    });                                                                                     \
  }
SEATRT_CUDA_OP(elementwise, seatrt_elementwise_args)
SEATRT_CUDA_OP(embedding, seatrt_embedding_args)
SEATRT_CUDA_OP(rms_norm, seatrt_rms_norm_args)
SEATRT_CUDA_OP(linear, seatrt_linear_args)
SEATRT_CUDA_OP(glu, seatrt_glu_args)
SEATRT_CUDA_OP(rope, seatrt_rope_args)
SEATRT_CUDA_OP(kv_store, seatrt_kv_store_args)
SEATRT_CUDA_OP(attention, seatrt_attention_args)
SEATRT_CUDA_OP(router_topk, seatrt_router_topk_args)
SEATRT_CUDA_OP(moe, seatrt_moe_args)
SEATRT_CUDA_OP(gather_rows, seatrt_gather_rows_args)
SEATRT_CUDA_OP(sample, seatrt_sample_args)
SEATRT_CUDA_OP(add_rms_norm, seatrt_add_rms_norm_args)
SEATRT_CUDA_OP(rms_norm_rope, seatrt_rms_norm_rope_args)
SEATRT_CUDA_OP(linear_multi, seatrt_linear_multi_args)
SEATRT_CUDA_OP(linear_glu, seatrt_linear_glu_args)
SEATRT_CUDA_OP(rms_norm_multi, seatrt_rms_norm_multi_args)
SEATRT_CUDA_OP(qkv_norm_rope_store, seatrt_qkv_norm_rope_store_args)
SEATRT_CUDA_OP(add_rms_norm_pair, seatrt_add_rms_norm_pair_args)
SEATRT_CUDA_OP(route, seatrt_route_args)
SEATRT_CUDA_OP(prefetch_weights, seatrt_prefetch_weights_args)
#undef SEATRT_CUDA_OP

seatrt_status* graph_begin(seatrt_kernel_context* ctx, seatrt_stream s) {
  return sdk::guard([&] { cu::graph_begin(ctx, s); });
}
seatrt_status* graph_end(seatrt_kernel_context* ctx, seatrt_stream s, seatrt_graph** out) {
  return sdk::guard([&] {
    if (!out) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda graph_end: out is NULL");
    *out = cu::graph_end(ctx, s);
  });
}
seatrt_status* graph_launch(seatrt_kernel_context* ctx, seatrt_stream s, seatrt_graph* g) {
  return sdk::guard([&] { cu::graph_launch(ctx, s, g); });
}
void graph_destroy(seatrt_kernel_context* ctx, seatrt_graph* g) { sdk::guard([&] { cu::graph_destroy(ctx, g); }); }

seatrt_kernel_api make_table() {
  seatrt_kernel_api t{};
  t.struct_size = sizeof(seatrt_kernel_api);
  t.device_kind = SEATRT_DEVICE_CUDA;
  t.probe = probe;
  t.create = create;
  t.destroy = destroy;
  t.alloc = alloc;
  t.free_memory = free_memory;
  t.memory_info = memory_info;
  t.copy = copy;
  t.memset_zero = memset_zero;
  t.stream_create = stream_create;
  t.stream_destroy = stream_destroy;
  t.stream_sync = stream_sync;
  t.stream_wait = stream_wait;
  t.weight_layouts = weight_layouts;
  t.prepare_weight = prepare_weight;
  t.release_weight = release_weight;
  t.elementwise = elementwise;
  t.embedding = embedding;
  t.rms_norm = rms_norm;
  t.linear = linear;
  t.glu = glu;
  t.rope = rope;
  t.kv_store = kv_store;
  t.attention = attention;
  t.router_topk = router_topk;
  t.moe = moe;
  t.gather_rows = gather_rows;
  t.sample = sample;
  t.sample_features = SEATRT_SAMPLE_LOGIT_BIAS;  // ABI 1.7
  t.graph_begin = graph_begin;
  t.graph_end = graph_end;
  t.graph_launch = graph_launch;
  t.graph_destroy = graph_destroy;
  t.add_rms_norm = add_rms_norm;
  t.rms_norm_rope = rms_norm_rope;
  t.linear_multi = linear_multi;
  t.linear_glu = linear_glu;
  t.rms_norm_multi = rms_norm_multi;
  t.qkv_norm_rope_store = qkv_norm_rope_store;
  t.add_rms_norm_pair = add_rms_norm_pair;
  t.route = route;  // ABI 1.5
  t.prefetch_weights = prefetch_weights;  // ABI 1.6
  return t;
}

const seatrt_kernel_api kTable = make_table();

seatrt_plugin make_plugin() {
  seatrt_plugin p = sdk::describe(SEATRT_KIND_KERNELS, kName, "0.1.0",
                                  "Hopper (sm_90a) kernels: NVFP4A16 GEMV/MoE, paged attention, sampling");
  p.initialize = initialize;
  p.kernels = &kTable;
  return p;
}

const seatrt_plugin kPlugin = make_plugin();

}  // namespace

SEATRT_DEFINE_PLUGIN(kPlugin)
