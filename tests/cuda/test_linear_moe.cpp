// linear (NVFP4 in both layouts, dense BF16) and moe: CUDA vs CPU provider.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "fixtures_gpu.hpp"
#include "harness.hpp"

using namespace seatrt_test;

namespace {

// Outputs start as all-ones bytes (NaN in F32/BF16/F16): an element the
// kernel does not write fails the comparison.
Pair poisoned(int32_t dtype, int64_t rows, int64_t cols) {
  const size_t bytes = static_cast<size_t>(rows * cols) * (dtype == SEATRT_DTYPE_F32 ? 4 : 2);
  return both(std::vector<uint8_t>(bytes, 0xFF), dtype, {rows, cols});
}

double run_linear(const seatrt_linear_weight& wc, const seatrt_linear_weight& wp, int64_t m, int32_t xdt, int32_t odt) {
  Pair x = both_random(xdt, {m, wc.in_features}), out = poisoned(odt, m, wc.out_features);
  seatrt_linear_args lc{sizeof(seatrt_linear_args), &x.cuda, &wc, &out.cuda, nullptr};
  seatrt_linear_args lp{sizeof(seatrt_linear_args), &x.cpu, &wp, &out.cpu, nullptr};
  ok(cuda().run<SEATRT_OP_LINEAR>(lc), "cuda linear");
  ok(cpu().run<SEATRT_OP_LINEAR>(lp), "cpu linear");
  return rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu));
}

}  // namespace

TEST_CASE("NVFP4 linear agrees with the CPU provider (CT layout), decode and prefill row counts") {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{2816, 704}, {704, 2816}, {96, 48}, {40, 4096}}) {
    const HostNvfp4 h = random_nvfp4(n, k);
    const seatrt_linear_weight wc = nvfp4_weight(cuda(), h, false), wp = nvfp4_weight(cpu(), h, false);
    for (int64_t m : {1, 3, 8, 19, 130}) {
      for (int32_t xdt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
        INFO("N " << n << " K " << k << " M " << m << " x dtype " << xdt);
        CHECK(run_linear(wc, wp, m, xdt, SEATRT_DTYPE_F32) <= 1e-4);
      }
    }
  }
}

// The decode kernel (tensor cores, K a multiple of 32) at the model's K
// values, every n-tile count (M = 1, 2, 3, 8: one; 16: two; 32: four), a
// partial 16-row tile (N = 40, 264), both activation dtypes (F32 is fed as
// two BF16 terms, within 2^-16 of x: far inside the bound, while BF16-rounded
// x would be ~1e-3 off) and both scale layouts.
TEST_CASE("NVFP4 linear, decode kernel: model K values, M = 1..32, N tails, both layouts") {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{40, 704}, {264, 2112}, {40, 2816}, {264, 4096}, {40, 8192}}) {
    const HostNvfp4 h = random_nvfp4(n, k);
    const seatrt_linear_weight wp = nvfp4_weight(cpu(), h, false);
    for (bool tiled : {false, true}) {
      const seatrt_linear_weight wc = nvfp4_weight(cuda(), h, tiled);
      for (int64_t m : {1, 2, 3, 8, 16, 32}) {
        for (int32_t xdt : {SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32}) {
          INFO("N " << n << " K " << k << " M " << m << " x dtype " << xdt << " tiled " << tiled);
          CHECK(run_linear(wc, wp, m, xdt, SEATRT_DTYPE_F32) <= 1e-4);
        }
      }
    }
  }
}

// The decode kernel's other load variants (SEATRT_LINEAR_DECODE): byte-wise
// scale loads ("plain"; the default loads them raw) and per-step x loads
// ("nostage"; by default F32 x of up to 8 rows is staged once per block in
// shared memory) and the per-step F32 split ("nosplit"; by default F32 x the
// kernel does not stage is split once into BF16 planes), alone and
// together, and F32 x in three exact BF16 planes instead of two ("p3";
// staged and split once), and at most 1 or 2 n-tiles per pass ("nt1",
// "nt2"), at the model's K values, every n-tile count, both
// layouts and x dtypes.  (The default path is the test above.)
TEST_CASE("NVFP4 linear, decode kernel load variants (SEATRT_LINEAR_DECODE=plain, nostage, nosplit, p3)") {
  for (const char* variant : {"plain", "nostage", "nosplit", "plain,nostage,nosplit", "p3", "p3,plain", "p3,nostage", "nt1", "nt2", "nt2,p3"}) {
    setenv("SEATRT_LINEAR_DECODE", variant, 1);
    for (auto [n, k] : {std::pair<int64_t, int64_t>{264, 704}, {40, 2816}, {264, 4096}, {40, 8192}}) {
      const HostNvfp4 h = random_nvfp4(n, k);
      const seatrt_linear_weight wp = nvfp4_weight(cpu(), h, false);
      for (bool tiled : {false, true}) {
        const seatrt_linear_weight wc = nvfp4_weight(cuda(), h, tiled);
        for (int64_t m : {1, 3, 16, 32}) {
          for (int32_t xdt : {SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32}) {
            INFO("variant " << variant << " N " << n << " K " << k << " M " << m << " x dtype " << xdt << " tiled " << tiled);
            CHECK(run_linear(wc, wp, m, xdt, SEATRT_DTYPE_F32) <= 1e-4);
          }
        }
      }
    }
  }
  unsetenv("SEATRT_LINEAR_DECODE");
}

TEST_CASE("SM90_TILED weights give the CT result exactly (up to fp32 rounding)") {
  const HostNvfp4 h = random_nvfp4(256, 2816);
  const seatrt_linear_weight wc = nvfp4_weight(cuda(), h, true), wp = nvfp4_weight(cpu(), h, false);
  for (int64_t m : {1, 8}) CHECK(run_linear(wc, wp, m, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32) <= 1e-4);
}

TEST_CASE("dense BF16 linear agrees") {
  // N 128 and 300: the one-block-per-feature kernel (the MoE router's shape,
  // up to 64 rows); N 1300: the tensor-core decode kernel (the LM head's
  // path) from 2 rows, the GEMV at 1 row.
  for (int64_t n : {128, 300, 1300}) {
    for (int64_t k : {2816, 40}) {
      const auto raw = random_values(n * k, SEATRT_DTYPE_BF16, 0.05f);
      const seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, n, k), wp = dense_bf16_weight(cpu(), raw, n, k);
      for (int64_t m : {1, 11}) CHECK(run_linear(wc, wp, m, SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16) <= 1e-2);
      // F32 x in two BF16 planes (the default) within 2^-16 of it; in three
      // ("p3") fp32-exact up to summation order.
      for (const char* variant : {"", "p3"}) {
        setenv("SEATRT_LINEAR_DECODE", variant, 1);
        for (int64_t m : {1, 2, 3, 8, 9, 16, 32, 64}) {
          for (int32_t xdt : {SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32}) {
            INFO("variant '" << variant << "' N " << n << " K " << k << " M " << m << " x dtype " << xdt);
            CHECK(run_linear(wc, wp, m, xdt, SEATRT_DTYPE_F32) <= 1e-4);
          }
        }
      }
      unsetenv("SEATRT_LINEAR_DECODE");
      CHECK(run_linear(wc, wp, 70, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32) <= 1e-4);  // tensor-core path
    }
  }
}

TEST_CASE("linear refuses a wrong shape with INVALID_ARG") {
  const HostNvfp4 h = random_nvfp4(32, 64);
  const seatrt_linear_weight wc = nvfp4_weight(cuda(), h, false);
  seatrt_tensor x = cuda().empty(SEATRT_DTYPE_F32, {2, 48}), out = cuda().empty(SEATRT_DTYPE_F32, {2, 32});
  seatrt_linear_args lc{sizeof(seatrt_linear_args), &x, &wc, &out, nullptr};
  CHECK(code_of(cuda().run<SEATRT_OP_LINEAR>(lc)) == SEATRT_ERR_INVALID_ARG);
}

namespace {

// T tokens routed to k distinct experts of E each: ids (T x k, I32) and
// random weights in [0.05, 0.5) (T x k, F32) on both providers.
struct Routes {
  Pair ids, weights;
};
Routes random_routes(int32_t E, int64_t T, int64_t k) {
  std::vector<int32_t> ids;
  std::vector<float> wts;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<int32_t> perm(static_cast<size_t>(E));
    for (int e = 0; e < E; ++e) perm[static_cast<size_t>(e)] = e;
    std::shuffle(perm.begin(), perm.end(), rng());
    for (int64_t j = 0; j < k; ++j) {
      ids.push_back(perm[static_cast<size_t>(j)]);
      wts.push_back(std::uniform_real_distribution<float>(0.05f, 0.5f)(rng()));
    }
  }
  Routes r;
  r.ids = both(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(ids.data()), reinterpret_cast<uint8_t*>(ids.data() + ids.size())),
               SEATRT_DTYPE_I32, {T, k});
  r.weights = both(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(wts.data()), reinterpret_cast<uint8_t*>(wts.data() + wts.size())),
                   SEATRT_DTYPE_F32, {T, k});
  return r;
}

// One moe call on both providers: T tokens, k distinct experts each.
double run_moe(int32_t E, int64_t H, int64_t I, int64_t T, int64_t k, int32_t xdt) {
  auto [gc, uc, dc, gp, up, dp] = random_nvfp4_experts(E, H, I);
  auto [id, w] = random_routes(E, T, k);
  Pair x = both_random(xdt, {T, H}, 0.01f), out = poisoned(SEATRT_DTYPE_F32, T, H);
  seatrt_moe_args mc{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, E, &x.cuda, &id.cuda, &w.cuda, gc.data(), uc.data(), dc.data(), &out.cuda};
  seatrt_moe_args mp{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, E, &x.cpu, &id.cpu, &w.cpu, gp.data(), up.data(), dp.data(), &out.cpu};
  ok(cuda().run<SEATRT_OP_MOE>(mc), "cuda moe");
  ok(cpu().run<SEATRT_OP_MOE>(mp), "cpu moe");
  return rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu));
}

}  // namespace

// The model's expert shapes (H 2816, I 704: K = 2816 for gate/up, 704 for
// down) at decode token counts: 1, 2 and 3 tokens (one n-tile), 16 and 32
// (experts holding up to 32 tokens: two and four n-tiles), both x dtypes.
TEST_CASE("moe at the model's expert shapes, decode token counts") {
  for (int64_t T : {1, 2, 3, 16, 32}) {
    for (int32_t xdt : {SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32}) {
      INFO("tokens " << T << " x dtype " << xdt);
      CHECK(run_moe(6, 2816, 704, T, 4, xdt) <= 1e-4);
    }
  }
}

TEST_CASE("moe agrees with the CPU provider (NVFP4 experts, grouped tokens)") {
  const int32_t E = 16, H = 256, I = 128;
  auto [gc, uc, dc, gp, up, dp] = random_nvfp4_experts(E, H, I);
  for (int64_t T : {1, 5, 40}) {
    const int64_t k = 4;
    auto [id, w] = random_routes(E, T, k);
    Pair x = both_random(SEATRT_DTYPE_BF16, {T, H}, 0.01f), out = both_empty(SEATRT_DTYPE_F32, {T, H});
    seatrt_moe_args mc{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, E, &x.cuda, &id.cuda, &w.cuda, gc.data(), uc.data(), dc.data(), &out.cuda};
    seatrt_moe_args mp{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, E, &x.cpu, &id.cpu, &w.cpu, gp.data(), up.data(), dp.data(), &out.cpu};
    ok(cuda().run<SEATRT_OP_MOE>(mc), "cuda moe");
    ok(cpu().run<SEATRT_OP_MOE>(mp), "cpu moe");
    INFO("tokens " << T);
    CHECK(rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu)) <= 1e-4);
  }
}

TEST_CASE("dependent linears back to back (overlapped launches) agree, eager and launched from a plan") {
  const HostNvfp4 h1 = random_nvfp4(1024, 2816), h2 = random_nvfp4(2816, 1024), h3 = random_nvfp4(512, 2816);
  const seatrt_linear_weight c1 = nvfp4_weight(cuda(), h1, false), c2 = nvfp4_weight(cuda(), h2, false),
                             c3 = nvfp4_weight(cuda(), h3, false);
  const seatrt_linear_weight p1 = nvfp4_weight(cpu(), h1, false), p2 = nvfp4_weight(cpu(), h2, false),
                             p3 = nvfp4_weight(cpu(), h3, false);
  Pair x = both_random(SEATRT_DTYPE_F32, {2, 2816}, 0.01f);
  Pair y1 = both_empty(SEATRT_DTYPE_F32, {2, 1024}), y2 = both_empty(SEATRT_DTYPE_F32, {2, 2816}),
       y3 = both_empty(SEATRT_DTYPE_F32, {2, 512});
  auto chain = [](seatrt::sdk::GraphBuilder& g, const seatrt_tensor& in, const seatrt_linear_weight& a, seatrt_tensor& t1,
                  const seatrt_linear_weight& b, seatrt_tensor& t2, const seatrt_linear_weight& c, seatrt_tensor& t3) {
    g.add<SEATRT_OP_LINEAR>(seatrt_linear_args{sizeof(seatrt_linear_args), &in, &a, &t1, nullptr}, "linear 1");
    g.add<SEATRT_OP_LINEAR>(seatrt_linear_args{sizeof(seatrt_linear_args), &t1, &b, &t2, nullptr}, "linear 2");
    g.add<SEATRT_OP_LINEAR>(seatrt_linear_args{sizeof(seatrt_linear_args), &t2, &c, &t3, nullptr}, "linear 3");
  };
  seatrt::sdk::GraphBuilder gc, gp;
  chain(gc, x.cuda, c1, y1.cuda, c2, y2.cuda, c3, y3.cuda);
  chain(gp, x.cpu, p1, y1.cpu, p2, y2.cpu, p3, y3.cpu);
  cuda().run_nodes(gc);
  cpu().run_nodes(gp);
  CHECK(rel_error(cuda().download_f32(y3.cuda), cpu().download_f32(y3.cpu)) <= 1e-4);

  // Plan the chain for many launches, then launch it on new input.
  Plan plan(cuda(), gc, "three linears", 0);
  for (int launch = 0; launch < 2; ++launch) {
    const std::vector<uint8_t> fresh = random_values(2 * 2816, SEATRT_DTYPE_F32, 0.01f);
    ok(cuda().api().copy(cuda().ctx(), cuda().stream(), x.cuda.data, SEATRT_DEVICE_CUDA, fresh.data(), SEATRT_DEVICE_CPU,
                         fresh.size()),
       "copy");
    ok(cpu().api().copy(cpu().ctx(), cpu().stream(), x.cpu.data, SEATRT_DEVICE_CPU, fresh.data(), SEATRT_DEVICE_CPU,
                        fresh.size()),
       "copy");
    plan.launch();
    cpu().run_nodes(gp);
    INFO("launch " << launch);
    CHECK(rel_error(cuda().download_f32(y3.cuda), cpu().download_f32(y3.cpu)) <= 1e-4);
  }
}

namespace {

// Sets SEATRT_MOE_DECODE (the CUDA provider's MoE path switch, read at each
// moe call) for one scope.
struct MoeVariant {
  explicit MoeVariant(const std::string& v) { setenv("SEATRT_MOE_DECODE", v.c_str(), 1); }
  ~MoeVariant() { unsetenv("SEATRT_MOE_DECODE"); }
  MoeVariant(const MoeVariant&) = delete;
  MoeVariant& operator=(const MoeVariant&) = delete;
};

// Every MoE decode variant: the old four-launch path, the automatic choice
// (cp.async weight stages) with each gate/up split and 8-warp down blocks,
// the register ring with byte-wise scale loads (r) and with one scale load
// per row (w), each with some splits; F32 x split into two BF16 planes (the
// default, within 2^-16: a dropped lo plane would be off by ~2^-9) or three
// (p3, exact); at most 2 or 4 tokens staged per gate/up pass (t2, t4); the
// down's reads before its PDL wait (e); the down's weights asked of L2 during
// gate/up (l; at <= 2 tokens, so the 1-token case takes it).
const char* const kMoeVariants[] = {"old", "", "s1", "s2", "s4", "s8", "d8", "s1,d8", "a+d4",
                                    "r", "r,s1", "r,s2", "r,s8", "r+d8", "w", "w,s4,d4",
                                    "p3", "p3,s1", "p3,r", "t2", "t4,s1", "e", "e,d8", "e,r", "e,w,s4",
                                    "l", "l,e", "l,r"};

}  // namespace

// The two-launch decode path (k_moe_decode.cu) at the model's expert shapes
// and top-8: one expert pass (1 token), inactive expert slots (3 tokens: 24
// slots for 16 experts), several token passes per expert (16 and 32 tokens:
// ~8 and ~16 tokens per expert, staged 8 (BF16) or 4 (F32) at a time), both
// x dtypes, every variant against one CPU reference; each variant run twice
// must give the same bits (fixed-order sums, no atomics on values).
// (At 16 and 32 tokens this once failed intermittently: a race on the
// shared expert mask, bits set by one warp before another cleared it.)
TEST_CASE("moe decode path: every variant agrees with the CPU provider and is deterministic", "[moe]") {
  const int32_t E = 16;
  const int64_t H = 2816, I = 704, k = 8;
  auto [gc, uc, dc, gp, up, dp] = random_nvfp4_experts(E, H, I);
  for (int64_t T : {1, 3, 16, 32}) {
    for (int32_t xdt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
      auto [id, w] = random_routes(E, T, k);
      Pair x = both_random(xdt, {T, H}, 0.01f), out = poisoned(SEATRT_DTYPE_F32, T, H);
      seatrt_moe_args mp{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, E, &x.cpu, &id.cpu, &w.cpu, gp.data(), up.data(), dp.data(), &out.cpu};
      ok(cpu().run<SEATRT_OP_MOE>(mp), "cpu moe");
      const std::vector<float> want = cpu().download_f32(out.cpu);
      for (const char* v : kMoeVariants) {
        INFO("tokens " << T << " x dtype " << xdt << " variant '" << v << "'");
        MoeVariant variant(v);
        seatrt_moe_args mc{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, E, &x.cuda, &id.cuda, &w.cuda, gc.data(), uc.data(), dc.data(), &out.cuda};
        ok(cuda().run<SEATRT_OP_MOE>(mc), "cuda moe");
        const std::vector<uint8_t> first = cuda().download(out.cuda);
        CHECK(rel_error(cuda().download_f32(out.cuda), want) <= 1e-4);
        const std::vector<uint8_t> poison(first.size(), 0xFF);
        ok(cuda().api().copy(cuda().ctx(), cuda().stream(), out.cuda.data, SEATRT_DEVICE_CUDA, poison.data(), SEATRT_DEVICE_CPU, poison.size()), "poison");
        ok(cuda().run<SEATRT_OP_MOE>(mc), "cuda moe again");
        CHECK(cuda().download(out.cuda) == first);
      }
    }
  }
}

namespace {

// One moe node planned for many launches, launched on fresh inputs twice
// and on the same input a third time, each against the CPU provider.
void check_moe_plan_launches() {
  const int32_t E = 16;
  const int64_t H = 2816, I = 704, k = 8, T = 4;
  auto [gc, uc, dc, gp, up, dp] = random_nvfp4_experts(E, H, I);
  auto [id, w] = random_routes(E, T, k);
  Pair x = both_random(SEATRT_DTYPE_F32, {T, H}, 0.01f), out = poisoned(SEATRT_DTYPE_F32, T, H);
  seatrt_moe_args mc{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, E, &x.cuda, &id.cuda, &w.cuda, gc.data(), uc.data(), dc.data(), &out.cuda};
  seatrt_moe_args mp{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, E, &x.cpu, &id.cpu, &w.cpu, gp.data(), up.data(), dp.data(), &out.cpu};
  const seatrt_kernel_api& a = cuda().api();
  ok(cuda().run<SEATRT_OP_MOE>(mc), "cuda moe (uploads tables, sizes scratch)");
  seatrt::sdk::GraphBuilder graph;
  graph.add<SEATRT_OP_MOE>(mc, "0/experts/moe");
  Plan plan(cuda(), graph, "moe", 0);
  std::vector<uint8_t> previous;
  for (int launch = 0; launch < 3; ++launch) {
    INFO("launch " << launch);
    if (launch < 2) {  // fresh x for the first two launches, the same x for the third
      const std::vector<uint8_t> fresh = random_values(T * H, SEATRT_DTYPE_F32, 0.01f);
      ok(a.copy(cuda().ctx(), cuda().stream(), x.cuda.data, SEATRT_DEVICE_CUDA, fresh.data(), SEATRT_DEVICE_CPU, fresh.size()), "copy");
      ok(cpu().api().copy(cpu().ctx(), cpu().stream(), x.cpu.data, SEATRT_DEVICE_CPU, fresh.data(), SEATRT_DEVICE_CPU, fresh.size()), "copy");
    }
    plan.launch();
    ok(cpu().run<SEATRT_OP_MOE>(mp), "cpu moe");
    CHECK(rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu)) <= 1e-4);
    const std::vector<uint8_t> got = cuda().download(out.cuda);
    if (launch == 2) CHECK(got == previous);
    previous = got;
  }
}

}  // namespace

// The decode path launched from a plan: the per-chunk arrival counters must
// be back at zero after each launch (a stale count would skip or repeat the
// sum), and launches on new inputs must match the CPU provider.  The default
// path (cp.async stages) and the register ring.
TEST_CASE("moe decode path launched from a plan agrees, launch after launch") {
  for (const char* v : {"", "r"}) {
    INFO("variant '" << v << "'");
    MoeVariant variant(v);
    check_moe_plan_launches();
  }
}
