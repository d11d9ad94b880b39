// A deliberately wrong kernel provider that proves the conformance tool can
// fail: the CPU provider with one defect, picked at build time
// (SEATRT_BROKEN_VARIANT), so each CTest check sees exactly one:
// - 1 "cpu-broken-linear": run() adds an error of 50% of the first row's
//   largest magnitude to one element of every linear's output;
// - 2 "cpu-broken-rms-norm": run() writes a NaN into every rms_norm output;
// - 3 "cpu-broken-attention": supports() answers 0 for attention (SKIP,
//   never PASS);
// - 4 "cpu-broken-plan": run() is right, but it plans graphs and its plan
//   leaves out one node (the first ".../attn/post_norm", else node 0), the
//   kind of slip a fusing planner makes; only a graph case can see it.
// The provider is the CPU one underneath, so results are host memory the
// defects can edit directly.  Test-only; never installed.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "provider_table.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/cpp/plugin.hpp"

#ifndef SEATRT_BROKEN_VARIANT
#error "SEATRT_BROKEN_VARIANT (1 linear, 2 rms_norm, 3 attention, 4 plan) picks the defect"
#endif

namespace {

namespace sdk = seatrt::sdk;

enum class Variant { linear = 1, rms_norm = 2, attention = 3, plan = 4 };
constexpr Variant kVariant = static_cast<Variant>(SEATRT_BROKEN_VARIANT);

const seatrt_kernel_api& cpu() { return seatrt::cpu::kernel_api(); }

void perturb_linear(const seatrt_op* op) {
  seatrt_linear_args args;
  if (!sdk::read_args<SEATRT_OP_LINEAR>(op, args, nullptr)) return;
  const seatrt_tensor* out = args.out;
  const int64_t n = out->shape[out->ndim - 1];
  std::vector<float> row(static_cast<size_t>(n));
  seatrt::cpu::load_f32(out->dtype, out->data, row.data(), n);
  float largest = 0.0f;
  for (float v : row) largest = std::max(largest, std::fabs(v));
  row[0] += 0.5f * largest + 1e-3f;
  seatrt::cpu::store_f32(out->dtype, row.data(), out->data, n);
}

void poison_rms_norm(const seatrt_op* op) {
  seatrt_rms_norm_args args;
  if (!sdk::read_args<SEATRT_OP_RMS_NORM>(op, args, nullptr)) return;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  seatrt::cpu::store_f32(args.out->dtype, &nan, args.out->data, 1);
}

bool refused(const seatrt_op* op) { return kVariant == Variant::attention && op && op->kind == SEATRT_OP_ATTENTION; }

int32_t broken_supports(seatrt_kernel_context* ctx, const seatrt_op* op) {
  return refused(op) ? 0 : cpu().supports(ctx, op);
}

seatrt_status* broken_run(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_op* op) {
  if (refused(op)) return sdk::make_status(SEATRT_ERR_UNSUPPORTED, "attention: not supported (test-only broken provider)");
  if (seatrt_status* status = cpu().run(ctx, stream, op)) return status;
  if (kVariant == Variant::linear && op->kind == SEATRT_OP_LINEAR) perturb_linear(op);
  if (kVariant == Variant::rms_norm && op->kind == SEATRT_OP_RMS_NORM) poison_rms_norm(op);
  return nullptr;
}

// The broken plan: the graph's nodes in order, less one.
struct BrokenPlan {
  std::vector<seatrt_op> nodes;
  std::vector<std::string> lines;
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

seatrt_status* broken_plan(seatrt_kernel_context* ctx, const seatrt_op_graph* graph, seatrt_plan** out) {
  if (!graph || !out || graph->num_nodes < 1 || !graph->nodes)
    return sdk::make_status(SEATRT_ERR_INVALID_ARG, "plan: no graph");
  int32_t dropped = 0;
  for (int32_t i = 0; i < graph->num_nodes; ++i) {
    if (!cpu().supports(ctx, &graph->nodes[i]))
      return sdk::make_status(SEATRT_ERR_UNSUPPORTED, "plan: node " + std::to_string(i) + " is not supported");
    if (graph->node_names && graph->node_names[i] && ends_with(graph->node_names[i], "/attn/post_norm") && dropped == 0)
      dropped = i;
  }
  auto* plan = new (std::nothrow) BrokenPlan;
  if (!plan) return sdk::make_status(SEATRT_ERR_OUT_OF_MEMORY, "plan: out of memory");
  for (int32_t i = 0; i < graph->num_nodes; ++i) {
    const std::string name = graph->node_names && graph->node_names[i] ? graph->node_names[i] : "node " + std::to_string(i);
    if (i == dropped) {
      plan->lines.push_back("dropped node " + std::to_string(i) + " (" + name + ")");
      continue;
    }
    plan->nodes.push_back(graph->nodes[i]);
  }
  plan->lines.push_back(std::to_string(plan->nodes.size()) + " nodes run in order through the CPU provider");
  *out = reinterpret_cast<seatrt_plan*>(plan);
  return nullptr;
}

seatrt_status* broken_plan_launch(seatrt_kernel_context* ctx, seatrt_stream stream, seatrt_plan* handle) {
  if (!handle) return sdk::make_status(SEATRT_ERR_INVALID_ARG, "plan_launch: no plan");
  for (const seatrt_op& node : reinterpret_cast<BrokenPlan*>(handle)->nodes)
    if (seatrt_status* status = cpu().run(ctx, stream, &node)) return status;
  return nullptr;
}

void broken_plan_destroy(seatrt_kernel_context*, seatrt_plan* handle) { delete reinterpret_cast<BrokenPlan*>(handle); }

seatrt_status* broken_plan_describe(seatrt_kernel_context*, const seatrt_plan* handle, seatrt_line_fn line, void* user) {
  if (!handle || !line) return sdk::make_status(SEATRT_ERR_INVALID_ARG, "plan_describe: no plan or callback");
  for (const std::string& l : reinterpret_cast<const BrokenPlan*>(handle)->lines) line(user, l.c_str());
  return nullptr;
}

// Score 0: never chosen by `auto`, even if someone points a seat at it.
seatrt_status* broken_probe(seatrt_kernel_probe* out) {
  seatrt_status* status = cpu().probe(out);
  if (!status && out) {
    out->score = 0;
    out->detail = "test-only broken provider";
  }
  return status;
}

const char* plugin_name() {
  switch (kVariant) {
    case Variant::linear: return "cpu-broken-linear";
    case Variant::rms_norm: return "cpu-broken-rms-norm";
    case Variant::attention: return "cpu-broken-attention";
    case Variant::plan: return "cpu-broken-plan";
  }
  return "cpu-broken";
}

const seatrt_plugin& descriptor() {
  static const seatrt_kernel_api api = [] {
    seatrt_kernel_api a = cpu();
    a.probe = broken_probe;
    a.supports = broken_supports;
    a.run = broken_run;
    if constexpr (kVariant == Variant::plan) {
      a.plan = broken_plan;
      a.plan_launch = broken_plan_launch;
      a.plan_destroy = broken_plan_destroy;
      a.plan_describe = broken_plan_describe;
    }
    return a;
  }();
  static const seatrt_plugin plugin = [] {
    seatrt_plugin p = seatrt::cpu::plugin_descriptor();
    p.name = plugin_name();
    p.description = "test-only: a wrong provider for the conformance tool's own tests";
    p.kernels = &api;
    return p;
  }();
  return plugin;
}

const seatrt_plugin& kPlugin = descriptor();

}  // namespace

SEATRT_DEFINE_PLUGIN(kPlugin)
