// Prefill-shaped paths of the CUDA provider against the CPU provider: the
// tensor-core linear (BF16 activations, M > 64) and the grouped tensor-core
// MoE (T >= 64 BF16 tokens), at M/T in {65, 300, 2048}, ragged N and K, and
// uneven expert loads (experts with no token, one with most).  The [gemm]
// cases run on whichever GEMM core SEATRT_PREFILL_GEMM selects (the wgmma
// core of gemm_wgmma.cuh by default for the linear and both MoE GEMMs where
// K % 64 == 0, the wmma core of gemm_tc.cuh with "tc" and for the other
// shapes, the mma.sync core of gemm_mma.cuh with "mma*"); the device script
// runs them under each.
#include <catch2/catch.hpp>

#include <algorithm>

#include "fixtures_gpu.hpp"
#include "fusions.hpp"
#include "harness.hpp"

using namespace seatrt_test;

namespace {

double linear_error(const seatrt_linear_weight& wc, const seatrt_linear_weight& wp, int64_t m, int32_t out_dtype) {
  Pair x = both_random(SEATRT_DTYPE_BF16, {m, wc.in_features}), out = both_empty(out_dtype, {m, wc.out_features});
  seatrt_linear_args lc{sizeof(seatrt_linear_args), &x.cuda, &wc, &out.cuda, nullptr};
  seatrt_linear_args lp{sizeof(seatrt_linear_args), &x.cpu, &wp, &out.cpu, nullptr};
  ok(cuda().run<SEATRT_OP_LINEAR>(lc), "cuda linear");
  ok(cpu().run<SEATRT_OP_LINEAR>(lp), "cpu linear");
  return rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu));
}

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  const auto* b = reinterpret_cast<const uint8_t*>(v.data());
  return std::vector<uint8_t>(b, b + v.size() * sizeof(T));
}

// Experts of one MoE layer uploaded to both providers.
struct Experts : Nvfp4Experts {
  int32_t E;
  Experts(int32_t e, int64_t hidden, int64_t inter) : Nvfp4Experts(random_nvfp4_experts(e, hidden, inter)), E(e) {}
};

// Router ids for T tokens: distinct per token; with `skewed`, slot 0 is
// expert 3 for ~90% of the tokens and only the lower half of the experts is
// ever used (the upper half gets no token at all).
std::vector<int32_t> route(int64_t T, int32_t E, int64_t k, bool skewed) {
  std::vector<int32_t> ids;
  const int32_t pool = skewed ? E / 2 : E;
  std::bernoulli_distribution hot(0.9);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<int32_t> perm(static_cast<size_t>(pool));
    for (int32_t e = 0; e < pool; ++e) perm[static_cast<size_t>(e)] = e;
    std::shuffle(perm.begin(), perm.end(), rng());
    if (skewed && hot(rng())) std::iter_swap(perm.begin(), std::find(perm.begin(), perm.end(), 3));
    for (int64_t j = 0; j < k; ++j) ids.push_back(perm[static_cast<size_t>(j)]);
  }
  return ids;
}

// Runs moe on both providers; returns the relative error of CUDA's output
// and CUDA's output itself.
std::pair<double, std::vector<float>> moe_error(const Experts& ex, int64_t T, int64_t H, int64_t k, bool skewed,
                                                int32_t out_dtype) {
  const std::vector<int32_t> ids = route(T, ex.E, k, skewed);
  std::vector<float> wts;
  for (size_t i = 0; i < ids.size(); ++i) wts.push_back(std::uniform_real_distribution<float>(0.05f, 0.5f)(rng()));
  Pair id = both(bytes_of(ids), SEATRT_DTYPE_I32, {T, k});
  Pair w = both(bytes_of(wts), SEATRT_DTYPE_F32, {T, k});
  Pair x = both_random(SEATRT_DTYPE_BF16, {T, H}, 0.5f), out = both_empty(out_dtype, {T, H});
  seatrt_moe_args mc{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, ex.E, &x.cuda, &id.cuda, &w.cuda,
                     ex.gc.data(), ex.uc.data(), ex.dc.data(), &out.cuda};
  seatrt_moe_args mp{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, ex.E, &x.cpu, &id.cpu, &w.cpu,
                     ex.gp.data(), ex.up.data(), ex.dp.data(), &out.cpu};
  ok(cuda().run<SEATRT_OP_MOE>(mc), "cuda moe");
  ok(cpu().run<SEATRT_OP_MOE>(mp), "cpu moe");
  std::vector<float> got = cuda().download_f32(out.cuda);
  const double err = rel_error(got, cpu().download_f32(out.cpu));
  // Run again on the same inputs: the result must be bit-identical.
  ok(cuda().run<SEATRT_OP_MOE>(mc), "cuda moe (again)");
  if (cuda().download_f32(out.cuda) != got) return {1e30, got};
  return {err, got};
}

}  // namespace

TEST_CASE("prefill: tensor-core NVFP4 linear agrees at M 65/300/2048, ragged N and K", "[prefill][gemm]") {
  // N 320: a partial 128-column tile; K 720: a partial 64-deep K step and
  // rows not 16-byte multiples (byte loads); K 48: less than one K step.
  for (auto [n, k] : {std::pair<int64_t, int64_t>{320, 1024}, {130, 720}, {96, 48}}) {
    const HostNvfp4 h = random_nvfp4(n, k);
    const seatrt_linear_weight wc = nvfp4_weight(cuda(), h, false), wp = nvfp4_weight(cpu(), h, false);
    for (int64_t m : {65, 300, 2048}) {
      INFO("N " << n << " K " << k << " M " << m);
      CHECK(linear_error(wc, wp, m, SEATRT_DTYPE_F32) <= 1e-4);
      CHECK(linear_error(wc, wp, m, SEATRT_DTYPE_BF16) <= 1e-2);
    }
  }
}

TEST_CASE("prefill: tensor-core linear: 1-3 K steps, odd and tiny N", "[prefill][gemm]") {
  // K 64/128/192: fewer K steps than the mma.sync core's 4 stages; N 131: odd, so
  // half the rows take the element-wise store; N 8: one tile, 120 of its
  // 128 weight rows padding; M 513: a 256-row tile with one valid row.
  for (auto [n, k] : {std::pair<int64_t, int64_t>{131, 64}, {200, 128}, {8, 192}, {264, 640}}) {
    const HostNvfp4 h = random_nvfp4(n, k);
    const seatrt_linear_weight wc = nvfp4_weight(cuda(), h, false), wp = nvfp4_weight(cpu(), h, false);
    for (int64_t m : {65, 513}) {
      INFO("N " << n << " K " << k << " M " << m);
      CHECK(linear_error(wc, wp, m, SEATRT_DTYPE_F32) <= 1e-4);
      CHECK(linear_error(wc, wp, m, SEATRT_DTYPE_BF16) <= 1e-2);
    }
  }
}

TEST_CASE("prefill: tensor-core linear reads SM90_TILED weights and the model's shapes", "[prefill][gemm]") {
  const HostNvfp4 h = random_nvfp4(2048, 2816);
  const seatrt_linear_weight wt = nvfp4_weight(cuda(), h, true), wp = nvfp4_weight(cpu(), h, false);
  CHECK(linear_error(wt, wp, 300, SEATRT_DTYPE_F32) <= 1e-4);
  const HostNvfp4 o = random_nvfp4(2816, 4096);
  const seatrt_linear_weight oc = nvfp4_weight(cuda(), o, false), op = nvfp4_weight(cpu(), o, false);
  CHECK(linear_error(oc, op, 130, SEATRT_DTYPE_BF16) <= 1e-2);
}

TEST_CASE("prefill: grouped tensor-core MoE agrees, uneven loads, deterministic", "[prefill][gemm]") {
  // I 176: a partial 64-column gate/up tile; H 512: 4 down tiles.
  const int64_t H = 512, I = 176, k = 4;
  const Experts ex(32, H, I);
  for (int64_t T : {65, 300, 2048}) {
    for (bool skewed : {false, true}) {
      INFO("tokens " << T << (skewed ? " skewed (16 experts idle, expert 3 has ~90%)" : " uniform"));
      const auto [err, got] = moe_error(ex, T, H, k, skewed, SEATRT_DTYPE_F32);
      CHECK(err <= 1e-2);
    }
  }
  const auto [err_bf16, got] = moe_error(ex, 300, H, k, true, SEATRT_DTYPE_BF16);
  CHECK(err_bf16 <= 1e-2);
}

TEST_CASE("prefill: grouped MoE with H and I multiples of 64", "[prefill][gemm]") {
  // I 192: gate/up and down both have K % 64 == 0, so with
  // SEATRT_PREFILL_GEMM=mma both run on the mma.sync core (the I 176 case
  // above keeps down on the wmma core); H 320: a partial 128-column down tile.
  const int64_t H = 320, I = 192, k = 4;
  const Experts ex(24, H, I);
  for (int64_t T : {65, 1000}) {
    for (bool skewed : {false, true}) {
      INFO("tokens " << T << (skewed ? " skewed" : " uniform"));
      const auto [err, got] = moe_error(ex, T, H, k, skewed, SEATRT_DTYPE_F32);
      CHECK(err <= 1e-2);
    }
  }
  const auto [err_bf16, got] = moe_error(ex, 300, H, k, false, SEATRT_DTYPE_BF16);
  CHECK(err_bf16 <= 1e-2);
}

TEST_CASE("prefill: grouped MoE at the model's expert shapes (H 2816, I 704, top-8)", "[prefill][gemm]") {
  const int64_t H = 2816, I = 704, k = 8;
  const Experts ex(16, H, I);
  const auto [err, got] = moe_error(ex, 80, H, k, false, SEATRT_DTYPE_F32);
  CHECK(err <= 1e-2);
}

TEST_CASE("prefill: grouped MoE at the model's shapes, skewed: idle experts, a split hot expert", "[prefill][gemm]") {
  // 32 experts, only 0-15 used; expert 3 in ~95% of the 144 tokens: a full
  // 128-row tile and one of a few rows; the others ~60 rows each (one
  // partial tile).  Gate/up: 6 column blocks of 128 outputs, the last half
  // empty (I 704); down: 11 blocks of 256 (H 2816), K 704 = 11 steps.
  const int64_t H = 2816, I = 704, k = 8;
  const Experts ex(32, H, I);
  const auto [err, got] = moe_error(ex, 144, H, k, true, SEATRT_DTYPE_F32);
  CHECK(err <= 1e-2);
  const auto [err_bf16, got_bf16] = moe_error(ex, 144, H, k, true, SEATRT_DTYPE_BF16);
  CHECK(err_bf16 <= 1e-2);
}

TEST_CASE("prefill: grouped MoE on 256-row tiles (experts averaging >= 64 rows)", "[prefill][gemm]") {
  // 8 experts, top-2, 1,024 tokens: 2,048 assignments, 256 per expert on
  // average, so the grouping lists tiles of up to 256 rows for
  // gemm_wgmma_wide.cuh (by default; SEATRT_PREFILL_MOE_TILE=128 or another
  // SEATRT_PREFILL_GEMM / _WGMMA core takes the 128-row path instead).
  // Uniform: most experts a full tile and a few rows over (warpgroups with
  // no rows skip their wgmma); skewed: expert 3 ~950 rows (three full tiles
  // and a partial one), 4-7 idle.  H 320: a partial 128-column down tile;
  // I 192: three 64-output gate/up blocks.
  const int64_t H = 320, I = 192, k = 2;
  const Experts ex(8, H, I);
  for (bool skewed : {false, true}) {
    INFO((skewed ? "skewed" : "uniform"));
    const auto [err, got] = moe_error(ex, 1024, H, k, skewed, SEATRT_DTYPE_F32);
    CHECK(err <= 1e-2);
  }
  const auto [err_bf16, got] = moe_error(ex, 1024, H, k, true, SEATRT_DTYPE_BF16);
  CHECK(err_bf16 <= 1e-2);
}

TEST_CASE("prefill: grouped MoE on 256-row tiles at the model's expert shapes", "[prefill][gemm]") {
  // 8 experts, top-8, 200 tokens: every expert has 200 rows, one tile whose
  // fourth warpgroup holds 8 rows; K 2816 (44 steps) for gate/up, 704 (11)
  // for down.
  const int64_t H = 2816, I = 704, k = 8;
  const Experts ex(8, H, I);
  const auto [err, got] = moe_error(ex, 200, H, k, false, SEATRT_DTYPE_F32);
  CHECK(err <= 1e-2);
}

TEST_CASE("prefill: dense BF16 linear at the router's shape and a ragged one, many rows", "[prefill][gemm]") {
  // N 128, K 2816: the MoE router at prompt rows (gemm_bf16w.cuh reads the
  // weight as is); N 200, K 192: a partial 128-row weight tile and three K
  // steps, fewer than the kernel's four stages; M 2048 / 300: whole and
  // partial 256-row tiles.
  for (auto [n, k] : {std::pair<int64_t, int64_t>{128, 2816}, {200, 192}}) {
    const std::vector<uint8_t> raw = random_values(n * k, SEATRT_DTYPE_BF16, 0.05f);
    const seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, n, k), wp = dense_bf16_weight(cpu(), raw, n, k);
    for (int64_t m : {300, 2048}) {
      INFO("N " << n << " K " << k << " M " << m);
      CHECK(linear_error(wc, wp, m, SEATRT_DTYPE_F32) <= 1e-4);
    }
  }
}

TEST_CASE("prefill: decode-free linear and linear_glu on 256-row tiles (launches that fill the GPU)", "[prefill][gemm]") {
  // Most tests above are small enough for gemm_bf16w.cuh's 64-row tile (at
  // most a quarter of the SMs' worth of 256-row blocks); these take the
  // 256-row tile: N 2048 x M 4389 (16 x 18 blocks, a partial last row
  // tile), and the GLU's 2112 outputs (33 blocks of 64) x M 2048 (8).
  const HostNvfp4 h = random_nvfp4(2048, 256);
  const seatrt_linear_weight wc = nvfp4_weight(cuda(), h, false), wp = nvfp4_weight(cpu(), h, false);
  CHECK(linear_error(wc, wp, 4352 + 37, SEATRT_DTYPE_F32) <= 1e-4);

  const int64_t inter = 2112, k = 256, m = 2048;
  const HostNvfp4 gh = random_nvfp4(inter, k), uh = random_nvfp4(inter, k);
  const seatrt_linear_weight gc = nvfp4_weight(cuda(), gh, false), gp = nvfp4_weight(cpu(), gh, false);
  const seatrt_linear_weight uc = nvfp4_weight(cuda(), uh, true), up = nvfp4_weight(cpu(), uh, false);
  Pair x = both_random(SEATRT_DTYPE_BF16, {m, k}, 0.5f), out = both_empty(SEATRT_DTYPE_F32, {m, inter});
  Pair gate_t = both_empty(SEATRT_DTYPE_F32, {m, inter}), up_t = both_empty(SEATRT_DTYPE_F32, {m, inter});
  fusions::GraphBuilder bc, bp;
  fusions::linear_glu(bc, SEATRT_ACT_GELU_TANH, &x.cuda, &gc, &uc, &gate_t.cuda, &up_t.cuda, &out.cuda);
  fusions::linear_glu(bp, SEATRT_ACT_GELU_TANH, &x.cpu, &gp, &up, &gate_t.cpu, &up_t.cpu, &out.cpu);
  const std::string plan = plan_vs_eager(bc, bp, "linear_glu");
  INFO(plan);
  CHECK_THAT(plan, Catch::Matchers::Contains("linear_glu"));
  CHECK(rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu)) <= 1e-4);
}
