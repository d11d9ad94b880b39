// The dispatch table: device management from the primary, each operation
// routed by supports() to the primary or a same-device fallback (each with
// its own context), graphs planned by the primary's planner when it takes
// every node and otherwise run node by node by the host, struct_size
// respected, and no silent staging across devices.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "seatrt/cpp/graph.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/cpp/tensor.hpp"
#include "seatrt/host/kernel_dispatch.hpp"
#include "seatrt/host/status.hpp"

using namespace seatrt::host;
namespace sdk = seatrt::sdk;

// A fake provider's context: its name ("A:<options>:<device>") and the op
// kinds it supports.
struct seatrt_kernel_context {
  std::string provider;
  std::set<int32_t> kinds;
};

namespace {

std::vector<std::string> g_calls;  // every call of every fake provider, in order
std::vector<std::string> g_destroyed;
std::set<int32_t> g_kinds_a, g_kinds_b;  // what the next contexts of A and B support

seatrt_status* create_a(const char* options, int32_t device, seatrt_kernel_context** out) {
  *out = new seatrt_kernel_context{std::string("A:") + options + ":" + std::to_string(device), g_kinds_a};
  return nullptr;
}
seatrt_status* create_b(const char* options, int32_t device, seatrt_kernel_context** out) {
  *out = new seatrt_kernel_context{std::string("B:") + options + ":" + std::to_string(device), g_kinds_b};
  return nullptr;
}
void destroy(seatrt_kernel_context* ctx) {
  g_destroyed.push_back(ctx->provider);
  delete ctx;
}
int32_t supports(seatrt_kernel_context* ctx, const seatrt_op* op) { return ctx->kinds.count(op->kind) ? 1 : 0; }
seatrt_status* run(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_op* op) {
  g_calls.push_back(ctx->provider + " " + sdk::op_name(op->kind) + " stream=" + (stream ? "set" : "null"));
  return nullptr;
}
seatrt_status* alloc(seatrt_kernel_context* ctx, size_t, void** out) {
  g_calls.push_back(ctx->provider + " alloc");
  *out = nullptr;
  return nullptr;
}

// A planner that records what it is asked; plan_launch runs nothing itself.
struct FakePlan {
  int32_t nodes;
};
seatrt_status* plan(seatrt_kernel_context* ctx, const seatrt_op_graph* g, seatrt_plan** out) {
  g_calls.push_back(ctx->provider + " plan " + std::to_string(g->num_nodes) + " nodes");
  *out = reinterpret_cast<seatrt_plan*>(new FakePlan{g->num_nodes});
  return nullptr;
}
seatrt_status* plan_declines(seatrt_kernel_context* ctx, const seatrt_op_graph*, seatrt_plan**) {
  g_calls.push_back(ctx->provider + " plan declined");
  return host_api()->status_create(SEATRT_ERR_UNSUPPORTED, "node 1: no fusion for this");
}
seatrt_status* plan_launch(seatrt_kernel_context* ctx, seatrt_stream stream, seatrt_plan* p) {
  g_calls.push_back(ctx->provider + " plan_launch " + std::to_string(reinterpret_cast<FakePlan*>(p)->nodes) +
                    " stream=" + (stream ? "set" : "null"));
  return nullptr;
}
void plan_destroy(seatrt_kernel_context* ctx, seatrt_plan* p) {
  g_calls.push_back(ctx->provider + " plan_destroy");
  delete reinterpret_cast<FakePlan*>(p);
}
seatrt_status* plan_describe(seatrt_kernel_context*, const seatrt_plan*, seatrt_line_fn line, void* user) {
  line(user, "fused everything");
  return nullptr;
}

seatrt_kernel_api provider(int32_t device_kind, decltype(&create_a) create) {
  seatrt_kernel_api t{};
  t.struct_size = sizeof t;
  t.device_kind = device_kind;
  t.create = create;
  t.destroy = destroy;
  t.supports = supports;
  t.run = run;
  return t;
}

std::string source_of(const KernelDispatch& d, const std::string& op) {
  for (const auto& s : d.sources())
    if (s.op == op) return s.provider;
  return "?";
}

// Takes a status: its code and message ("" and OK for NULL).
struct Outcome {
  seatrt_status_code code = SEATRT_OK;
  std::string message;
};
Outcome outcome(seatrt_status* s) {
  Outcome o;
  if (!s) return o;
  o.code = host_api()->status_code(s);
  o.message = take_status_message(s);
  return o;
}

// Tensors and args for a few ops, kept alive by the fixture.
struct Ops {
  float data[8] = {};
  seatrt_tensor x = sdk::contiguous_tensor(data, SEATRT_DTYPE_F32, {2, 4}, SEATRT_DEVICE_CPU);
  seatrt_rms_norm_args norm{sizeof(seatrt_rms_norm_args), &x, nullptr, 1e-6f, &x, 0.0f};
  seatrt_elementwise_args scale{sizeof(seatrt_elementwise_args), SEATRT_EW_SCALE, &x, nullptr, 2.0f, &x};
  seatrt_glu_args glu{sizeof(seatrt_glu_args), SEATRT_ACT_SILU, &x, &x, &x};
  seatrt_op norm_op = sdk::make_op<SEATRT_OP_RMS_NORM>(norm);
  seatrt_op scale_op = sdk::make_op<SEATRT_OP_ELEMENTWISE>(scale);
  seatrt_op glu_op = sdk::make_op<SEATRT_OP_GLU>(glu);
};

struct DescribeLines {
  std::vector<std::string> lines;
  static void add(void* u, const char* line) { static_cast<DescribeLines*>(u)->lines.push_back(line); }
};

}  // namespace

TEST_CASE("each operation goes to the primary when it supports it, else the same-device fallback") {
  g_kinds_a = {SEATRT_OP_RMS_NORM};
  g_kinds_b = {SEATRT_OP_RMS_NORM, SEATRT_OP_ELEMENTWISE};
  seatrt_kernel_api a = provider(SEATRT_DEVICE_CPU, create_a);
  a.alloc = alloc;
  seatrt_kernel_api b = provider(SEATRT_DEVICE_CPU, create_b);
  b.alloc = alloc;
  KernelDispatch dispatch({&a, "A"}, {&b, "B"});
  CHECK(source_of(dispatch, "run") == "A+B");
  CHECK(source_of(dispatch, "alloc") == "A");
  // Device management never comes from the fallback.
  CHECK(source_of(dispatch, "copy").empty());
  CHECK(source_of(dispatch, "prepare_weight") == "-");  // optional, absent
  CHECK(source_of(dispatch, "plan") == "host");
  const auto missing = dispatch.missing_ops();
  CHECK(std::find(missing.begin(), missing.end(), "copy") != missing.end());
  CHECK(std::find(missing.begin(), missing.end(), "run") == missing.end());

  const seatrt_kernel_api* t = dispatch.table();
  CHECK(t->probe == nullptr);
  CHECK(t->create == nullptr);
  seatrt_kernel_context* ctx = dispatch.create_context("opts", 3);
  Ops ops;
  CHECK(t->supports(ctx, &ops.norm_op) == 1);
  CHECK(t->supports(ctx, &ops.scale_op) == 1);
  CHECK(t->supports(ctx, &ops.glu_op) == 0);
  CHECK(dispatch.provider_for(ctx, ops.norm_op) == "A");
  CHECK(dispatch.provider_for(ctx, ops.scale_op) == "B");
  CHECK(dispatch.provider_for(ctx, ops.glu_op).empty());
  g_calls.clear();
  auto* stream = reinterpret_cast<seatrt_stream>(0x1);
  REQUIRE(t->run(ctx, stream, &ops.norm_op) == nullptr);
  REQUIRE(t->run(ctx, stream, &ops.scale_op) == nullptr);
  void* mem = nullptr;
  REQUIRE(t->alloc(ctx, 16, &mem) == nullptr);
  CHECK(KernelDispatch::primary_context(ctx)->provider == "A:opts:3");
  // Each provider runs with its own context; the fallback's has "" options
  // and device 0, and runs without a stream (synchronously).
  CHECK(g_calls == std::vector<std::string>{"A:opts:3 rms_norm stream=set", "B::0 elementwise stream=null",
                                            "A:opts:3 alloc"});
  // An op nobody supports fails by name, naming both providers.
  const Outcome glu = outcome(t->run(ctx, stream, &ops.glu_op));
  CHECK(glu.code == SEATRT_ERR_UNSUPPORTED);
  CHECK_THAT(glu.message, Catch::Contains("'glu'") && Catch::Contains("'A'") && Catch::Contains("'B'"));
  g_destroyed.clear();
  t->destroy(ctx);
  CHECK(g_destroyed == std::vector<std::string>{"B::0", "A:opts:3"});
}

TEST_CASE("malformed arguments are reported by the shared checker, naming the field") {
  g_kinds_a = {};
  seatrt_kernel_api a = provider(SEATRT_DEVICE_CPU, create_a);
  KernelDispatch dispatch({&a, "A"}, {});
  seatrt_kernel_context* ctx = dispatch.create_context("", 0);
  Ops ops;
  ops.norm.x = nullptr;
  const Outcome o = outcome(dispatch.table()->run(ctx, nullptr, &ops.norm_op));
  CHECK(o.code == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(o.message, Catch::Contains("rms_norm") && Catch::Contains("'x' is required"));
  dispatch.destroy_context(ctx);
}

TEST_CASE("a provider compiled with a smaller table has its trailing slots absent") {
  seatrt_kernel_api a = provider(SEATRT_DEVICE_CPU, create_a);
  a.plan = plan;  // beyond struct_size: must be ignored
  a.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, supports));
  KernelDispatch dispatch({&a, "A"}, {});
  CHECK(source_of(dispatch, "run").empty());
  CHECK(source_of(dispatch, "plan") == "host");
  const auto missing = dispatch.missing_ops();
  CHECK(std::find(missing.begin(), missing.end(), "run") != missing.end());
  CHECK_THROWS_WITH(dispatch.require({"run"}), Catch::Contains("run"));
}

TEST_CASE("without a planner the host plan runs the nodes in order, each through its provider") {
  g_kinds_a = {SEATRT_OP_RMS_NORM};
  g_kinds_b = {SEATRT_OP_RMS_NORM, SEATRT_OP_ELEMENTWISE};
  seatrt_kernel_api a = provider(SEATRT_DEVICE_CPU, create_a);
  seatrt_kernel_api b = provider(SEATRT_DEVICE_CPU, create_b);
  KernelDispatch dispatch({&a, "A"}, {&b, "B"});
  const seatrt_kernel_api* t = dispatch.table();
  seatrt_kernel_context* ctx = dispatch.create_context("", 0);
  Ops ops;
  sdk::GraphBuilder builder;
  builder.add<SEATRT_OP_RMS_NORM>(ops.norm, "layer 0/norm");
  builder.add<SEATRT_OP_ELEMENTWISE>(ops.scale, "layer 0/scale");
  builder.add<SEATRT_OP_RMS_NORM>(ops.norm, "layer 1/norm");
  const seatrt_op_graph g = builder.graph("decode b=2", 0);
  seatrt_plan* p = nullptr;
  REQUIRE(outcome(t->plan(ctx, &g, &p)).message.empty());
  REQUIRE(p != nullptr);
  g_calls.clear();
  auto* stream = reinterpret_cast<seatrt_stream>(0x1);
  REQUIRE(t->plan_launch(ctx, stream, p) == nullptr);
  REQUIRE(t->plan_launch(ctx, stream, p) == nullptr);
  const std::vector<std::string> once = {"A::0 rms_norm stream=set", "B::0 elementwise stream=null",
                                         "A::0 rms_norm stream=set"};
  std::vector<std::string> twice = once;
  twice.insert(twice.end(), once.begin(), once.end());
  CHECK(g_calls == twice);
  DescribeLines d;
  REQUIRE(t->plan_describe(ctx, p, DescribeLines::add, &d) == nullptr);
  CHECK(d.lines == std::vector<std::string>{"run in order by the host: 3 nodes", "node 0 rms_norm (layer 0/norm): A",
                                            "node 1 elementwise (layer 0/scale): B",
                                            "node 2 rms_norm (layer 1/norm): A"});
  t->plan_destroy(ctx, p);
  dispatch.destroy_context(ctx);
}

TEST_CASE("a host plan refuses a node nobody supports and a synchronous node") {
  g_kinds_a = {SEATRT_OP_RMS_NORM};
  seatrt_kernel_api a = provider(SEATRT_DEVICE_CPU, create_a);
  KernelDispatch dispatch({&a, "A"}, {});
  const seatrt_kernel_api* t = dispatch.table();
  seatrt_kernel_context* ctx = dispatch.create_context("", 0);
  Ops ops;
  {
    sdk::GraphBuilder builder;
    builder.add<SEATRT_OP_RMS_NORM>(ops.norm, "norm");
    builder.add<SEATRT_OP_GLU>(ops.glu, "layer 0/mlp/glu");
    const seatrt_op_graph g = builder.graph("prefill t=2", 1);
    seatrt_plan* p = nullptr;
    const Outcome o = outcome(t->plan(ctx, &g, &p));
    CHECK(o.code == SEATRT_ERR_UNSUPPORTED);
    CHECK_THAT(o.message, Catch::Contains("node 1 layer 0/mlp/glu") && Catch::Contains("'glu'"));
    CHECK(p == nullptr);
  }
  {
    int32_t token = 0;
    seatrt_sampling_row row{};
    row.struct_size = sizeof row;
    seatrt_sample_args s{};
    s.struct_size = sizeof s;
    s.logits = &ops.x;
    s.rows = &row;
    s.token = &token;
    sdk::GraphBuilder builder;
    builder.add<SEATRT_OP_SAMPLE>(s, "sample");
    const seatrt_op_graph g = builder.graph("bad", 1);
    seatrt_plan* p = nullptr;
    const Outcome o = outcome(t->plan(ctx, &g, &p));
    CHECK(o.code == SEATRT_ERR_INVALID_ARG);
    CHECK_THAT(o.message, Catch::Contains("'sample'"));
  }
  dispatch.destroy_context(ctx);
}

TEST_CASE("the primary's planner takes a graph whose every node it supports") {
  g_kinds_a = {SEATRT_OP_RMS_NORM};
  g_kinds_b = {SEATRT_OP_RMS_NORM, SEATRT_OP_ELEMENTWISE};
  seatrt_kernel_api a = provider(SEATRT_DEVICE_CPU, create_a);
  a.plan = plan;
  a.plan_launch = plan_launch;
  a.plan_destroy = plan_destroy;
  a.plan_describe = plan_describe;
  seatrt_kernel_api b = provider(SEATRT_DEVICE_CPU, create_b);
  KernelDispatch dispatch({&a, "A"}, {&b, "B"});
  CHECK(source_of(dispatch, "plan") == "A");
  const seatrt_kernel_api* t = dispatch.table();
  seatrt_kernel_context* ctx = dispatch.create_context("", 0);
  Ops ops;
  auto* stream = reinterpret_cast<seatrt_stream>(0x1);

  SECTION("all nodes supported: the primary plans, launches, describes and destroys") {
    sdk::GraphBuilder builder;
    builder.add<SEATRT_OP_RMS_NORM>(ops.norm, "a");
    builder.add<SEATRT_OP_RMS_NORM>(ops.norm, "b");
    const seatrt_op_graph g = builder.graph("decode b=1", 0);
    seatrt_plan* p = nullptr;
    g_calls.clear();
    REQUIRE(t->plan(ctx, &g, &p) == nullptr);
    REQUIRE(t->plan_launch(ctx, stream, p) == nullptr);
    DescribeLines d;
    REQUIRE(t->plan_describe(ctx, p, DescribeLines::add, &d) == nullptr);
    CHECK(d.lines == std::vector<std::string>{"planned by A: 2 nodes", "fused everything"});
    t->plan_destroy(ctx, p);
    CHECK(g_calls == std::vector<std::string>{"A::0 plan 2 nodes", "A::0 plan_launch 2 stream=set", "A::0 plan_destroy"});
  }
  SECTION("a node only the fallback supports: the host plans, the primary's planner is not asked") {
    sdk::GraphBuilder builder;
    builder.add<SEATRT_OP_RMS_NORM>(ops.norm, "a");
    builder.add<SEATRT_OP_ELEMENTWISE>(ops.scale, "b");
    const seatrt_op_graph g = builder.graph("decode b=1", 0);
    seatrt_plan* p = nullptr;
    g_calls.clear();
    REQUIRE(t->plan(ctx, &g, &p) == nullptr);
    REQUIRE(t->plan_launch(ctx, stream, p) == nullptr);
    t->plan_destroy(ctx, p);
    CHECK(g_calls == std::vector<std::string>{"A::0 rms_norm stream=set", "B::0 elementwise stream=null"});
  }
  SECTION("a planner that declines with UNSUPPORTED: the host runs the nodes") {
    dispatch.destroy_context(ctx);
    a.plan = plan_declines;
    KernelDispatch declining({&a, "A"}, {&b, "B"});
    ctx = declining.create_context("", 0);
    t = declining.table();
    sdk::GraphBuilder builder;
    builder.add<SEATRT_OP_RMS_NORM>(ops.norm, "a");
    const seatrt_op_graph g = builder.graph("decode b=1", 0);
    seatrt_plan* p = nullptr;
    g_calls.clear();
    REQUIRE(t->plan(ctx, &g, &p) == nullptr);
    REQUIRE(t->plan_launch(ctx, stream, p) == nullptr);
    t->plan_destroy(ctx, p);
    CHECK(g_calls == std::vector<std::string>{"A::0 plan declined", "A::0 rms_norm stream=set"});
    declining.destroy_context(ctx);
    return;
  }
  dispatch.destroy_context(ctx);
}

TEST_CASE("a GPU provider's unsupported operation is not staged through the CPU") {
  g_kinds_a = {SEATRT_OP_RMS_NORM};
  g_kinds_b = {SEATRT_OP_RMS_NORM, SEATRT_OP_ELEMENTWISE};
  seatrt_kernel_api gpu = provider(SEATRT_DEVICE_CUDA, create_a);
  seatrt_kernel_api cpu = provider(SEATRT_DEVICE_CPU, create_b);
  KernelDispatch dispatch({&gpu, "cuda"}, {&cpu, "cpu"});
  CHECK(source_of(dispatch, "run") == "cuda");
  g_destroyed.clear();
  seatrt_kernel_context* ctx = dispatch.create_context("", 0);
  Ops ops;
  CHECK(dispatch.table()->supports(ctx, &ops.scale_op) == 0);
  const Outcome o = outcome(dispatch.table()->run(ctx, nullptr, &ops.scale_op));
  CHECK(o.code == SEATRT_ERR_UNSUPPORTED);
  CHECK_THAT(o.message, Catch::Contains("'cuda'") && Catch::Contains("'elementwise'"));
  CHECK(o.message.find("cpu") == std::string::npos);
  dispatch.destroy_context(ctx);
  // No fallback context was made for a fallback that is never used.
  CHECK(g_destroyed == std::vector<std::string>{"A::0"});
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
