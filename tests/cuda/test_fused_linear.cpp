// CUDA vs CPU provider on the ABI 1.2 fused operations (linear_multi,
// linear_glu, rms_norm_multi), fresh random inputs each run, at the Gemma-4
// shapes and partial tiles: decode rows take the fused launches (x staged,
// split into planes or BF16), prefill rows and the benchmark switches that
// leave the defaults take the single operations.  Bounds as test_ops.cpp:
// F32 outputs 1e-4 relative, BF16 1e-2.  Outputs start as NaN bytes, so an
// element left unwritten fails.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <vector>

#include "fixtures_gpu.hpp"
#include "harness.hpp"

using namespace seatrt_test;

namespace {

double bound(int32_t dtype) { return dtype == SEATRT_DTYPE_BF16 ? 1e-2 : 1e-4; }

double compare(const Pair& out) { return rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu)); }

Pair poisoned(int32_t dtype, int64_t rows, int64_t cols) {
  const size_t bytes = static_cast<size_t>(rows * cols) * (dtype == SEATRT_DTYPE_F32 ? 4 : 2);
  return both(std::vector<uint8_t>(bytes, 0xFF), dtype, {rows, cols});
}

bool all_poison(const seatrt_tensor& t) {
  for (uint8_t b : cuda().download(t))
    if (b != 0xFF) return false;
  return true;
}

void require_v12(const Provider& p) {
  REQUIRE(SEATRT_HAS_FIELD(&p.api(), seatrt_kernel_api, rms_norm_multi));
  REQUIRE(p.api().linear_multi != nullptr);
  REQUIRE(p.api().linear_glu != nullptr);
  REQUIRE(p.api().rms_norm_multi != nullptr);
}

// SEATRT_LINEAR_DECODE settings: the default, then the switches that change
// the fused launch (three planes, no staging) or make it fall back.
const char* const kVariants[] = {"", "p3", "nostage", "nosplit", "plain"};

struct Weights {
  std::vector<seatrt_linear_weight> c, p;
};

Weights random_weights(const std::vector<int64_t>& outs, int64_t k, bool tiled) {
  Weights w;
  for (int64_t n : outs) {
    const HostNvfp4 h = random_nvfp4(n, k);
    w.c.push_back(nvfp4_weight(cuda(), h, tiled));
    w.p.push_back(nvfp4_weight(cpu(), h, false));
  }
  return w;
}

}  // namespace

// q/k/v of a sliding layer (three outputs) and of a full layer (two, no v),
// and a shape with partial 16-row tiles in every weight.
TEST_CASE("linear_multi agrees with the CPU provider: q/k/v shapes, decode and prefill rows, variants") {
  require_v12(cuda());
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> shapes = {
      {{4096, 2048, 2048}, 2816}, {{8192, 1024}, 2816}, {{264, 40, 136, 24}, 704}};
  for (const char* variant : kVariants) {
    setenv("SEATRT_LINEAR_DECODE", variant, 1);
    for (const auto& [outs, k] : shapes) {
      const bool tiled = outs.size() == 2;  // the SM90 layout once
      const Weights w = random_weights(outs, k, tiled);
      for (int64_t m : {1, 3, 8, 16, 32, 100}) {
        for (int32_t xdt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
          Pair x = both_random(xdt, {m, k});
          std::vector<Pair> out;
          for (int64_t n : outs) out.push_back(poisoned(SEATRT_DTYPE_F32, m, n));
          seatrt_linear_multi_args ac{}, ap{};
          ac.struct_size = ap.struct_size = sizeof(ac);
          ac.count = ap.count = static_cast<int32_t>(outs.size());
          ac.x = &x.cuda;
          ap.x = &x.cpu;
          for (size_t i = 0; i < outs.size(); ++i) {
            ac.weights[i] = &w.c[i];
            ap.weights[i] = &w.p[i];
            ac.outs[i] = &out[i].cuda;
            ap.outs[i] = &out[i].cpu;
          }
          ok(cuda().api().linear_multi(cuda().ctx(), cuda().stream(), &ac), "cuda linear_multi");
          ok(cpu().api().linear_multi(cpu().ctx(), cpu().stream(), &ap), "cpu linear_multi");
          for (size_t i = 0; i < outs.size(); ++i) {
            INFO("variant '" << variant << "' K " << k << " out " << i << " N " << outs[i] << " M " << m
                             << " x dtype " << xdt);
            CHECK(compare(out[i]) <= 1e-4);
          }
        }
      }
    }
  }
  unsetenv("SEATRT_LINEAR_DECODE");
}

// The dense MLP's gate/up (2112 x 2816) and a partial tile at K = 704; F32
// and BF16 outputs (the fused epilogue rounds once, like glu).
TEST_CASE("linear_glu agrees with the CPU provider: dense MLP shapes, decode and prefill rows, variants") {
  require_v12(cuda());
  for (const char* variant : kVariants) {
    setenv("SEATRT_LINEAR_DECODE", variant, 1);
    for (auto [inter, k] : {std::pair<int64_t, int64_t>{2112, 2816}, {264, 704}}) {
      const Weights w = random_weights({inter, inter}, k, inter == 264);
      for (int64_t m : {1, 3, 5, 8, 16, 32, 100}) {
        for (int32_t xdt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
          for (int32_t odt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
            Pair x = both_random(xdt, {m, k}, 0.5f), out = poisoned(odt, m, inter);
            seatrt_linear_glu_args ac{sizeof(ac), SEATRT_ACT_GELU_TANH, &x.cuda, &w.c[0], &w.c[1], &out.cuda};
            seatrt_linear_glu_args ap{sizeof(ap), SEATRT_ACT_GELU_TANH, &x.cpu, &w.p[0], &w.p[1], &out.cpu};
            ok(cuda().api().linear_glu(cuda().ctx(), cuda().stream(), &ac), "cuda linear_glu");
            ok(cpu().api().linear_glu(cpu().ctx(), cpu().stream(), &ap), "cpu linear_glu");
            INFO("variant '" << variant << "' I " << inter << " K " << k << " M " << m << " x dtype " << xdt
                             << " out dtype " << odt);
            CHECK(compare(out) <= bound(odt));
          }
        }
      }
    }
  }
  unsetenv("SEATRT_LINEAR_DECODE");
}

TEST_CASE("rms_norm_multi agrees with the CPU provider: 1-4 gains (some none), rows in registers and wide") {
  require_v12(cuda());
  for (int32_t dt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    for (int64_t n : {2816, 5000}) {  // 5000 > 256 threads x 16: an rms_norm per output
      for (int64_t rows : {1, 7, 64}) {
        for (int32_t count = 1; count <= SEATRT_FUSED_MAX; ++count) {
          Pair x = both_random(dt, {rows, n}, 3.0f);
          std::vector<Pair> gains, outs;
          for (int32_t i = 0; i < count; ++i) {
            // Mixed gain dtypes, and all F32 with F32 x (the register kernel's
            // plain-load instance) except at 7 rows.
            const bool all_f32 = dt == SEATRT_DTYPE_F32 && rows != 7;
            gains.push_back(both_random(all_f32 || i % 2 ? SEATRT_DTYPE_F32 : SEATRT_DTYPE_BF16, {n}));
            outs.push_back(poisoned(dt, rows, n));
          }
          seatrt_rms_norm_multi_args ac{}, ap{};
          ac.struct_size = ap.struct_size = sizeof(ac);
          ac.count = ap.count = count;
          ac.x = &x.cuda;
          ap.x = &x.cpu;
          ac.eps = ap.eps = 1e-6f;
          for (int32_t i = 0; i < count; ++i) {
            const bool none = i == 2;  // the third output has no gain
            ac.weights[i] = none ? nullptr : &gains[i].cuda;
            ap.weights[i] = none ? nullptr : &gains[i].cpu;
            ac.outs[i] = &outs[i].cuda;
            ap.outs[i] = &outs[i].cpu;
          }
          ok(cuda().api().rms_norm_multi(cuda().ctx(), cuda().stream(), &ac), "cuda rms_norm_multi");
          ok(cpu().api().rms_norm_multi(cpu().ctx(), cpu().stream(), &ap), "cpu rms_norm_multi");
          for (int32_t i = 0; i < count; ++i) {
            INFO("dtype " << dt << " N " << n << " rows " << rows << " count " << count << " out " << i);
            CHECK(compare(outs[i]) <= bound(dt));
          }
        }
      }
    }
  }
}

TEST_CASE("the ABI 1.2 fused operations refuse bad arguments before writing anything") {
  require_v12(cuda());
  const Weights w = random_weights({64, 64, 32}, 256, false);
  Pair x = both_random(SEATRT_DTYPE_F32, {2, 256}), x_short = both_random(SEATRT_DTYPE_F32, {2, 128});
  Pair o0 = poisoned(SEATRT_DTYPE_F32, 2, 64), o1 = poisoned(SEATRT_DTYPE_F32, 2, 64);
  auto multi = [&](int32_t count, const seatrt_tensor* xin, seatrt_tensor* second) {
    seatrt_linear_multi_args a{};
    a.struct_size = sizeof(a);
    a.count = count;
    a.x = xin;
    a.weights[0] = &w.c[0];
    a.weights[1] = &w.c[1];
    a.outs[0] = &o0.cuda;
    a.outs[1] = second;
    return code_of(cuda().api().linear_multi(cuda().ctx(), cuda().stream(), &a));
  };
  CHECK(multi(0, &x.cuda, &o1.cuda) == SEATRT_ERR_INVALID_ARG);
  CHECK(multi(SEATRT_FUSED_MAX + 1, &x.cuda, &o1.cuda) == SEATRT_ERR_INVALID_ARG);
  CHECK(multi(2, &x_short.cuda, &o1.cuda) == SEATRT_ERR_INVALID_ARG);  // in_features 256, x 128 columns
  CHECK(multi(2, &x.cuda, &o0.cuda) == SEATRT_ERR_INVALID_ARG);        // outs[1] aliases outs[0]
  CHECK(all_poison(o0.cuda));
  CHECK(all_poison(o1.cuda));

  seatrt_linear_glu_args g{sizeof(g), SEATRT_ACT_GELU_TANH, &x.cuda, &w.c[0], &w.c[2], &o0.cuda};  // 64 vs 32 rows
  CHECK(code_of(cuda().api().linear_glu(cuda().ctx(), cuda().stream(), &g)) == SEATRT_ERR_INVALID_ARG);
  g.up = &w.c[1];
  g.activation = 7;
  CHECK(code_of(cuda().api().linear_glu(cuda().ctx(), cuda().stream(), &g)) == SEATRT_ERR_INVALID_ARG);
  CHECK(all_poison(o0.cuda));

  Pair xn = both_random(SEATRT_DTYPE_F32, {2, 64}), short_gain = both_random(SEATRT_DTYPE_F32, {63});
  seatrt_rms_norm_multi_args r{};
  r.struct_size = sizeof(r);
  r.count = 2;
  r.x = &xn.cuda;
  r.eps = 1e-6f;
  r.outs[0] = &o0.cuda;
  r.outs[1] = &o1.cuda;
  r.weights[1] = &short_gain.cuda;
  CHECK(code_of(cuda().api().rms_norm_multi(cuda().ctx(), cuda().stream(), &r)) == SEATRT_ERR_INVALID_ARG);
  r.weights[1] = nullptr;
  r.outs[1] = &xn.cuda;  // aliases x
  CHECK(code_of(cuda().api().rms_norm_multi(cuda().ctx(), cuda().stream(), &r)) == SEATRT_ERR_INVALID_ARG);
  CHECK(all_poison(o0.cuda));
  CHECK(all_poison(o1.cuda));
}
