// router_topk: softmax (fp32) over all E logits, top-k (ties to the lower
// expert id), optional renormalisation of the k weights, then optional
// multiplication by per_expert_scale[id].
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "dtype.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

void router_topk(Context& ctx, const seatrt_router_topk_args* args_in) {
  constexpr const char* kOp = "router_topk";
  const auto& args = need_args(args_in, kOp);
  const seatrt_tensor& logits = need_tensor(args.logits, kOp, "logits");
  const seatrt_tensor& ids = need_tensor(args.ids, kOp, "ids");
  const seatrt_tensor& weights = need_tensor(args.weights, kOp, "weights");
  need_ndim(logits, kOp, "logits", 2);
  need_dtype(logits, kOp, "logits", kActivationDtypes);
  const int64_t tokens = logits.shape[0];
  const int64_t experts = logits.shape[1];
  const int64_t k = args.top_k;
  if (k < 1 || k > experts) {
    invalid(kOp, "top_k " + std::to_string(k) + " is outside 1.." + std::to_string(experts));
  }
  need_ndim(ids, kOp, "ids", 2);
  need_dtype(ids, kOp, "ids", {SEATRT_DTYPE_I32});
  need_dim(ids, kOp, "ids", 0, tokens);
  need_dim(ids, kOp, "ids", 1, k);
  need_ndim(weights, kOp, "weights", 2);
  need_dtype(weights, kOp, "weights", {SEATRT_DTYPE_F32});
  need_dim(weights, kOp, "weights", 0, tokens);
  need_dim(weights, kOp, "weights", 1, k);
  std::vector<float> expert_scale;
  if (args.per_expert_scale) {
    const seatrt_tensor& pes = need_tensor(args.per_expert_scale, kOp, "per_expert_scale");
    need_ndim(pes, kOp, "per_expert_scale", 1);
    need_dtype(pes, kOp, "per_expert_scale", kActivationDtypes);
    need_dim(pes, kOp, "per_expert_scale", 0, experts);
    expert_scale.resize(static_cast<size_t>(experts));
    Rows(pes).load(0, expert_scale.data());
  }
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
    std::vector<int32_t> order(static_cast<size_t>(experts));
    std::vector<float> top_w(static_cast<size_t>(k));
    for (int64_t t = begin; t < end; ++t) {
      const float* row = all.data() + t * experts;
      const float max_logit = *std::max_element(row, row + experts);
      double sum = 0.0;
      for (int64_t e = 0; e < experts; ++e) {
        prob[static_cast<size_t>(e)] = std::exp(row[e] - max_logit);
        sum += prob[static_cast<size_t>(e)];
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (float& p : prob) p *= inv;
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
        const float pa = prob[static_cast<size_t>(a)], pb = prob[static_cast<size_t>(b)];
        return pa > pb || (pa == pb && a < b);
      });
      float selected = 0.0f;
      for (int64_t j = 0; j < k; ++j) {
        top_w[static_cast<size_t>(j)] = prob[static_cast<size_t>(order[static_cast<size_t>(j)])];
        selected += top_w[static_cast<size_t>(j)];
      }
      int32_t* id_out = reinterpret_cast<int32_t*>(id_rows.row_ptr(t));
      float* w_out = reinterpret_cast<float*>(weight_rows.row_ptr(t));
      for (int64_t j = 0; j < k; ++j) {
        const int32_t e = order[static_cast<size_t>(j)];
        float w = top_w[static_cast<size_t>(j)];
        if (args.renormalize) w /= selected;
        if (!expert_scale.empty()) w *= expert_scale[static_cast<size_t>(e)];
        id_out[j] = e;
        w_out[j] = w;
      }
    }
  });
}

}  // namespace seatrt::cpu
