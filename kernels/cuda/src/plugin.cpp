// The "cuda" kernel-provider plugin: its descriptor and kernel table.  Every
// slot runs its implementation (ops.hpp) inside seatrt::sdk::guard, so no
// exception crosses the ABI.  Operations go through run/supports
// (run.cpp); graphs through the planner (plan.cpp).
#include "ops.hpp"
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

// No status to return: any failure answers "no".
int32_t supports(seatrt_kernel_context*, const seatrt_op* op) {
  try {
    return cu::supports_op(op) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

seatrt_status* run(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_op* op) {
  return sdk::guard([&] { cu::run_op(ctx, s, op); });
}

seatrt_status* plan(seatrt_kernel_context* ctx, const seatrt_op_graph* graph, seatrt_plan** out) {
  return sdk::guard([&] {
    if (!out) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda plan: out is NULL");
    *out = nullptr;
    *out = cu::plan(ctx, graph);
  });
}

seatrt_status* plan_launch(seatrt_kernel_context* ctx, seatrt_stream s, seatrt_plan* p) {
  return sdk::guard([&] { cu::plan_launch(ctx, s, p); });
}

void plan_destroy(seatrt_kernel_context* ctx, seatrt_plan* p) { sdk::guard([&] { cu::plan_destroy(ctx, p); }); }

seatrt_status* plan_describe(seatrt_kernel_context*, const seatrt_plan* p, seatrt_line_fn line, void* user_data) {
  return sdk::guard([&] { cu::plan_describe(p, line, user_data); });
}

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
  t.weight_layouts = weight_layouts;
  t.prepare_weight = prepare_weight;
  t.release_weight = release_weight;
  t.supports = supports;
  t.run = run;
  t.plan = plan;
  t.plan_launch = plan_launch;
  t.plan_destroy = plan_destroy;
  t.plan_describe = plan_describe;
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
