// moe: out[t] = sum_j weights[t,j] * down_e(act(gate_e(x_t)) * up_e(x_t)),
// e = ids[t,j].  Tokens are grouped per expert (each expert's weights are
// decoded once per group) and experts run in parallel; every (t, j) result
// goes to its own buffer slot and the final sum runs over j in order, in
// fp32, so the result does not depend on scheduling.
#include <algorithm>
#include <string>
#include <vector>

#include "activation.hpp"
#include "dtype.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"
#include "weight.hpp"

namespace seatrt::cpu {
namespace {

constexpr const char* kOp = "moe";

// Bounds the per-call scratch (tokens * k * H floats) for long prefills.
constexpr int64_t kMaxScratchFloats = int64_t{8} << 20;

void check_expert(const seatrt_moe_args& args, int64_t e, int64_t hidden) {
  // Built with append: GCC 12 warns falsely (-Wrestrict) on "[" + to_string(e).
  std::string at("[");
  at.append(std::to_string(e)).append("]");
  validate_weight(&args.gate[e], kOp, std::string("gate").append(at).c_str());
  validate_weight(&args.up[e], kOp, std::string("up").append(at).c_str());
  validate_weight(&args.down[e], kOp, std::string("down").append(at).c_str());
  const int64_t inter = args.gate[e].out_features;
  if (args.gate[e].in_features != hidden || args.up[e].in_features != hidden ||
      args.up[e].out_features != inter || args.down[e].in_features != inter ||
      args.down[e].out_features != hidden) {
    invalid(kOp, "expert " + std::to_string(e) + " has shapes gate [" +
                     std::to_string(args.gate[e].out_features) + ", " + std::to_string(args.gate[e].in_features) +
                     "], up [" + std::to_string(args.up[e].out_features) + ", " +
                     std::to_string(args.up[e].in_features) + "], down [" +
                     std::to_string(args.down[e].out_features) + ", " + std::to_string(args.down[e].in_features) +
                     "]; expected [I, " + std::to_string(hidden) + "], [I, " + std::to_string(hidden) +
                     "], [" + std::to_string(hidden) + ", I]");
  }
}

// Runs one expert on its rows of x (rows x hidden, contiguous) and writes the
// rows x hidden result to `y`.
void run_expert(const seatrt_moe_args& args, int64_t e, const float* x, int64_t rows, float* y) {
  const seatrt_linear_weight& gate = args.gate[e];
  const int64_t hidden = gate.in_features;
  const int64_t inter = gate.out_features;
  std::vector<float> g(static_cast<size_t>(rows * inter)), u(static_cast<size_t>(rows * inter));
  std::vector<float> wrow(static_cast<size_t>(std::max(hidden, inter)));
  linear_block(gate, x, rows, 0, inter, g.data(), inter, wrow.data());
  linear_block(args.up[e], x, rows, 0, inter, u.data(), inter, wrow.data());
  apply_glu(args.activation, g.data(), u.data(), g.data(), rows * inter);
  linear_block(args.down[e], g.data(), rows, 0, hidden, y, hidden, wrow.data());
}

}  // namespace

void moe(Context& ctx, const seatrt_moe_args& args) {
  if (!is_known_activation(args.activation)) invalid(kOp, "unknown activation " + std::to_string(args.activation));
  if (args.num_experts < 1) invalid(kOp, "num_experts " + std::to_string(args.num_experts) + " is not positive");
  if (!args.gate || !args.up || !args.down) invalid(kOp, "gate, up and down expert arrays must not be NULL");
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  const seatrt_tensor& ids_t = need_tensor(args.ids, kOp, "ids");
  const seatrt_tensor& weights_t = need_tensor(args.weights, kOp, "weights");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_ndim(x, kOp, "x", 2);
  need_dtype(x, kOp, "x", kActivationDtypes);
  need_dtype(out, kOp, "out", kActivationDtypes);
  need_same_shape(x, "x", out, "out", kOp);
  const int64_t tokens = x.shape[0];
  const int64_t hidden = x.shape[1];
  need_ndim(ids_t, kOp, "ids", 2);
  need_dtype(ids_t, kOp, "ids", {SEATRT_DTYPE_I32});
  need_dim(ids_t, kOp, "ids", 0, tokens);
  const int64_t k = ids_t.shape[1];
  need_ndim(weights_t, kOp, "weights", 2);
  need_dtype(weights_t, kOp, "weights", {SEATRT_DTYPE_F32});
  need_same_shape(ids_t, "ids", weights_t, "weights", kOp);
  const std::vector<int64_t> ids = read_indices(ids_t, kOp, "ids");
  std::vector<char> used(static_cast<size_t>(args.num_experts), 0);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= args.num_experts) {
      invalid(kOp, "ids[" + std::to_string(i / static_cast<size_t>(k)) + ", " + std::to_string(i % static_cast<size_t>(k)) +
                       "] = " + std::to_string(ids[i]) + " is outside 0.." + std::to_string(args.num_experts - 1));
    }
    if (!used[static_cast<size_t>(ids[i])]) {
      check_expert(args, ids[i], hidden);
      used[static_cast<size_t>(ids[i])] = 1;
    }
  }
  const Rows x_rows(x);
  const Rows w_rows(weights_t);
  const Rows out_rows(out);
  std::vector<float> route_w(static_cast<size_t>(tokens * k));
  for (int64_t t = 0; t < tokens; ++t) w_rows.load(t, route_w.data() + t * k);

  const int64_t chunk = std::max<int64_t>(1, kMaxScratchFloats / std::max<int64_t>(1, k * hidden));
  for (int64_t t0 = 0; t0 < tokens; t0 += chunk) {
    const int64_t t1 = std::min(tokens, t0 + chunk);
    // Assignments of this chunk, grouped by expert in (token, j) order.
    std::vector<std::vector<int64_t>> slots(static_cast<size_t>(args.num_experts));
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t j = 0; j < k; ++j) slots[static_cast<size_t>(ids[static_cast<size_t>(t * k + j)])].push_back(t * k + j);
    }
    std::vector<int64_t> active;
    for (int64_t e = 0; e < args.num_experts; ++e) {
      if (!slots[static_cast<size_t>(e)].empty()) active.push_back(e);
    }
    std::vector<float> contrib(static_cast<size_t>((t1 - t0) * k * hidden));
    ctx.pool.parallel_for(static_cast<int64_t>(active.size()), [&](int64_t a) {
      const int64_t e = active[static_cast<size_t>(a)];
      const std::vector<int64_t>& mine = slots[static_cast<size_t>(e)];
      const int64_t rows = static_cast<int64_t>(mine.size());
      std::vector<float> xe(static_cast<size_t>(rows * hidden)), ye(static_cast<size_t>(rows * hidden));
      for (int64_t r = 0; r < rows; ++r) x_rows.load(mine[static_cast<size_t>(r)] / k, xe.data() + r * hidden);
      run_expert(args, e, xe.data(), rows, ye.data());
      for (int64_t r = 0; r < rows; ++r) {
        std::copy_n(ye.data() + r * hidden, hidden,
                    contrib.data() + (mine[static_cast<size_t>(r)] - t0 * k) * hidden);
      }
    });
    parallel_chunks(ctx.pool, t1 - t0, [&](int64_t begin, int64_t end) {
      std::vector<float> acc(static_cast<size_t>(hidden));
      for (int64_t i = begin; i < end; ++i) {
        const int64_t t = t0 + i;
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t j = 0; j < k; ++j) {
          const float w = route_w[static_cast<size_t>(t * k + j)];
          const float* y = contrib.data() + (i * k + j) * hidden;
          for (int64_t h = 0; h < hidden; ++h) acc[static_cast<size_t>(h)] += w * y[h];
        }
        out_rows.store(t, acc.data());
      }
    });
  }
}

}  // namespace seatrt::cpu
