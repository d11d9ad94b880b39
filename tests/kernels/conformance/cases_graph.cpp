// Whole-step graphs: two Gemma-4 MoE decoder layers (one sliding, one full
// with k_eq_v and a single-tensor cache), embedding to soft-capped logits,
// built with sdk::GraphBuilder (gemma_graph.hpp).  The candidate runs the
// graph through plan + plan_launch when it has a planner, so its fusions,
// reordering and concurrency are judged by their results; without one it
// runs the nodes in order through run() ("planned: no").  The reference
// always runs the nodes in order through run().  Decode graphs are planned
// once and launched for two steps with the inputs rewritten in between (a
// plan must read its inputs at launch); the prefill graph (rows > 64) is
// launched once.  Compared: h, x, logits, each layer's router ids (exact)
// and weights, and the caches, each within the BF16 bound, since every
// value after the first kv_store depends on BF16 cache contents.
#include <cstdio>

#include "fake_host.hpp"
#include "gemma_graph.hpp"

namespace seatrt::conformance {
namespace {

using namespace gemma;

struct GraphSpec {
  std::string name;  // the graph's name, as a host would give it
  StepPlan steps;
};

// Layer 0 sliding, window 16 (the decode sequences of 38 and 71 tokens reach
// past it); layer 1 full, k_eq_v, with a layer scalar (the "end/scale" node).
const std::vector<LayerSpec> kLayers = {{16, false, 1.0f}, {0, true, 0.8125f}};

// A provider-owned plan, destroyed with the case.
class Plan {
 public:
  Plan(Provider& p, const seatrt_op_graph& graph) : p_(p) {
    std::string message;
    const seatrt_status_code code = test::take_status(p.api().plan(p.ctx(), &graph, &plan_), &message);
    if (code == SEATRT_ERR_UNSUPPORTED) throw Skip("plan: not supported: " + message);
    if (code != SEATRT_OK) throw OpError("plan failed (code " + std::to_string(code) + "): " + message);
  }
  ~Plan() {
    if (plan_) p_.api().plan_destroy(p_.ctx(), plan_);
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  void launch() {
    p_.check(p_.api().plan_launch(p_.ctx(), p_.stream(), plan_), "plan_launch");
    p_.sync();
  }
  // The provider's plan_describe lines, printed above the case's result.
  void describe() const {
    if (!p_.describes_plans()) {
      std::printf("    plan| (no plan_describe)\n");
      return;
    }
    const auto print = [](void*, const char* line) { std::printf("    plan| %s\n", line ? line : "(null)"); };
    p_.check(p_.api().plan_describe(p_.ctx(), plan_, print, nullptr), "plan_describe");
  }

 private:
  Provider& p_;
  seatrt_plan* plan_ = nullptr;
};

Outputs run_graph(const GraphSpec& spec, Provider& p, std::mt19937& rng, Role role) {
  const int64_t num_blocks = blocks_needed(spec.steps);
  const HostModel host = make_host_model(rng, kLayers, num_blocks);
  const std::vector<StepInputs> steps = make_steps(rng, spec.steps, num_blocks);
  DeviceModel model(p, host, steps.front());
  sdk::GraphBuilder builder;
  model.build(builder);
  const seatrt_op_graph graph = builder.graph(spec.name, steps.size() == 1 ? 1 : 0);

  if (role == Role::candidate && p.plans()) {
    Plan plan(p, graph);
    std::printf("    planned: yes, %d nodes\n", graph.num_nodes);
    plan.describe();
    for (const StepInputs& in : steps) {
      model.set_inputs(in);
      plan.launch();
    }
  } else {
    if (role == Role::candidate) std::printf("    planned: no (the candidate has no plan slot), %d nodes\n", graph.num_nodes);
    for (const StepInputs& in : steps) {
      model.set_inputs(in);
      for (const seatrt_op& node : builder.nodes()) run_op(p, node);
    }
  }
  return model.read_outputs();
}

Case graph_case(GraphSpec spec, const std::string& label) {
  return {SEATRT_OP_INVALID, label, kBoundBF16,
          [spec = std::move(spec)](Provider& p, std::mt19937& rng, Role role) { return run_graph(spec, p, rng, role); }};
}

// One decode step of 1 token per sequence after `cached` tokens, then the next.
StepPlan decode(const std::vector<int64_t>& cached) {
  std::vector<int64_t> next = cached, ones(cached.size(), 1);
  for (int64_t& c : next) ++c;
  return {{cached, next}, {ones, ones}};
}

}  // namespace

void add_graph_cases(std::vector<Case>& cases) {
  cases.push_back(graph_case({"decode b=1", decode({37})}, "decode 1 seq x 1 token (cached 37), 2 launches"));
  cases.push_back(graph_case({"decode b=5", decode({37, 0, 15, 70, 22})},
                             "decode 5 seqs x 1 token (cached 37|0|15|70|22), 2 launches"));
  cases.push_back(graph_case({"prefill t=103", {{{0, 0}}, {{70, 33}}}},
                             "prefill 2 seqs of 70 and 33 tokens"));
}

}  // namespace seatrt::conformance
