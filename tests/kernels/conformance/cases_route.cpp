// route (ABI 1.5) at the Gemma-4 26B-A4B router shape and as the Gemma-4
// plugin calls it: x [T, 2816] (the F32 residual), a dense BF16 router
// [128, 2816], a small F32 router gain (its folded H^-1/2 scale), a BF16
// gain for the experts' input, a BF16 per-expert scale, top-8,
// renormalised; decode rows (1, 5, 32) and one prefill size (300), with and
// without the logits (the plugin asks for none) or expert_in.  Compared:
// ids exactly; weights, logits and expert_in each by its own relative error.
//
// Near-ties: kernels.h lets a provider round the logits in another order
// (a few ulps), "and where two logits are that close so may the choice
// between them".  So that ids can be compared exactly, a row of x whose
// top-(k+1) logits (computed here in double from the inputs) lie closer
// than kTieGap of the row's largest |logit| is drawn again before the case
// runs; both providers get the same x (the same generator, the same double
// arithmetic).  kTieGap is the F32 bound: logits that agree within it may
// order either way.
//
// An optional slot: a provider without it (NULL, or an older table) gets
// SKIP before any input is made.
#include <algorithm>
#include <cmath>
#include <functional>

#include "cases.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

constexpr int64_t kHidden = 2816, kExperts = 128;
constexpr int32_t kTopK = 8;
constexpr float kEps = 1e-6f;
constexpr double kTieGap = kBoundF32;
constexpr int kMaxRedraws = 100;  // per row; a near-tie has a chance of about 1e-3

// The row's logits in double: (rmsnorm(x) * gain) . W^T.
std::vector<double> row_logits(const std::vector<double>& x, const std::vector<double>& gain,
                               const std::vector<double>& w) {
  double sum = 0.0;
  for (double v : x) sum += v * v;
  const double inv = 1.0 / std::sqrt(sum / static_cast<double>(x.size()) + kEps);
  std::vector<double> r(x.size());
  for (size_t h = 0; h < x.size(); ++h) r[h] = x[h] * inv * gain[h];
  std::vector<double> logits(static_cast<size_t>(kExperts), 0.0);
  for (size_t e = 0; e < logits.size(); ++e)
    for (size_t h = 0; h < r.size(); ++h) logits[e] += r[h] * w[e * r.size() + h];
  return logits;
}

// Whether the top k+1 logits are pairwise at least kTieGap (relative to the
// largest |logit|) apart, so that every conforming provider picks and orders
// the same k.
bool clear_top_k(std::vector<double> logits) {
  double largest = 0.0;
  for (double l : logits) largest = std::max(largest, std::fabs(l));
  std::partial_sort(logits.begin(), logits.begin() + kTopK + 1, logits.end(), std::greater<>());
  for (int32_t j = 0; j < kTopK; ++j)
    if (logits[static_cast<size_t>(j)] - logits[static_cast<size_t>(j + 1)] < kTieGap * largest) return false;
  return true;
}

// x [tokens, H] of `dtype` in +-4 with no near-tie in any row's top k+1.
Tensor draw_x(std::mt19937& rng, int32_t dtype, int64_t tokens, const Tensor& gain, const Tensor& router) {
  Tensor x = random_input(rng, dtype, {tokens, kHidden}, 4.0);
  const std::vector<double> g = gain.values(), w = router.values();
  std::uniform_real_distribution<double> dist(-4.0, 4.0);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int tries = 0; tries < kMaxRedraws; ++tries) {
      std::vector<double> row(static_cast<size_t>(kHidden));
      for (int64_t h = 0; h < kHidden; ++h) row[static_cast<size_t>(h)] = x.at(t * kHidden + h);  // as stored
      if (clear_top_k(row_logits(row, g, w))) break;
      for (int64_t h = 0; h < kHidden; ++h) x.set(t * kHidden + h, dist(rng));
    }
  }
  return x;
}

Case route_case(int64_t tokens, int32_t dtype, bool with_logits, bool with_expert_in) {
  const std::string label = "[" + std::to_string(tokens) + ", 2816] " + (dtype == SEATRT_DTYPE_F32 ? "F32" : "BF16") +
                            " -> 128 top-8 renorm scaled" + (with_logits ? ", logits" : "") +
                            (with_expert_in ? ", expert_in" : "");
  const double bound = dtype == SEATRT_DTYPE_F32 ? kBoundF32 : kBoundBF16;
  return {"route", label, bound, [=](Provider& p, std::mt19937& rng) {
            need_op(p, &seatrt_kernel_api::route, "route");
            const test::DenseWeight router = test::random_dense(rng, SEATRT_DTYPE_BF16, kExperts, kHidden, 0.5);
            Tensor router_gain = test::random_tensor(rng, SEATRT_DTYPE_F32, {kHidden}, 0.01, 0.05);
            Tensor expert_gain = random_input(rng, SEATRT_DTYPE_BF16, {kHidden}, 2.0);
            Tensor scale = test::random_tensor(rng, SEATRT_DTYPE_BF16, {kExperts}, 0.5, 2.0);
            Tensor x = draw_x(rng, dtype, tokens, router_gain, router.data);
            Tensor ids(SEATRT_DTYPE_I32, {tokens, kTopK}), weights(SEATRT_DTYPE_F32, {tokens, kTopK});
            Tensor expert_in(dtype, {tokens, kHidden}), logits(SEATRT_DTYPE_F32, {tokens, kExperts});
            auto dr = upload(p, router);
            DeviceTensor dx(p, x), drg(p, router_gain), deg(p, expert_gain), ds(p, scale), di(p, ids),
                dw(p, weights), de(p, expert_in), dl(p, logits);
            seatrt_route_args args{};
            args.struct_size = sizeof args;
            args.eps = kEps;
            args.x = dx.get();
            args.router_norm_weight = drg.get();
            args.router = &dr->get();
            args.top_k = kTopK;
            args.renormalize = 1;
            args.per_expert_scale = ds.get();
            args.expert_norm_weight = deg.get();
            args.expert_in = with_expert_in ? de.get() : nullptr;
            args.logits = with_logits ? dl.get() : nullptr;
            args.ids = di.get();
            args.weights = dw.get();
            call_op(p, &seatrt_kernel_api::route, args, "route");
            Outputs o;
            di.download(ids);
            for (int64_t i = 0; i < ids.numel(); ++i) o.exact.push_back(ids.as<int32_t>()[i]);
            dw.download(weights);
            o.add_part(weights.values());
            if (with_logits) {
              dl.download(logits);
              o.add_part(logits.values());
            }
            if (with_expert_in) {
              de.download(expert_in);
              o.add_part(expert_in.values());
            }
            return o;
          }};
}

}  // namespace

void add_route_cases(std::vector<Case>& cases) {
  constexpr int32_t kF32 = SEATRT_DTYPE_F32, kBF16 = SEATRT_DTYPE_BF16;
  cases.push_back(route_case(1, kF32, true, true));
  cases.push_back(route_case(5, kF32, true, true));
  cases.push_back(route_case(5, kF32, false, true));  // as the plugin calls it
  cases.push_back(route_case(32, kF32, false, true));
  cases.push_back(route_case(32, kF32, true, false));
  cases.push_back(route_case(32, kBF16, true, true));
  cases.push_back(route_case(300, kF32, true, true));
}

}  // namespace seatrt::conformance
