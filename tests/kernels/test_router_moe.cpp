// router_topk and moe against naive references.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(4);
  return c;
}

struct Routed {
  std::vector<int32_t> ids;
  std::vector<double> weights;
};

Routed router_ref(const std::vector<double>& logits, int64_t experts, int64_t k, bool renorm,
                  const std::vector<double>* scale) {
  Routed r;
  for (size_t t = 0; t < logits.size() / static_cast<size_t>(experts); ++t) {
    std::vector<double> p(logits.begin() + static_cast<long>(t) * experts, logits.begin() + static_cast<long>(t + 1) * experts);
    const double mx = *std::max_element(p.begin(), p.end());
    double sum = 0;
    for (double& v : p) sum += (v = std::exp(v - mx));
    for (double& v : p) v /= sum;
    std::vector<int32_t> order(static_cast<size_t>(experts));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)]; });
    double sel = 0;
    for (int64_t j = 0; j < k; ++j) sel += p[static_cast<size_t>(order[static_cast<size_t>(j)])];
    for (int64_t j = 0; j < k; ++j) {
      const int32_t e = order[static_cast<size_t>(j)];
      double w = p[static_cast<size_t>(e)];
      if (renorm) w /= sel;
      if (scale) w *= (*scale)[static_cast<size_t>(e)];
      r.ids.push_back(e);
      r.weights.push_back(w);
    }
  }
  return r;
}

}  // namespace

TEST_CASE("router_topk: fp32 softmax over all experts, top-k, renormalise, per-expert scale") {
  std::mt19937 rng(51);
  const int64_t tokens = 9, experts = 16, k = 4;
  Tensor logits = test::random_tensor(rng, SEATRT_DTYPE_BF16, {tokens, experts}, -3, 3);
  Tensor pes = test::random_tensor(rng, SEATRT_DTYPE_F32, {experts}, 0.5, 2);
  Tensor ids(SEATRT_DTYPE_I32, {tokens, k});
  Tensor weights(SEATRT_DTYPE_F32, {tokens, k});
  for (bool renorm : {false, true}) {
    for (bool scaled : {false, true}) {
      seatrt_router_topk_args args{sizeof(seatrt_router_topk_args), logits.get(), static_cast<int32_t>(k),
                                   renorm ? 1 : 0, scaled ? pes.get() : nullptr, ids.get(), weights.get(), SEATRT_ROUTER_SOFTMAX, 0, 0, 0.0f, nullptr};
      cpu::router_topk(ctx(), args);
      const std::vector<double> scale = pes.values();
      const Routed ref = router_ref(logits.values(), experts, k, renorm, scaled ? &scale : nullptr);
      for (int64_t i = 0; i < tokens * k; ++i) REQUIRE(ids.as<int32_t>()[i] == ref.ids[static_cast<size_t>(i)]);
      CHECK(test::max_rel_err(weights.values(), ref.weights) < 1e-6);
    }
  }
}

TEST_CASE("router_topk: ties go to the lower expert id; NaN logits are reported") {
  Tensor logits(SEATRT_DTYPE_F32, {1, 6});
  for (int64_t e = 0; e < 6; ++e) logits.set(e, e == 4 ? 2.0 : 1.0);
  Tensor ids(SEATRT_DTYPE_I32, {1, 3});
  Tensor weights(SEATRT_DTYPE_F32, {1, 3});
  seatrt_router_topk_args args{sizeof(seatrt_router_topk_args), logits.get(), 3, 1, nullptr, ids.get(), weights.get(), SEATRT_ROUTER_SOFTMAX, 0, 0, 0.0f, nullptr};
  cpu::router_topk(ctx(), args);
  CHECK(ids.as<int32_t>()[0] == 4);
  CHECK(ids.as<int32_t>()[1] == 0);
  CHECK(ids.as<int32_t>()[2] == 1);
  logits.set(2, NAN);
  std::string msg;
  CHECK(test::error_of([&] { cpu::router_topk(ctx(), args); }, &msg) == SEATRT_ERR_NON_FINITE);
  CHECK_THAT(msg, Catch::Contains("logits[0, 2]"));
  args.top_k = 7;
  CHECK(test::error_of([&] { cpu::router_topk(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
}

TEST_CASE("router_topk: groups must split the experts evenly and keep enough of them") {
  Tensor logits(SEATRT_DTYPE_F32, {1, 6});
  for (int64_t e = 0; e < 6; ++e) logits.set(e, 0.1 * static_cast<double>(e));
  Tensor ids(SEATRT_DTYPE_I32, {1, 2});
  Tensor weights(SEATRT_DTYPE_F32, {1, 2});
  seatrt_router_topk_args args{sizeof(seatrt_router_topk_args), logits.get(), 2, 0, nullptr, ids.get(), weights.get(),
                               SEATRT_ROUTER_SIGMOID, 3, 1, 0.0f, nullptr};
  // Groups {0,1} {2,3} {4,5}: the last scores highest and is the only one kept.
  cpu::router_topk(ctx(), args);
  CHECK(ids.as<int32_t>()[0] == 5);
  CHECK(ids.as<int32_t>()[1] == 4);
  std::string msg;
  args.num_groups = 4;  // 6 experts do not split into 4 groups
  CHECK(test::error_of([&] { cpu::router_topk(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("equal groups"));
  args.num_groups = 6;  // groups of one expert have no "two largest"
  CHECK(test::error_of([&] { cpu::router_topk(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
  args.num_groups = 3;
  args.top_groups = 4;
  CHECK(test::error_of([&] { cpu::router_topk(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("top_groups"));
  args.top_groups = 1;
  args.top_k = 3;  // more than the one kept group's two experts
  CHECK(test::error_of([&] { cpu::router_topk(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("eligible"));
}

TEST_CASE("moe: weighted sum of gated experts, dense and NVFP4 experts") {
  std::mt19937 rng(52);
  const int64_t tokens = 6, hidden = 32, inter = 48, experts = 5, k = 3;
  for (bool nvfp4 : {false, true}) {
    std::vector<test::Nvfp4Weight> q4;
    std::vector<test::DenseWeight> dense;
    std::vector<seatrt_linear_weight> gate, up, down;
    std::vector<std::vector<double>> gw, uw, dw;
    for (int64_t e = 0; e < experts; ++e) {
      if (nvfp4) {
        for (auto [o, i] : {std::pair{inter, hidden}, {inter, hidden}, {hidden, inter}}) {
          q4.push_back(test::random_nvfp4(rng, o, i, 448.0f * 6.0f / 2.0f));
        }
      } else {
        for (auto [o, i] : {std::pair{inter, hidden}, {inter, hidden}, {hidden, inter}}) {
          dense.push_back(test::random_dense(rng, SEATRT_DTYPE_BF16, o, i, 0.3));
        }
      }
    }
    for (int64_t e = 0; e < experts; ++e) {
      for (int part = 0; part < 3; ++part) {
        const size_t i = static_cast<size_t>(e * 3 + part);
        const seatrt_linear_weight w = nvfp4 ? q4[i].weight : dense[i].weight;
        const std::vector<double> d = nvfp4 ? q4[i].dense() : dense[i].data.values();
        (part == 0 ? gate : part == 1 ? up : down).push_back(w);
        (part == 0 ? gw : part == 1 ? uw : dw).push_back(d);
      }
    }
    Tensor x = test::random_tensor(rng, SEATRT_DTYPE_BF16, {tokens, hidden});
    // Token 2 routes to the same expert twice; expert 4 is never used.
    Tensor ids = test::int_tensor(SEATRT_DTYPE_I32, {tokens, k}, {0, 1, 2, 3, 0, 1, 2, 2, 0, 1, 3, 0, 3, 2, 1, 0, 3, 2});
    Tensor weights = test::random_tensor(rng, SEATRT_DTYPE_F32, {tokens, k}, 0, 1);
    Tensor out(SEATRT_DTYPE_F32, {tokens, hidden});
    seatrt_moe_args args{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, static_cast<int32_t>(experts), x.get(), ids.get(),
                         weights.get(), gate.data(), up.data(), down.data(), out.get()};
    cpu::moe(ctx(), args);
    std::vector<double> expected(static_cast<size_t>(tokens * hidden), 0.0);
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        const size_t e = static_cast<size_t>(ids.as<int32_t>()[t * k + j]);
        std::vector<double> a(static_cast<size_t>(inter));
        for (int64_t i = 0; i < inter; ++i) {
          double g = 0, u = 0;
          for (int64_t h = 0; h < hidden; ++h) {
            g += x.at(t * hidden + h) * gw[e][static_cast<size_t>(i * hidden + h)];
            u += x.at(t * hidden + h) * uw[e][static_cast<size_t>(i * hidden + h)];
          }
          a[static_cast<size_t>(i)] = 0.5 * g * (1 + std::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g))) * u;
        }
        for (int64_t h = 0; h < hidden; ++h) {
          double y = 0;
          for (int64_t i = 0; i < inter; ++i) y += a[static_cast<size_t>(i)] * dw[e][static_cast<size_t>(h * inter + i)];
          expected[static_cast<size_t>(t * hidden + h)] += weights.at(t * k + j) * y;
        }
      }
    }
    CHECK(test::max_rel_err(out.values(), expected) < 1e-5);
    // An expert id outside the arrays is refused before anything is written.
    ids.as<int32_t>()[5] = static_cast<int32_t>(experts);
    std::string msg;
    CHECK(test::error_of([&] { cpu::moe(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
    CHECK_THAT(msg, Catch::Contains("ids[1, 2] = 5"));
    ids.as<int32_t>()[5] = 1;
    down[1].in_features = inter + 16;
    CHECK(test::error_of([&] { cpu::moe(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  }
}
