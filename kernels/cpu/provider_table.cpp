// The C table: every slot converts exceptions to statuses (sdk::guard) and
// forwards to the C++ operations (run/supports through op_dispatch.hpp).
// The CPU provider plans nothing: plan and its companions stay NULL and the
// host runs a graph's nodes in order.  Memory is host memory, copies are memcpy,
// streams are empty handles (work completes before a call returns).
#include "provider_table.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "op_dispatch.hpp"
#include "ops.hpp"
#include "seatrt/cpp/plugin.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

constexpr size_t kAlignment = 256;

Context& context_of(seatrt_kernel_context* ctx, const char* op) {
  if (!ctx) invalid(op, "context is NULL");
  return *reinterpret_cast<Context*>(ctx);
}

seatrt_status* probe(seatrt_kernel_probe* out) {
  return sdk::guard([&] {
    if (!out) invalid("probe", "out is NULL");
    if (SEATRT_HAS_FIELD(out, seatrt_kernel_probe, score)) out->score = 1;
    if (SEATRT_HAS_FIELD(out, seatrt_kernel_probe, detail)) out->detail = machine_detail().c_str();
  });
}

seatrt_status* create(const char* options_toml, int32_t device_index, seatrt_kernel_context** out) {
  return sdk::guard([&] {
    if (!out) invalid("create", "out is NULL");
    if (device_index != 0) {
      invalid("create", "device index " + std::to_string(device_index) + " does not exist (the CPU is device 0)");
    }
    const int32_t threads = parse_thread_option(options_toml);
    *out = reinterpret_cast<seatrt_kernel_context*>(new Context(threads));
    sdk::log(SEATRT_LOG_DEBUG, "cpu", "kernel context with " + std::to_string(threads) + " threads");
  });
}

void destroy(seatrt_kernel_context* ctx) { delete reinterpret_cast<Context*>(ctx); }

seatrt_status* alloc(seatrt_kernel_context* ctx, size_t bytes, void** out) {
  return sdk::guard([&] {
    context_of(ctx, "alloc");
    if (!out) invalid("alloc", "out is NULL");
    if (bytes > SIZE_MAX - kAlignment) throw sdk::Error(SEATRT_ERR_OUT_OF_MEMORY, "alloc: size overflows");
    const size_t rounded = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded);
    if (!p) {
      throw sdk::Error(SEATRT_ERR_OUT_OF_MEMORY, "alloc: " + std::to_string(bytes) + " bytes of host memory are not available");
    }
    *out = p;
  });
}

void free_memory(seatrt_kernel_context*, void* ptr) { std::free(ptr); }

seatrt_status* memory_info(seatrt_kernel_context* ctx, size_t* free_bytes, size_t* total_bytes) {
  return sdk::guard([&] {
    context_of(ctx, "memory_info");
    if (!free_bytes || !total_bytes) invalid("memory_info", "output pointer is NULL");
    const long page = sysconf(_SC_PAGESIZE);
    const long avail = sysconf(_SC_AVPHYS_PAGES);
    const long total = sysconf(_SC_PHYS_PAGES);
    if (page <= 0 || avail < 0 || total <= 0) throw sdk::Error(SEATRT_ERR_UNAVAILABLE, "memory_info: sysconf failed");
    *free_bytes = static_cast<size_t>(avail) * static_cast<size_t>(page);
    *total_bytes = static_cast<size_t>(total) * static_cast<size_t>(page);
  });
}

seatrt_status* copy(seatrt_kernel_context* ctx, seatrt_stream, void* dst, int32_t dst_kind,
                    const void* src, int32_t src_kind, size_t bytes) {
  return sdk::guard([&] {
    context_of(ctx, "copy");
    if (dst_kind != SEATRT_DEVICE_CPU || src_kind != SEATRT_DEVICE_CPU) {
      unsupported("copy", "the cpu provider copies only host memory (device kinds " +
                              std::to_string(dst_kind) + " <- " + std::to_string(src_kind) + ")");
    }
    if (bytes == 0) return;
    if (!dst || !src) invalid("copy", "dst or src is NULL");
    std::memmove(dst, src, bytes);
  });
}

seatrt_status* memset_zero(seatrt_kernel_context* ctx, seatrt_stream, void* dst, size_t bytes) {
  return sdk::guard([&] {
    context_of(ctx, "memset_zero");
    if (bytes == 0) return;
    if (!dst) invalid("memset_zero", "dst is NULL");
    std::memset(dst, 0, bytes);
  });
}

seatrt_status* stream_create(seatrt_kernel_context* ctx, seatrt_stream* out) {
  return sdk::guard([&] {
    context_of(ctx, "stream_create");
    if (!out) invalid("stream_create", "out is NULL");
    *out = new char(0);  // a distinct handle; nothing is queued on it
  });
}

void stream_destroy(seatrt_kernel_context*, seatrt_stream stream) { delete static_cast<char*>(stream); }

seatrt_status* stream_sync(seatrt_kernel_context*, seatrt_stream) { return nullptr; }

seatrt_status* weight_layouts_slot(seatrt_kernel_context* ctx, int32_t format, int32_t* layouts,
                                   int32_t capacity, int32_t* count) {
  return sdk::guard([&] {
    context_of(ctx, "weight_layouts");
    if (!count) invalid("weight_layouts", "count is NULL");
    *count = weight_layouts(format, layouts, capacity);
  });
}

seatrt_status* prepare_weight(seatrt_kernel_context* ctx, seatrt_linear_weight* weight) {
  return sdk::guard([&] {
    context_of(ctx, "prepare_weight");
    validate_weight(weight, "prepare_weight", "weight");
  });
}

void release_weight(seatrt_kernel_context*, seatrt_linear_weight*) {}

int32_t supports(seatrt_kernel_context* ctx, const seatrt_op* op) {
  return ctx && supports_op(op) ? 1 : 0;
}

seatrt_status* run(seatrt_kernel_context* ctx, seatrt_stream, const seatrt_op* op) {
  return sdk::guard([&] { run_op(context_of(ctx, "run"), op); });
}

seatrt_kernel_api make_api() {
  seatrt_kernel_api api{};
  api.struct_size = sizeof(seatrt_kernel_api);
  api.device_kind = SEATRT_DEVICE_CPU;
  api.probe = probe;
  api.create = create;
  api.destroy = destroy;
  api.alloc = alloc;
  api.free_memory = free_memory;
  api.memory_info = memory_info;
  api.copy = copy;
  api.memset_zero = memset_zero;
  api.stream_create = stream_create;
  api.stream_destroy = stream_destroy;
  api.stream_sync = stream_sync;
  api.weight_layouts = weight_layouts_slot;
  api.prepare_weight = prepare_weight;
  api.release_weight = release_weight;
  api.supports = supports;
  api.run = run;
  return api;
}

seatrt_status* initialize(const seatrt_host_api* host) {
  sdk::set_host(host);
  return nullptr;
}

}  // namespace

const seatrt_kernel_api& kernel_api() {
  static const seatrt_kernel_api api = make_api();
  return api;
}

const seatrt_plugin& plugin_descriptor() {
  static const seatrt_plugin plugin = [] {
    seatrt_plugin p = sdk::describe(SEATRT_KIND_KERNELS, "cpu", "0.1.0",
                                    "portable fp32 reference kernels, multi-threaded, host memory");
    p.initialize = initialize;
    p.kernels = &kernel_api();
    return p;
  }();
  return plugin;
}

}  // namespace seatrt::cpu
