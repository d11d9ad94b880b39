// route then moe on one CUDA stream, as a MoE layer's experts' branch runs
// at decode: the router's ids are written by the kernel right before the
// MoE's two launches.  With SEATRT_MOE_DECODE=e the down launch reads those
// ids (and its first weight steps) before its PDL wait, relying on gate/up
// having waited for route before it released the down; a stale read (the
// previous step's ids, or an unwritten poison) would send rows to the wrong
// experts.  Every step gets fresh x, so consecutive steps route differently
// (checked), and the early path must give the default path's bits (the same
// arithmetic and fixed-order sums), launched eagerly and replayed from a
// captured graph.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "fixtures_gpu.hpp"
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

// One experts' branch (route, then moe) on the CUDA provider's stream.
struct Branch {
  int64_t tokens;
  Nvfp4Experts experts = random_nvfp4_experts(kExperts, kHidden, kInter);
  seatrt_linear_weight router;
  Pair x, router_gain, expert_gain, scale, ids, weights, expert_in, out;

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
        out(both_empty(SEATRT_DTYPE_F32, {t, kHidden})) {}

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
  void launch() {
    seatrt_route_args r{};
    r.struct_size = sizeof r;
    r.eps = 1e-6f;
    r.x = &x.cuda;
    r.router_norm_weight = &router_gain.cuda;
    r.router = &router;
    r.top_k = static_cast<int32_t>(kTopK);
    r.renormalize = 1;
    r.per_expert_scale = &scale.cuda;
    r.expert_norm_weight = &expert_gain.cuda;
    r.expert_in = &expert_in.cuda;
    r.ids = &ids.cuda;
    r.weights = &weights.cuda;
    ok(cuda().api().route(cuda().ctx(), cuda().stream(), &r), "route");
    seatrt_moe_args m{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, kExperts, &expert_in.cuda, &ids.cuda,
                      &weights.cuda, experts.gc.data(), experts.uc.data(), experts.dc.data(), &out.cuda};
    ok(cuda().api().moe(cuda().ctx(), cuda().stream(), &m), "moe");
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
  REQUIRE(cuda().api().route != nullptr);
  constexpr int kSteps = 6;
  for (int64_t T : {1, 4, 16, 32}) {
    INFO("tokens " << T);
    Branch b(T);
    std::vector<std::vector<uint8_t>> xs, want, want_ids;
    for (int s = 0; s < kSteps; ++s) xs.push_back(random_values(T * kHidden, SEATRT_DTYPE_F32, 3.0f));

    // The default path, step by step.
    for (int s = 0; s < kSteps; ++s) {
      b.set_x(xs[static_cast<size_t>(s)]);
      b.poison();
      b.launch();
      want.push_back(cuda().download(b.out.cuda));
      want_ids.push_back(cuda().download(b.ids.cuda));
      REQUIRE(all_finite(cuda().download_f32(b.out.cuda)));
    }
    int changed = 0;
    for (int s = 1; s < kSteps; ++s) changed += want_ids[static_cast<size_t>(s)] != want_ids[static_cast<size_t>(s - 1)];
    CHECK(changed == kSteps - 1);  // else a stale read could go unseen

    ScopedEnv env("SEATRT_MOE_DECODE", "e");
    // Eager: the steps back to back, no host wait between them but the copy.
    for (int s = 0; s < kSteps; ++s) {
      INFO("eager step " << s);
      b.set_x(xs[static_cast<size_t>(s)]);
      b.launch();
      CHECK(cuda().download(b.out.cuda) == want[static_cast<size_t>(s)]);
    }
    // Captured once, replayed per step.
    const seatrt_kernel_api& a = cuda().api();
    ok(a.graph_begin(cuda().ctx(), cuda().stream()), "graph_begin");
    b.launch();
    seatrt_graph* g = nullptr;
    ok(a.graph_end(cuda().ctx(), cuda().stream(), &g), "graph_end");
    for (int s = 0; s < kSteps; ++s) {
      INFO("graph step " << s);
      b.set_x(xs[static_cast<size_t>(s)]);
      b.poison();
      ok(a.graph_launch(cuda().ctx(), cuda().stream(), g), "graph_launch");
      CHECK(cuda().download(b.out.cuda) == want[static_cast<size_t>(s)]);
    }
    a.graph_destroy(cuda().ctx(), g);
  }
}
