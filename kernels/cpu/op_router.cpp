// router_topk, per row in fp32: scores p (softmax over all E logits, or a
// sigmoid of each), selection values p + correction_bias, optional group
// limiting (a group scores the sum of its two largest selection values; the
// top_groups best stay eligible), the top_k eligible experts (ties to the
// lower id), and their weights p[id]: renormalised, times
// per_expert_scale[id], times routed_scale, each when asked.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "dtype.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

constexpr const char* kOp = "router_topk";

// The [E] vector `t` names, as floats (empty when t is NULL).
std::vector<float> load_expert_vector(const seatrt_tensor* t, const char* name, int64_t experts,
                                      std::initializer_list<int32_t> dtypes) {
  std::vector<float> v;
  if (!t) return v;
  const seatrt_tensor& d = need_tensor(t, kOp, name);
  need_ndim(d, kOp, name, 1);
  need_dtype(d, kOp, name, dtypes);
  need_dim(d, kOp, name, 0, experts);
  v.resize(static_cast<size_t>(experts));
  Rows(d).load(0, v.data());
  return v;
}

// The group limit's shape: `size` experts per group, `keep` groups kept
// (groups == 1: no limit).
struct Groups {
  int64_t groups = 1;
  int64_t size = 0;
  int64_t keep = 1;
};

Groups check_groups(const seatrt_router_topk_args& args, int64_t experts) {
  Groups g;
  g.size = experts;
  if (args.num_groups <= 1) {
    if (args.num_groups < 0) invalid(kOp, "num_groups " + std::to_string(args.num_groups) + " is negative");
    return g;
  }
  g.groups = args.num_groups;
  if (experts % g.groups != 0) {
    invalid(kOp, std::to_string(experts) + " experts do not form " + std::to_string(g.groups) + " equal groups");
  }
  g.size = experts / g.groups;
  if (g.size < 2) invalid(kOp, "groups of " + std::to_string(g.size) + " expert: a group scores its two largest");
  if (args.top_groups < 1 || args.top_groups > g.groups) {
    invalid(kOp, "top_groups " + std::to_string(args.top_groups) + " is outside 1.." + std::to_string(g.groups));
  }
  g.keep = args.top_groups;
  return g;
}

// The probabilities of one row of logits.
void score_row(int32_t scoring, const float* logits, int64_t experts, float* p) {
  if (scoring == SEATRT_ROUTER_SIGMOID) {
    for (int64_t e = 0; e < experts; ++e) p[e] = 1.0f / (1.0f + std::exp(-logits[e]));
    return;
  }
  const float max_logit = *std::max_element(logits, logits + experts);
  double sum = 0.0;
  for (int64_t e = 0; e < experts; ++e) {
    p[e] = std::exp(logits[e] - max_logit);
    sum += p[e];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t e = 0; e < experts; ++e) p[e] *= inv;
}

// eligible[e] = 0 for the experts of groups outside the best `keep`.
void limit_groups(const Groups& g, const std::vector<float>& select, std::vector<char>& eligible) {
  std::fill(eligible.begin(), eligible.end(), 1);
  if (g.groups <= 1) return;
  std::vector<float> score(static_cast<size_t>(g.groups));
  for (int64_t k = 0; k < g.groups; ++k) {
    const float* s = select.data() + k * g.size;
    float first = -INFINITY, second = -INFINITY;
    for (int64_t i = 0; i < g.size; ++i) {
      if (s[i] > first) {
        second = first;
        first = s[i];
      } else if (s[i] > second) {
        second = s[i];
      }
    }
    score[static_cast<size_t>(k)] = first + second;
  }
  std::vector<int32_t> order(static_cast<size_t>(g.groups));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return score[static_cast<size_t>(a)] > score[static_cast<size_t>(b)];
  });
  for (size_t j = static_cast<size_t>(g.keep); j < order.size(); ++j) {
    std::fill_n(eligible.begin() + order[j] * g.size, g.size, 0);
  }
}

}  // namespace

void router_topk(Context& ctx, const seatrt_router_topk_args& args) {
  const seatrt_tensor& logits = need_tensor(args.logits, kOp, "logits");
  const seatrt_tensor& ids = need_tensor(args.ids, kOp, "ids");
  const seatrt_tensor& weights = need_tensor(args.weights, kOp, "weights");
  if (args.scoring != SEATRT_ROUTER_SOFTMAX && args.scoring != SEATRT_ROUTER_SIGMOID) {
    unsupported(kOp, "unknown scoring " + std::to_string(args.scoring));
  }
  need_ndim(logits, kOp, "logits", 2);
  need_dtype(logits, kOp, "logits", kActivationDtypes);
  const int64_t tokens = logits.shape[0];
  const int64_t experts = logits.shape[1];
  const Groups groups = check_groups(args, experts);
  const int64_t k = args.top_k;
  const int64_t eligible_count = groups.keep * groups.size;
  if (k < 1 || k > eligible_count) {
    invalid(kOp, "top_k " + std::to_string(k) + " is outside 1.." + std::to_string(eligible_count) +
                     " (the eligible experts)");
  }
  if (!std::isfinite(args.routed_scale)) invalid(kOp, "routed_scale is not finite");
  need_ndim(ids, kOp, "ids", 2);
  need_dtype(ids, kOp, "ids", {SEATRT_DTYPE_I32});
  need_dim(ids, kOp, "ids", 0, tokens);
  need_dim(ids, kOp, "ids", 1, k);
  need_ndim(weights, kOp, "weights", 2);
  need_dtype(weights, kOp, "weights", {SEATRT_DTYPE_F32});
  need_dim(weights, kOp, "weights", 0, tokens);
  need_dim(weights, kOp, "weights", 1, k);
  const std::vector<float> expert_scale = load_expert_vector(args.per_expert_scale, "per_expert_scale", experts, kActivationDtypes);
  const std::vector<float> correction = load_expert_vector(args.correction_bias, "correction_bias", experts, {SEATRT_DTYPE_F32});
  const float routed_scale = args.routed_scale != 0.0f ? args.routed_scale : 1.0f;
  const Rows logit_rows(logits);
  const Rows id_rows(ids);
  const Rows weight_rows(weights);
  // Non-finite logits would make the whole row's routing meaningless.
  std::vector<float> all(static_cast<size_t>(tokens * experts));
  for (int64_t t = 0; t < tokens; ++t) {
    logit_rows.load(t, all.data() + t * experts);
    for (int64_t e = 0; e < experts; ++e) {
      if (!std::isfinite(all[static_cast<size_t>(t * experts + e)])) {
        throw sdk::Error(SEATRT_ERR_NON_FINITE, std::string(kOp) + ": logits[" + std::to_string(t) +
                                                    ", " + std::to_string(e) + "] is not finite");
      }
    }
  }
  parallel_chunks(ctx.pool, tokens, [&](int64_t begin, int64_t end) {
    std::vector<float> prob(static_cast<size_t>(experts));
    std::vector<float> select(static_cast<size_t>(experts));
    std::vector<char> eligible(static_cast<size_t>(experts));
    std::vector<int32_t> order;
    for (int64_t t = begin; t < end; ++t) {
      score_row(args.scoring, all.data() + t * experts, experts, prob.data());
      for (int64_t e = 0; e < experts; ++e) {
        const auto i = static_cast<size_t>(e);
        select[i] = correction.empty() ? prob[i] : prob[i] + correction[i];
      }
      limit_groups(groups, select, eligible);
      order.clear();
      for (int32_t e = 0; e < experts; ++e)
        if (eligible[static_cast<size_t>(e)]) order.push_back(e);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
        const float sa = select[static_cast<size_t>(a)], sb = select[static_cast<size_t>(b)];
        return sa > sb || (sa == sb && a < b);
      });
      float selected = 0.0f;
      for (int64_t j = 0; j < k; ++j) selected += prob[static_cast<size_t>(order[static_cast<size_t>(j)])];
      int32_t* id_out = reinterpret_cast<int32_t*>(id_rows.row_ptr(t));
      float* w_out = reinterpret_cast<float*>(weight_rows.row_ptr(t));
      for (int64_t j = 0; j < k; ++j) {
        const int32_t e = order[static_cast<size_t>(j)];
        float w = prob[static_cast<size_t>(e)];
        if (args.renormalize) w /= selected;
        if (!expert_scale.empty()) w *= expert_scale[static_cast<size_t>(e)];
        id_out[j] = e;
        w_out[j] = w * routed_scale;
      }
    }
  });
}

}  // namespace seatrt::cpu
