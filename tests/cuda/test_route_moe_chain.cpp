// The experts' branch of a MoE layer (router nodes, then moe) planned on
// the CUDA provider, as it runs at decode: the fused route kernel writes the
// router's ids right before the MoE's two launches.  With SEATRT_MOE_DECODE=e the down launch reads those
// ids (and its first weight steps) before its PDL wait, relying on gate/up
// having waited for route before it released the down; a stale read (the
// previous step's ids, or an unwritten poison) would send rows to the wrong
// experts.  Every step gets fresh x, so consecutive steps route differently
// (checked), and the early path must give the default path's bits (the same
// arithmetic and fixed-order sums), from a plan made for one launch and from
// one made for many.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "fixtures_gpu.hpp"
#include "fusions.hpp"
#include "harness.hpp"
#include "scoped_env.hpp"

using namespace seatrt_test;

namespace {

constexpr int32_t kExperts = 32;
constexpr int64_t kHidden = 2816, kInter = 704, kTopK = 8;

Pair positive_gains(int64_t n) {
  std::vector<float> g(static_cast<size_t>(n));
  for (auto& v : g) v = 0.5f + std::uniform_real_distribution<float>(0.0f, 1.0f)(rng());
  return both(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(g.data()), reinterpret_cast<uint8_t*>(g.data() + n)),
              SEATRT_DTYPE_F32, {n});
}

// One experts' branch (the router's nodes, then moe) on the CUDA provider.
struct Branch {
  int64_t tokens;
  Nvfp4Experts experts = random_nvfp4_experts(kExperts, kHidden, kInter);
  seatrt_linear_weight router;
  Pair x, router_gain, expert_gain, scale, ids, weights, expert_in, out, r, logits;

  explicit Branch(int64_t t)
      : tokens(t),
        router(dense_bf16_weight(cuda(), random_values(kExperts * kHidden, SEATRT_DTYPE_BF16, 0.05f), kExperts,
                                 kHidden)),
        x(both_empty(SEATRT_DTYPE_F32, {t, kHidden})),
        router_gain(positive_gains(kHidden)),
        expert_gain(positive_gains(kHidden)),
        scale(positive_gains(kExperts)),
        ids(both_empty(SEATRT_DTYPE_I32, {t, kTopK})),
        weights(both_empty(SEATRT_DTYPE_F32, {t, kTopK})),
        expert_in(both_empty(SEATRT_DTYPE_F32, {t, kHidden})),
        out(both_empty(SEATRT_DTYPE_F32, {t, kHidden})),
        r(both_empty(SEATRT_DTYPE_F32, {t, kHidden})),
        logits(both_empty(SEATRT_DTYPE_F32, {t, kExperts})) {}

  void set_x(const std::vector<uint8_t>& raw) {
    ok(cuda().api().copy(cuda().ctx(), cuda().stream(), x.cuda.data, SEATRT_DEVICE_CUDA, raw.data(), SEATRT_DEVICE_CPU,
                         raw.size()),
       "copy x");
  }
  // Poison ids and the output, so that a step that reads or writes nothing
  // of its own shows.
  void poison() {
    for (seatrt_tensor* t : {&ids.cuda, &out.cuda}) {
      const std::vector<uint8_t> nan(cuda().download(*t).size(), 0xFF);
      ok(cuda().api().copy(cuda().ctx(), cuda().stream(), t->data, SEATRT_DEVICE_CUDA, nan.data(), SEATRT_DEVICE_CPU,
                           nan.size()),
         "poison");
    }
  }
  // The branch's nodes; plans keep pointers into the builder.
  void build(fusions::GraphBuilder& g) {
    fusions::route(g, fusions::Route{&x.cuda, &router_gain.cuda, &expert_gain.cuda, 1e-6f, &r.cuda, &expert_in.cuda,
                                     &router, &logits.cuda, static_cast<int32_t>(kTopK), &scale.cuda, &ids.cuda,
                                     &weights.cuda});
    g.add<SEATRT_OP_MOE>(seatrt_moe_args{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, kExperts, &expert_in.cuda,
                                         &ids.cuda, &weights.cuda, experts.gc.data(), experts.uc.data(),
                                         experts.dc.data(), &out.cuda},
                         "0/experts/moe");
  }
};

bool all_finite(const std::vector<float>& v) {
  for (float f : v)
    if (!std::isfinite(f)) return false;
  return true;
}

}  // namespace

TEST_CASE("route -> moe: the MoE down's early reads (SEATRT_MOE_DECODE=e) give the default path's bits",
          "[moe][route]") {
  constexpr int kSteps = 6;
  for (int64_t T : {1, 4, 16, 32}) {
    INFO("tokens " << T);
    Branch b(T);
    fusions::GraphBuilder g;
    b.build(g);
    std::vector<std::vector<uint8_t>> xs, want, want_ids;
    for (int s = 0; s < kSteps; ++s) xs.push_back(random_values(T * kHidden, SEATRT_DTYPE_F32, 3.0f));

    // The default path, step by step.
    {
      Plan plan(cuda(), g, "experts' branch", 1);
      INFO(plan.describe());
      CHECK_THAT(plan.describe(), Catch::Matchers::Contains("route"));
      for (int s = 0; s < kSteps; ++s) {
        b.set_x(xs[static_cast<size_t>(s)]);
        b.poison();
        plan.launch();
        want.push_back(cuda().download(b.out.cuda));
        want_ids.push_back(cuda().download(b.ids.cuda));
        REQUIRE(all_finite(cuda().download_f32(b.out.cuda)));
      }
    }
    int changed = 0;
    for (int s = 1; s < kSteps; ++s) changed += want_ids[static_cast<size_t>(s)] != want_ids[static_cast<size_t>(s - 1)];
    CHECK(changed == kSteps - 1);  // else a stale read could go unseen

    ScopedEnv env("SEATRT_MOE_DECODE", "e");
    // A plan for one launch, then one for many: the steps back to back, no
    // host wait between them but the copy.
    for (int32_t launches : {1, 0}) {
      Plan plan(cuda(), g, "experts' branch", launches);
      for (int s = 0; s < kSteps; ++s) {
        INFO("launches " << launches << " step " << s);
        b.set_x(xs[static_cast<size_t>(s)]);
        if (launches == 0) b.poison();
        plan.launch();
        CHECK(cuda().download(b.out.cuda) == want[static_cast<size_t>(s)]);
      }
    }
  }
}
