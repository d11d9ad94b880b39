// The dispatch table: per-op routing between a provider and its fallback,
// each called with its own context, struct_size respected, and no silent
// staging across devices.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "seatrt/host/kernel_dispatch.hpp"
#include "seatrt/host/status.hpp"

using namespace seatrt::host;

// A fake provider's context: records which provider ran which op.
struct seatrt_kernel_context {
  std::string provider;  // "A:<options>:<device>"
};

namespace {

std::vector<std::string> g_calls;  // every call of every fake provider, in order
std::vector<std::string> g_destroyed;

seatrt_status* create_a(const char* options, int32_t device, seatrt_kernel_context** out) {
  *out = new seatrt_kernel_context{std::string("A:") + options + ":" + std::to_string(device)};
  return nullptr;
}
seatrt_status* create_b(const char* options, int32_t device, seatrt_kernel_context** out) {
  *out = new seatrt_kernel_context{std::string("B:") + options + ":" + std::to_string(device)};
  return nullptr;
}
void destroy(seatrt_kernel_context* ctx) {
  g_destroyed.push_back(ctx->provider);
  delete ctx;
}
seatrt_status* rms_norm(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_rms_norm_args*) {
  g_calls.push_back(ctx->provider + " rms_norm stream=" + (stream ? "set" : "null"));
  return nullptr;
}
seatrt_status* elementwise(seatrt_kernel_context* ctx, seatrt_stream stream,
                           const seatrt_elementwise_args*) {
  g_calls.push_back(ctx->provider + " elementwise stream=" + (stream ? "set" : "null"));
  return nullptr;
}
seatrt_status* alloc(seatrt_kernel_context* ctx, size_t, void** out) {
  g_calls.push_back(ctx->provider + " alloc");
  *out = nullptr;
  return nullptr;
}

seatrt_status* stream_wait(seatrt_kernel_context* ctx, seatrt_stream waiter, seatrt_stream signaler) {
  g_calls.push_back(ctx->provider + " stream_wait " + static_cast<const char*>(waiter) + "<-" +
                    static_cast<const char*>(signaler));
  return nullptr;
}

seatrt_status* qkv_norm_rope_store(seatrt_kernel_context* ctx, seatrt_stream stream,
                                   const seatrt_qkv_norm_rope_store_args*) {
  g_calls.push_back(ctx->provider + " qkv_norm_rope_store stream=" + (stream ? "set" : "null"));
  return nullptr;
}
seatrt_status* add_rms_norm_pair(seatrt_kernel_context* ctx, seatrt_stream stream,
                                 const seatrt_add_rms_norm_pair_args*) {
  g_calls.push_back(ctx->provider + " add_rms_norm_pair stream=" + (stream ? "set" : "null"));
  return nullptr;
}

seatrt_status* route(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_route_args*) {
  g_calls.push_back(ctx->provider + " route stream=" + (stream ? "set" : "null"));
  return nullptr;
}

seatrt_kernel_api provider(int32_t device_kind, decltype(&create_a) create) {
  seatrt_kernel_api t{};
  t.struct_size = sizeof t;
  t.device_kind = device_kind;
  t.create = create;
  t.destroy = destroy;
  return t;
}

std::string source_of(const KernelDispatch& d, const std::string& op) {
  for (const auto& s : d.sources())
    if (s.op == op) return s.provider;
  return "?";
}

}  // namespace

TEST_CASE("NULL operations of the primary are filled from a same-device fallback") {
  seatrt_kernel_api a = provider(SEATRT_DEVICE_CPU, create_a);
  a.rms_norm = rms_norm;
  a.alloc = alloc;
  seatrt_kernel_api b = provider(SEATRT_DEVICE_CPU, create_b);
  b.rms_norm = rms_norm;
  b.elementwise = elementwise;
  b.alloc = alloc;
  KernelDispatch dispatch({&a, "A"}, {&b, "B"});
  CHECK(source_of(dispatch, "rms_norm") == "A");
  CHECK(source_of(dispatch, "elementwise") == "B");
  CHECK(source_of(dispatch, "alloc") == "A");
  // Device management never comes from the fallback.
  CHECK(source_of(dispatch, "copy").empty());
  CHECK(source_of(dispatch, "graph_begin") == "-");  // optional, absent
  const auto missing = dispatch.missing_ops();
  CHECK(std::find(missing.begin(), missing.end(), "linear") != missing.end());
  CHECK(std::find(missing.begin(), missing.end(), "rms_norm") == missing.end());

  const seatrt_kernel_api* t = dispatch.table();
  CHECK(t->probe == nullptr);
  CHECK(t->create == nullptr);
  CHECK(t->linear == nullptr);
  seatrt_kernel_context* ctx = dispatch.create_context("opts", 3);
  g_calls.clear();
  auto* stream = reinterpret_cast<seatrt_stream>(0x1);
  REQUIRE(t->rms_norm(ctx, stream, nullptr) == nullptr);
  REQUIRE(t->elementwise(ctx, stream, nullptr) == nullptr);
  void* mem = nullptr;
  REQUIRE(t->alloc(ctx, 16, &mem) == nullptr);
  seatrt_kernel_context* primary = KernelDispatch::primary_context(ctx);
  CHECK(primary->provider == "A:opts:3");
  // Each provider runs with its own context; the fallback's has "" options
  // and device 0, and runs without a stream (synchronously).
  CHECK(g_calls == std::vector<std::string>{"A:opts:3 rms_norm stream=set",
                                            "B::0 elementwise stream=null", "A:opts:3 alloc"});
  g_destroyed.clear();
  t->destroy(ctx);
  CHECK(g_destroyed == std::vector<std::string>{"B::0", "A:opts:3"});
}

TEST_CASE("a provider compiled with a smaller table has its trailing slots absent") {
  seatrt_kernel_api a = provider(SEATRT_DEVICE_CPU, create_a);
  a.rms_norm = rms_norm;
  a.sample = reinterpret_cast<decltype(a.sample)>(rms_norm);  // beyond struct_size: must be ignored
  a.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, gather_rows));
  seatrt_kernel_api b = provider(SEATRT_DEVICE_CPU, create_b);
  KernelDispatch dispatch({&a, "A"}, {&b, "B"});
  CHECK(source_of(dispatch, "rms_norm") == "A");
  CHECK(source_of(dispatch, "sample").empty());
  CHECK(dispatch.table()->sample == nullptr);
}

TEST_CASE("the ABI 1.1 fused ops are optional: absent from a 1.0 table, never reported missing") {
  // A 1.0 GPU provider (table ends before add_rms_norm) with every other op.
  seatrt_kernel_api gpu = provider(SEATRT_DEVICE_CUDA, create_a);
  gpu.rms_norm = rms_norm;
  gpu.add_rms_norm = reinterpret_cast<decltype(gpu.add_rms_norm)>(rms_norm);  // beyond struct_size
  gpu.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, add_rms_norm));
  seatrt_kernel_api cpu = provider(SEATRT_DEVICE_CPU, create_b);
  KernelDispatch dispatch({&gpu, "cuda"}, {&cpu, "cpu"});
  CHECK(source_of(dispatch, "add_rms_norm") == "-");
  CHECK(source_of(dispatch, "rms_norm_rope") == "-");
  CHECK(dispatch.table()->add_rms_norm == nullptr);
  CHECK(dispatch.table()->rms_norm_rope == nullptr);
  const auto missing = dispatch.missing_ops();
  CHECK(std::find(missing.begin(), missing.end(), "add_rms_norm") == missing.end());
  // A same-device 1.1 fallback fills them.
  seatrt_kernel_api cpu_a = provider(SEATRT_DEVICE_CPU, create_a);
  cpu_a.struct_size = gpu.struct_size;
  seatrt_kernel_api cpu_b = provider(SEATRT_DEVICE_CPU, create_b);
  cpu_b.add_rms_norm = reinterpret_cast<decltype(cpu_b.add_rms_norm)>(rms_norm);
  KernelDispatch with_fallback({&cpu_a, "A"}, {&cpu_b, "B"});
  CHECK(source_of(with_fallback, "add_rms_norm") == "B");
  CHECK(with_fallback.table()->add_rms_norm != nullptr);
}

TEST_CASE("the ABI 1.2 fused ops are optional: absent from a 1.1 table, never reported missing") {
  // A 1.1 GPU provider (table ends before linear_multi) with every other op.
  seatrt_kernel_api gpu = provider(SEATRT_DEVICE_CUDA, create_a);
  gpu.rms_norm = rms_norm;
  gpu.linear_multi = reinterpret_cast<decltype(gpu.linear_multi)>(rms_norm);  // beyond struct_size
  gpu.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, linear_multi));
  seatrt_kernel_api cpu = provider(SEATRT_DEVICE_CPU, create_b);
  cpu.linear_multi = reinterpret_cast<decltype(cpu.linear_multi)>(rms_norm);
  KernelDispatch dispatch({&gpu, "cuda"}, {&cpu, "cpu"});
  for (const char* op : {"linear_multi", "linear_glu", "rms_norm_multi"}) {
    CAPTURE(op);
    CHECK(source_of(dispatch, op) == "-");  // the CPU one is another device: not staged
  }
  CHECK(dispatch.table()->linear_multi == nullptr);
  CHECK(dispatch.table()->linear_glu == nullptr);
  CHECK(dispatch.table()->rms_norm_multi == nullptr);
  const auto missing = dispatch.missing_ops();
  CHECK(std::find(missing.begin(), missing.end(), "linear_multi") == missing.end());
  // A same-device 1.2 fallback fills the ones it has.
  seatrt_kernel_api cpu_a = provider(SEATRT_DEVICE_CPU, create_a);
  cpu_a.struct_size = gpu.struct_size;
  seatrt_kernel_api cpu_b = provider(SEATRT_DEVICE_CPU, create_b);
  cpu_b.rms_norm_multi = reinterpret_cast<decltype(cpu_b.rms_norm_multi)>(rms_norm);
  KernelDispatch with_fallback({&cpu_a, "A"}, {&cpu_b, "B"});
  CHECK(source_of(with_fallback, "rms_norm_multi") == "B");
  CHECK(source_of(with_fallback, "linear_glu") == "-");
  CHECK(with_fallback.table()->rms_norm_multi != nullptr);
}

TEST_CASE("stream_wait (ABI 1.3) goes to the primary with both streams, and is optional") {
  seatrt_kernel_api gpu = provider(SEATRT_DEVICE_CUDA, create_a);
  gpu.stream_wait = stream_wait;
  KernelDispatch dispatch({&gpu, "cuda"}, {});
  REQUIRE(dispatch.table()->stream_wait != nullptr);
  seatrt_kernel_context* ctx = dispatch.create_context("", 0);
  g_calls.clear();
  char waiter[] = "side", signaler[] = "main";
  CHECK(dispatch.table()->stream_wait(ctx, waiter, signaler) == nullptr);
  REQUIRE(g_calls.size() == 1);
  CHECK(g_calls[0] == "A::0 stream_wait side<-main");
  dispatch.table()->destroy(ctx);
  // A 1.2 table (ending before stream_wait) whose slot memory is set: absent,
  // and not reported missing.
  seatrt_kernel_api old_gpu = provider(SEATRT_DEVICE_CUDA, create_a);
  old_gpu.stream_wait = stream_wait;  // beyond struct_size
  old_gpu.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, stream_wait));
  KernelDispatch old_dispatch({&old_gpu, "cuda"}, {});
  CHECK(old_dispatch.table()->stream_wait == nullptr);
  CHECK(source_of(old_dispatch, "stream_wait") == "-");
  const auto missing = old_dispatch.missing_ops();
  CHECK(std::find(missing.begin(), missing.end(), "stream_wait") == missing.end());
}

TEST_CASE("the ABI 1.4 fused ops go to the primary, else a same-device fallback, and are optional") {
  // A 1.4 GPU provider with both: routed to it, with its context and stream.
  seatrt_kernel_api gpu = provider(SEATRT_DEVICE_CUDA, create_a);
  gpu.qkv_norm_rope_store = qkv_norm_rope_store;
  gpu.add_rms_norm_pair = add_rms_norm_pair;
  seatrt_kernel_api cpu = provider(SEATRT_DEVICE_CPU, create_b);
  cpu.qkv_norm_rope_store = qkv_norm_rope_store;
  cpu.add_rms_norm_pair = add_rms_norm_pair;
  KernelDispatch dispatch({&gpu, "cuda"}, {&cpu, "cpu"});
  CHECK(source_of(dispatch, "qkv_norm_rope_store") == "cuda");
  CHECK(source_of(dispatch, "add_rms_norm_pair") == "cuda");
  seatrt_kernel_context* ctx = dispatch.create_context("o", 1);
  g_calls.clear();
  auto* stream = reinterpret_cast<seatrt_stream>(0x1);
  CHECK(dispatch.table()->qkv_norm_rope_store(ctx, stream, nullptr) == nullptr);
  CHECK(dispatch.table()->add_rms_norm_pair(ctx, stream, nullptr) == nullptr);
  CHECK(g_calls == std::vector<std::string>{"A:o:1 qkv_norm_rope_store stream=set",
                                            "A:o:1 add_rms_norm_pair stream=set"});
  dispatch.table()->destroy(ctx);

  // A 1.3 GPU provider (table ending before qkv_norm_rope_store) whose slot
  // memory is set: absent, not staged through the CPU, not reported missing.
  seatrt_kernel_api old_gpu = gpu;
  old_gpu.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, qkv_norm_rope_store));
  KernelDispatch old_dispatch({&old_gpu, "cuda"}, {&cpu, "cpu"});
  for (const char* op : {"qkv_norm_rope_store", "add_rms_norm_pair"}) {
    CAPTURE(op);
    CHECK(source_of(old_dispatch, op) == "-");
  }
  CHECK(old_dispatch.table()->qkv_norm_rope_store == nullptr);
  CHECK(old_dispatch.table()->add_rms_norm_pair == nullptr);
  const auto missing = old_dispatch.missing_ops();
  CHECK(std::find(missing.begin(), missing.end(), "qkv_norm_rope_store") == missing.end());
  CHECK(std::find(missing.begin(), missing.end(), "add_rms_norm_pair") == missing.end());
  CHECK_NOTHROW(old_dispatch.require({"qkv_norm_rope_store", "add_rms_norm_pair"}));

  // A same-device 1.4 fallback fills the one it has; it runs without a stream.
  seatrt_kernel_api cpu_a = provider(SEATRT_DEVICE_CPU, create_a);
  cpu_a.struct_size = old_gpu.struct_size;
  seatrt_kernel_api cpu_b = provider(SEATRT_DEVICE_CPU, create_b);
  cpu_b.add_rms_norm_pair = add_rms_norm_pair;
  KernelDispatch with_fallback({&cpu_a, "A"}, {&cpu_b, "B"});
  CHECK(source_of(with_fallback, "add_rms_norm_pair") == "B");
  CHECK(source_of(with_fallback, "qkv_norm_rope_store") == "-");
  CHECK(with_fallback.table()->qkv_norm_rope_store == nullptr);
  seatrt_kernel_context* fctx = with_fallback.create_context("", 0);
  g_calls.clear();
  CHECK(with_fallback.table()->add_rms_norm_pair(fctx, stream, nullptr) == nullptr);
  CHECK(g_calls == std::vector<std::string>{"B::0 add_rms_norm_pair stream=null"});
  with_fallback.table()->destroy(fctx);
}

TEST_CASE("route (ABI 1.5) goes to the primary, else a same-device fallback, and is optional") {
  // A 1.5 GPU provider with route: routed to it, with its context and stream.
  seatrt_kernel_api gpu = provider(SEATRT_DEVICE_CUDA, create_a);
  gpu.route = route;
  seatrt_kernel_api cpu = provider(SEATRT_DEVICE_CPU, create_b);
  cpu.route = route;
  KernelDispatch dispatch({&gpu, "cuda"}, {&cpu, "cpu"});
  CHECK(source_of(dispatch, "route") == "cuda");
  seatrt_kernel_context* ctx = dispatch.create_context("o", 1);
  g_calls.clear();
  auto* stream = reinterpret_cast<seatrt_stream>(0x1);
  REQUIRE(dispatch.table()->route != nullptr);
  CHECK(dispatch.table()->route(ctx, stream, nullptr) == nullptr);
  CHECK(g_calls == std::vector<std::string>{"A:o:1 route stream=set"});
  dispatch.table()->destroy(ctx);

  // A 1.4 GPU provider (table ending before route) whose slot memory is set:
  // absent, not staged through the CPU provider that has it, not reported
  // missing.
  seatrt_kernel_api old_gpu = gpu;
  old_gpu.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, route));
  KernelDispatch old_dispatch({&old_gpu, "cuda"}, {&cpu, "cpu"});
  CHECK(source_of(old_dispatch, "route") == "-");
  CHECK(old_dispatch.table()->route == nullptr);
  const auto missing = old_dispatch.missing_ops();
  CHECK(std::find(missing.begin(), missing.end(), "route") == missing.end());
  CHECK_NOTHROW(old_dispatch.require({"route"}));

  // A same-device 1.4 primary: the 1.5 fallback fills route, and runs it
  // without a stream; a fallback without it leaves the slot NULL.
  seatrt_kernel_api cpu_a = provider(SEATRT_DEVICE_CPU, create_a);
  cpu_a.route = route;  // beyond struct_size: must be ignored
  cpu_a.struct_size = old_gpu.struct_size;
  seatrt_kernel_api cpu_b = provider(SEATRT_DEVICE_CPU, create_b);
  cpu_b.route = route;
  KernelDispatch with_fallback({&cpu_a, "A"}, {&cpu_b, "B"});
  CHECK(source_of(with_fallback, "route") == "B");
  seatrt_kernel_context* fctx = with_fallback.create_context("", 0);
  g_calls.clear();
  CHECK(with_fallback.table()->route(fctx, stream, nullptr) == nullptr);
  CHECK(g_calls == std::vector<std::string>{"B::0 route stream=null"});
  with_fallback.table()->destroy(fctx);
  seatrt_kernel_api cpu_c = provider(SEATRT_DEVICE_CPU, create_b);
  KernelDispatch without({&cpu_a, "A"}, {&cpu_c, "C"});
  CHECK(source_of(without, "route") == "-");
  CHECK(without.table()->route == nullptr);
}

seatrt_status* sample(seatrt_kernel_context*, seatrt_stream, const seatrt_sample_args*) { return nullptr; }

TEST_CASE("sample_features (ABI 1.7) are those of the provider that serves sample") {
  seatrt_kernel_api gpu = provider(SEATRT_DEVICE_CUDA, create_a);
  gpu.sample = sample;
  gpu.sample_features = SEATRT_SAMPLE_LOGIT_BIAS;
  seatrt_kernel_api cpu = provider(SEATRT_DEVICE_CPU, create_b);
  cpu.sample = sample;
  KernelDispatch dispatch({&gpu, "cuda"}, {&cpu, "cpu"});
  CHECK(dispatch.table()->sample_features == SEATRT_SAMPLE_LOGIT_BIAS);

  // A 1.6 provider (table ending before the field) whose memory there is
  // set: read as 0, so a bias it would ignore is never handed to it.
  seatrt_kernel_api old_gpu = gpu;
  old_gpu.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, sample_features));
  KernelDispatch old_dispatch({&old_gpu, "cuda"}, {&cpu, "cpu"});
  CHECK(old_dispatch.table()->sample != nullptr);
  CHECK(old_dispatch.table()->sample_features == 0);

  // A same-device primary without sample: the fallback serves it, with its
  // own features (none here, then the bias bit).
  seatrt_kernel_api cpu_a = provider(SEATRT_DEVICE_CPU, create_a);
  cpu_a.sample_features = SEATRT_SAMPLE_LOGIT_BIAS;  // no sample op: says nothing
  KernelDispatch via_fallback({&cpu_a, "A"}, {&cpu, "B"});
  CHECK(source_of(via_fallback, "sample") == "B");
  CHECK(via_fallback.table()->sample_features == 0);
  cpu.sample_features = SEATRT_SAMPLE_LOGIT_BIAS;
  KernelDispatch via_fallback_bias({&cpu_a, "A"}, {&cpu, "B"});
  CHECK(via_fallback_bias.table()->sample_features == SEATRT_SAMPLE_LOGIT_BIAS);
}

TEST_CASE("a GPU provider missing an operation is not staged through the CPU") {
  seatrt_kernel_api gpu = provider(SEATRT_DEVICE_CUDA, create_a);
  gpu.rms_norm = rms_norm;
  seatrt_kernel_api cpu = provider(SEATRT_DEVICE_CPU, create_b);
  cpu.elementwise = elementwise;
  cpu.rms_norm = rms_norm;
  KernelDispatch dispatch({&gpu, "cuda"}, {&cpu, "cpu"});
  CHECK(source_of(dispatch, "elementwise").empty());
  CHECK(dispatch.table()->elementwise == nullptr);
  try {
    dispatch.require({"rms_norm", "elementwise"});
    FAIL("missing op accepted");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Catch::Contains("elementwise"));
    CHECK_THAT(m, Catch::Contains("does not stage tensors between devices"));
    CHECK(m.find("rms_norm") == std::string::npos);
  }
  CHECK_NOTHROW(dispatch.require({"rms_norm"}));
}

TEST_CASE("a provider whose create fails is reported with its message") {
  seatrt_kernel_api a = provider(SEATRT_DEVICE_CPU, create_a);
  a.create = [](const char*, int32_t, seatrt_kernel_context**) -> seatrt_status* {
    return host_api()->status_create(SEATRT_ERR_UNAVAILABLE, "device 9 not present");
  };
  KernelDispatch dispatch({&a, "A"}, {});
  try {
    dispatch.create_context("", 9);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == SEATRT_ERR_UNAVAILABLE);
    CHECK_THAT(e.what(), Catch::Contains("device 9 not present"));
  }
}
