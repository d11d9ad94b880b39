// The CUDA provider's plans (kernels.h: plan, plan_launch, plan_destroy,
// plan_describe): a graph's nodes read once, rewritten into this
// provider's fused operations (plan_rewrite.cpp), spread over one or two
// streams by their memory dependencies (plan_streams.cpp), and launched
// eagerly or as a captured CUDA graph (plan.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "context.hpp"
#include "fused_args.hpp"
#include "seatrt/cpp/op_registry.hpp"

namespace seatrt::cuda {

// A graph node's args as the shared checker read them.
union NodeArgs {
  seatrt_elementwise_args elementwise;
  seatrt_embedding_args embedding;
  seatrt_rms_norm_args rms_norm;
  seatrt_linear_args linear;
  seatrt_glu_args glu;
  seatrt_rope_args rope;
  seatrt_kv_store_args kv_store;
  seatrt_attention_args attention;
  seatrt_router_topk_args router_topk;
  seatrt_moe_args moe;
  seatrt_gather_rows_args gather_rows;
};

struct PlanNode {
  const seatrt_op* op = nullptr;  // the caller's, kept alive by the caller until plan_destroy
  int32_t kind = 0;
  NodeArgs args{};
  std::string name;  // "L/attn/q_norm", or "" when the graph has no names
  std::vector<sdk::ByteRange> reads, writes;
  // Writes that overwrite every byte of their range (contiguous outputs):
  // what they held before is dead.
  std::vector<sdk::ByteRange> kills;
};

// The graph's nodes, read and checked, with the questions the rewrite asks.
class PlanGraph {
 public:
  std::vector<PlanNode> nodes;

  int32_t size() const { return static_cast<int32_t>(nodes.size()); }
  // Node i's args when it is of kind K (and exists), else nullptr.
  template <seatrt_op_kind K>
  const typename sdk::OpArgs<K>::type* get(int32_t i) const {
    if (i < 0 || i >= size() || nodes[i].kind != K) return nullptr;
    return reinterpret_cast<const typename sdk::OpArgs<K>::type*>(&nodes[i].args);
  }
  // Whether the value `t` holds after node `last` is read by no later node
  // before later nodes have overwritten all of it.
  bool unread_after(int32_t last, const seatrt_tensor* t) const;
  // The first node after `after` that reads or writes any of `t`, or size().
  int32_t first_touch(int32_t after, const seatrt_tensor* t) const;
  // Whether nodes (first, last) exclusive read or write any of `t`.
  bool touched_between(int32_t first, int32_t last, const seatrt_tensor* t, bool writes_only) const;
};

// One planned kernel: a primitive node or a fused operation.
using StepArgs = std::variant<std::monostate, AddRmsNormArgs, RmsNormRopeArgs, LinearMultiArgs, LinearGluArgs,
                              RmsNormMultiArgs, QkvNormRopeStoreArgs, AddRmsNormPairArgs, RouteArgs>;

struct Step {
  StepArgs args;                // monostate: the primitive node nodes[0]
  std::vector<int32_t> nodes;   // the graph nodes it stands for, ascending
  int32_t position = 0;         // where it runs among the steps (its node order)
  int32_t stream = 0;           // 0: the caller's stream, 1: the plan's second stream
  int32_t wait_for = -1;        // a step on the other stream to wait for first, or -1
  int32_t event = -1;           // the event recorded after it, or -1
};

// The fused kernels' names, by StepArgs index (0: a primitive).
inline constexpr const char* kKernelNames[] = {"",           "add_rms_norm",   "rms_norm_rope",
                                               "linear_multi", "linear_glu",     "rms_norm_multi",
                                               "qkv_norm_rope_store", "add_rms_norm_pair", "route"};
static_assert(std::size(kKernelNames) == std::variant_size_v<StepArgs>);

// The kernel a step runs ("rms_norm", "add_rms_norm", ...).
std::string step_kernel(const PlanGraph& g, const Step& s);

// Tensor identity for the rewrite: the same view of the same memory.
bool same_tensor(const seatrt_tensor* a, const seatrt_tensor* b);
// The same contiguous bytes, possibly shaped differently ([T, H, D] and
// [T * H, D]).
bool same_memory(const seatrt_tensor* a, const seatrt_tensor* b);
bool overlap(const seatrt_tensor* a, const seatrt_tensor* b);
// Whether a view covers every byte of its range (row-major, no gaps).
bool dense(const seatrt_tensor& t);

// plan_rewrite.cpp: the steps of a graph, fused where options allow.
std::vector<Step> rewrite(const PlanGraph& g, const PlanOptions& options);
// plan_streams.cpp: stream, wait and event of every step; returns the
// number of events.
int32_t assign_streams(const PlanGraph& g, std::vector<Step>& steps, int32_t streams);

}  // namespace seatrt::cuda

struct seatrt_plan {
  seatrt::cuda::PlanGraph graph;
  std::vector<seatrt::cuda::Step> steps;
  std::string name;
  bool capture = false;       // launched many times (graph launches 0): captured at its second launch
  cudaStream_t eager_stream = nullptr;  // the caller's stream of the last eager launch
  int32_t streams_used = 1;
  cudaStream_t side = nullptr;  // the second stream, when used
  std::vector<cudaEvent_t> events;  // per recorded step, then fork and join
  cudaGraph_t graph_captured = nullptr;
  cudaGraphExec_t exec = nullptr;
};
