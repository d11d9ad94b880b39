// The dispatch table's graph slots: the primary's planner when it takes
// the whole graph, else a host plan that runs the nodes in order, each
// through the provider chosen for it when the plan was made.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dispatch_context.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::host::dispatch {

namespace {

struct HostPlan {
  seatrt_plan* primary = nullptr;  // the primary's plan, when it planned the graph
  std::string name;
  int32_t nodes = 0;
  // Host plans only: the nodes (the caller keeps what they point to alive)
  // and where each runs.
  std::vector<seatrt_op> ops;
  std::vector<Route> routes;
  std::vector<std::string> node_names;
};

HostPlan* as_host_plan(seatrt_plan* p) { return reinterpret_cast<HostPlan*>(p); }
const HostPlan* as_host_plan(const seatrt_plan* p) { return reinterpret_cast<const HostPlan*>(p); }

seatrt_status* fail(seatrt_status_code code, const std::string& msg) {
  return host_api()->status_create(code, msg.c_str());
}

std::string node_label(const seatrt_op_graph& g, int32_t i) {
  std::string label = "node " + std::to_string(i);
  if (g.node_names && g.node_names[i]) label += std::string(" ") + g.node_names[i];
  return label;
}

// Whether the primary's planner may take the graph: it has one and
// supports every node.
bool primary_takes(const Context& d, const seatrt_op_graph& g) {
  const seatrt_kernel_api& p = d.impl->primary;
  if (!p.plan || !p.plan_launch || !p.plan_destroy || !p.supports) return false;
  for (int32_t i = 0; i < g.num_nodes; ++i)
    if (!p.supports(d.primary, &g.nodes[i])) return false;
  return true;
}

// Routes every node once; NULL on success, else the status naming the
// first node nobody runs.
seatrt_status* route_nodes(const Context& d, const seatrt_op_graph& g, HostPlan& plan) {
  for (int32_t i = 0; i < g.num_nodes; ++i) {
    const seatrt_op& op = g.nodes[i];
    const Route r = route(d, &op);
    if (r == Route::none) return refuse(d, &op, node_label(g, i) + " of graph '" + plan.name + "'");
    plan.ops.push_back(op);
    plan.routes.push_back(r);
    plan.node_names.push_back(g.node_names && g.node_names[i] ? g.node_names[i] : "");
  }
  return nullptr;
}

}  // namespace

seatrt_status* plan(seatrt_kernel_context* ctx, const seatrt_op_graph* graph, seatrt_plan** out) {
  if (!out) return fail(SEATRT_ERR_INVALID_ARG, "plan: out is NULL");
  *out = nullptr;
  if (!graph) return fail(SEATRT_ERR_INVALID_ARG, "plan: no graph (NULL)");
  // Fields beyond the caller's struct_size read as zero.
  seatrt_op_graph g{};
  std::memcpy(&g, graph, graph->struct_size < sizeof(g) ? graph->struct_size : sizeof(g));
  if (g.num_nodes < 0 || (g.num_nodes > 0 && !g.nodes))
    return fail(SEATRT_ERR_INVALID_ARG, "plan: a graph without its nodes");
  for (int32_t i = 0; i < g.num_nodes; ++i) {
    const sdk::OpInfo* info = sdk::op_info(g.nodes[i].kind);
    if (info && info->synchronous)
      return fail(SEATRT_ERR_INVALID_ARG, "plan: " + node_label(g, i) + " is a '" + info->name +
                                              "', which runs synchronously and is never in a graph");
  }
  const Context& d = *as_context(ctx);
  auto p = std::make_unique<HostPlan>();
  p->name = g.name ? g.name : "";
  p->nodes = g.num_nodes;
  if (primary_takes(d, g)) {
    seatrt_status* s = d.impl->primary.plan(d.primary, graph, &p->primary);
    // UNSUPPORTED: the planner declines the graph as a whole; the host
    // runs it node by node instead.
    if (s && host_api()->status_code(s) != SEATRT_ERR_UNSUPPORTED) return s;
    if (s) host_api()->status_free(s);
    if (!s && p->primary) {
      *out = reinterpret_cast<seatrt_plan*>(p.release());
      return nullptr;
    }
  }
  if (seatrt_status* s = route_nodes(d, g, *p)) return s;
  *out = reinterpret_cast<seatrt_plan*>(p.release());
  return nullptr;
}

seatrt_status* plan_launch(seatrt_kernel_context* ctx, seatrt_stream stream, seatrt_plan* plan) {
  if (!plan) return fail(SEATRT_ERR_INVALID_ARG, "plan_launch: plan is NULL");
  const Context& d = *as_context(ctx);
  HostPlan& p = *as_host_plan(plan);
  if (p.primary) return d.impl->primary.plan_launch(d.primary, stream, p.primary);
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    seatrt_status* s = run_routed(d, p.routes[i], stream, &p.ops[i]);
    if (!s) continue;
    const std::string msg = "graph '" + p.name + "' node " + std::to_string(i) +
                            (p.node_names[i].empty() ? "" : " " + p.node_names[i]) + " (" +
                            route_name(d, p.routes[i]) + "): " + host_api()->status_message(s);
    const seatrt_status_code code = host_api()->status_code(s);
    host_api()->status_free(s);
    return fail(code, msg);
  }
  return nullptr;
}

void plan_destroy(seatrt_kernel_context* ctx, seatrt_plan* plan) {
  if (!plan) return;
  const Context& d = *as_context(ctx);
  HostPlan* p = as_host_plan(plan);
  if (p->primary) d.impl->primary.plan_destroy(d.primary, p->primary);
  delete p;
}

seatrt_status* plan_describe(seatrt_kernel_context* ctx, const seatrt_plan* plan, seatrt_line_fn line,
                             void* user_data) {
  if (!plan || !line) return fail(SEATRT_ERR_INVALID_ARG, "plan_describe: plan or line is NULL");
  const Context& d = *as_context(ctx);
  const HostPlan& p = *as_host_plan(plan);
  const std::string nodes = std::to_string(p.nodes) + " nodes";
  if (p.primary) {
    line(user_data, ("planned by " + d.impl->primary_name + ": " + nodes).c_str());
    const auto describe = d.impl->primary.plan_describe;
    return describe ? describe(d.primary, p.primary, line, user_data) : nullptr;
  }
  line(user_data, ("run in order by the host: " + nodes).c_str());
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    std::string text = "node " + std::to_string(i) + " " + sdk::op_name(p.ops[i].kind);
    if (!p.node_names[i].empty()) text += " (" + p.node_names[i] + ")";
    line(user_data, (text + ": " + route_name(d, p.routes[i])).c_str());
  }
  return nullptr;
}

}  // namespace seatrt::host::dispatch
