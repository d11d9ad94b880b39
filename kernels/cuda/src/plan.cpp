// plan, plan_launch, plan_destroy and plan_describe of the 2.0 table.  A
// plan reads and checks every node once, rewrites the nodes into fused
// operations (plan_rewrite.cpp) and spreads them over streams
// (plan_streams.cpp).  A graph launched once runs eagerly; a graph launched
// many times runs eagerly at its first launch (which also sizes every
// stream's scratch memory) and is captured into a CUDA graph at its second,
// which is replayed from then on (on whatever stream it is launched).
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>

#include "ops.hpp"
#include "plan.hpp"
#include "profile.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::cuda {
namespace {

std::string node_label(const seatrt_op_graph& g, int32_t i) {
  const char* name = g.node_names ? g.node_names[i] : nullptr;
  return "node " + std::to_string(i) + (name ? std::string(" '") + name + "'" : std::string());
}

// Reads node i: the shared checker, this provider's support, its memory.
PlanNode read_node(const seatrt_op_graph& g, int32_t i) {
  const seatrt_op* op = &g.nodes[i];
  PlanNode n;
  n.op = op;
  n.kind = op->kind;
  if (g.node_names && g.node_names[i]) n.name = g.node_names[i];
  const sdk::OpInfo* info = sdk::op_info(op->kind);
  if (!info || info->synchronous)
    throw sdk::Error(SEATRT_ERR_UNSUPPORTED, "cuda plan: " + node_label(g, i) + ": " + sdk::op_name(op->kind) +
                                                 (info ? " is never in a graph" : ""));
  const auto fail = [&](seatrt_status_code code, const std::string& why) {
    throw sdk::Error(code, "cuda plan: " + node_label(g, i) + ": " + why);
  };
  try {
    check_op(op);
  } catch (const sdk::Error& e) {
    fail(e.code(), e.what());
  }
  const std::string reason = unsupported_reason(*op);
  if (!reason.empty()) fail(SEATRT_ERR_UNSUPPORTED, sdk::op_name(op->kind) + ": " + reason);
  // Every kind this provider runs fits NodeArgs.
  if (info->args_size > sizeof(NodeArgs)) fail(SEATRT_ERR_UNSUPPORTED, sdk::op_name(op->kind));
  sdk::read_args_raw(op, op->kind, &n.args, info->args_size, nullptr);
  sdk::for_each_access(*op, [&](const sdk::OpAccess& a) {
    const sdk::ByteRange r = sdk::byte_range(*a.tensor);
    if (a.access != sdk::Access::write) n.reads.push_back(r);
    if (a.access != sdk::Access::read) n.writes.push_back(r);
    if (a.access == sdk::Access::write && dense(*a.tensor)) n.kills.push_back(r);
  });
  return n;
}

void run_fused(seatrt_kernel_context* ctx, seatrt_stream s, const StepArgs& args) {
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (!std::is_same_v<A, std::monostate>) {
          const OpTimer timer(profiler_of(ctx), s, kKernelNames[args.index()], &a);
          if constexpr (std::is_same_v<A, AddRmsNormArgs>) add_rms_norm(ctx, s, &a);
          else if constexpr (std::is_same_v<A, RmsNormRopeArgs>) rms_norm_rope(ctx, s, &a);
          else if constexpr (std::is_same_v<A, LinearMultiArgs>) linear_multi(ctx, s, &a);
          else if constexpr (std::is_same_v<A, LinearGluArgs>) linear_glu(ctx, s, &a);
          else if constexpr (std::is_same_v<A, RmsNormMultiArgs>) rms_norm_multi(ctx, s, &a);
          else if constexpr (std::is_same_v<A, QkvNormRopeStoreArgs>) qkv_norm_rope_store(ctx, s, &a);
          else if constexpr (std::is_same_v<A, AddRmsNormPairArgs>) add_rms_norm_pair(ctx, s, &a);
          else route(ctx, s, &a);
        }
      },
      args);
}

void run_step(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_plan& p, const Step& step) {
  if (step.args.index() == 0) run_op(ctx, s, p.graph.nodes[step.nodes[0]].op);
  else run_fused(ctx, s, step.args);
}

// The fork and join events follow the steps' own.
cudaEvent_t fork_event(const seatrt_plan& p) { return p.events[p.events.size() - 2]; }
cudaEvent_t join_event(const seatrt_plan& p) { return p.events[p.events.size() - 1]; }

// Every step in order on its stream: the second stream starts from the
// caller stream's state at launch and the caller's stream ends waiting for
// it, so the plan is one unit of work on the caller's stream (and forms one
// capture).
void run_steps(seatrt_kernel_context* ctx, cudaStream_t caller, seatrt_plan& p) {
  const cudaStream_t streams[2] = {caller, p.side};
  if (p.side) {
    check(cudaEventRecord(fork_event(p), caller), "cudaEventRecord (plan fork)");
    check(cudaStreamWaitEvent(p.side, fork_event(p), 0), "cudaStreamWaitEvent (plan fork)");
  }
  try {
    for (const Step& step : p.steps) {
      const cudaStream_t s = streams[step.stream];
      if (step.wait_for >= 0)
        check(cudaStreamWaitEvent(s, p.events[p.steps[step.wait_for].event], 0), "cudaStreamWaitEvent (plan)");
      run_step(ctx, s, p, step);
      if (step.event >= 0) check(cudaEventRecord(p.events[step.event], s), "cudaEventRecord (plan)");
    }
  } catch (...) {
    // Joined all the same: the caller's stream must not run ahead of work
    // already enqueued on the second stream (and a capture must end joined).
    if (p.side) {
      cudaEventRecord(join_event(p), p.side);
      cudaStreamWaitEvent(caller, join_event(p), 0);
    }
    throw;
  }
  if (p.side) {
    check(cudaEventRecord(join_event(p), p.side), "cudaEventRecord (plan join)");
    check(cudaStreamWaitEvent(caller, join_event(p), 0), "cudaStreamWaitEvent (plan join)");
  }
}

// The second launch of a many-times plan: the steps captured from the
// caller's stream (relaxed: other threads may allocate meanwhile), then
// instantiated.  A failed capture is ended so the stream stays usable.
void capture(seatrt_kernel_context* ctx, cudaStream_t caller, seatrt_plan& p) {
  check(cudaStreamBeginCapture(caller, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture (plan)");
  try {
    run_steps(ctx, caller, p);
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(caller, &broken);
    if (broken) cudaGraphDestroy(broken);
    cudaGetLastError();
    throw;
  }
  check(cudaStreamEndCapture(caller, &p.graph_captured), "cudaStreamEndCapture (plan)");
  const cudaError_t err = cudaGraphInstantiate(&p.exec, p.graph_captured, 0);
  if (err != cudaSuccess) {
    cudaGraphDestroy(p.graph_captured);
    p.graph_captured = nullptr;
    p.exec = nullptr;
    check(err, "cudaGraphInstantiate (plan)");
  }
}

}  // namespace

seatrt_plan* plan(seatrt_kernel_context* ctx, const seatrt_op_graph* graph) {
  use_device(ctx);
  if (!graph || graph->struct_size < offsetof(seatrt_op_graph, launches) + sizeof(int32_t))
    throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda plan: graph is NULL or its struct_size too small");
  if (graph->num_nodes < 0 || (graph->num_nodes > 0 && !graph->nodes))
    throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda plan: graph has no nodes array");
  auto p = std::make_unique<seatrt_plan>();
  p->name = graph->name ? graph->name : "";
  p->capture = graph->launches == 0;
  for (int32_t i = 0; i < graph->num_nodes; ++i) p->graph.nodes.push_back(read_node(*graph, i));
  const PlanOptions& o = ctx->plan_options;
  p->steps = rewrite(p->graph, o);
  const int32_t events = assign_streams(p->graph, p->steps, o.streams);
  for (const Step& s : p->steps)
    if (s.stream == 1) p->streams_used = 2;
  try {
    if (p->streams_used > 1) {
      check(cudaStreamCreateWithFlags(&p->side, cudaStreamNonBlocking), "cudaStreamCreate (plan)");
      p->events.assign(static_cast<size_t>(events) + 2, nullptr);
      for (cudaEvent_t& e : p->events) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate (plan)");
    }
  } catch (...) {
    plan_destroy(ctx, p.get());
    p.release();
    throw;
  }
  return p.release();
}

void plan_launch(seatrt_kernel_context* ctx, seatrt_stream stream, seatrt_plan* p) {
  use_device(ctx);
  if (!p) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda plan_launch: plan is NULL");
  const auto caller = static_cast<cudaStream_t>(stream);
  // Captured only after an eager launch on the same stream sized that
  // stream's scratch (it cannot grow during a capture); the legacy default
  // stream cannot be captured at all and always runs eagerly.
  if (p->exec) {
    check(cudaGraphLaunch(p->exec, caller), "cudaGraphLaunch (plan)");
  } else if (p->capture && p->eager_stream == caller && caller) {
    try {
      capture(ctx, caller, *p);
    } catch (const sdk::Error&) {
      // Nothing of this launch ran: run it eagerly, as every later one (an
      // error of the steps themselves shows again there).
      p->capture = false;
      run_steps(ctx, caller, *p);
      return;
    }
    check(cudaGraphLaunch(p->exec, caller), "cudaGraphLaunch (plan)");
  } else {
    run_steps(ctx, caller, *p);
    p->eager_stream = caller;
  }
}

void plan_destroy(seatrt_kernel_context* ctx, seatrt_plan* p) {
  if (!p) return;
  if (ctx) cudaSetDevice(ctx->device);
  if (p->side) cudaStreamSynchronize(p->side);
  if (p->exec) cudaGraphExecDestroy(p->exec);
  if (p->graph_captured) cudaGraphDestroy(p->graph_captured);
  for (cudaEvent_t e : p->events)
    if (e) cudaEventDestroy(e);
  if (p->side) cudaStreamDestroy(p->side);
  if (ctx && p->side) {
    // The second stream's scratch memory goes with it.
    std::lock_guard<std::mutex> lock(ctx->mutex);
    for (auto* m : {&ctx->scratch, &ctx->route}) {
      auto it = m->find(p->side);
      if (it == m->end()) continue;
      if (it->second.ptr) cudaFree(it->second.ptr);
      for (void* r : it->second.retired) cudaFree(r);
      m->erase(it);
    }
  }
  cudaGetLastError();
  delete p;
}

void plan_describe(const seatrt_plan* p, seatrt_line_fn line, void* user_data) {
  if (!p || !line) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda plan_describe: plan or line is NULL");
  for (const Step& s : p->steps) {
    std::string ids, names;
    for (int32_t n : s.nodes) {
      ids += (ids.empty() ? "" : ",") + std::to_string(n);
      const std::string& name = p->graph.nodes[n].name;
      if (!name.empty()) names += (names.empty() ? "" : ", ") + name;
    }
    std::string text = step_kernel(p->graph, s) + " <- node" + (s.nodes.size() > 1 ? "s " : " ") + ids;
    if (!names.empty()) text += " (" + names + ")";
    if (s.stream == 1) text += " [stream 1]";
    line(user_data, text.c_str());
  }
  const std::string summary = std::to_string(p->graph.size()) + " nodes -> " + std::to_string(p->steps.size()) +
                              " kernels on " + std::to_string(p->streams_used) + " stream" +
                              (p->streams_used > 1 ? "s" : "");
  line(user_data, summary.c_str());
}

}  // namespace seatrt::cuda
