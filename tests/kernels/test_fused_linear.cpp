// The ABI 1.2 fused operations on the CPU provider: linear_multi, linear_glu
// and rms_norm_multi against a double-precision reference computed here from
// the weights' definitions, and bit for bit against the sequence of single
// operations they replace (the Gemma-4 plugin's fallback); then the argument
// checks, which must refuse before any output is written.
#include <catch2/catch.hpp>

#include <cmath>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;
using test::bitwise_equal;
using test::matmul_t;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(4);
  return c;
}

double gelu_tanh(double v) { return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }

void linear(const Tensor& x, const seatrt_linear_weight& w, Tensor& out) {
  seatrt_linear_args a{sizeof(a), x.get(), &w, out.get()};
  cpu::linear(ctx(), &a);
}

void linear_multi(const Tensor& x, std::vector<const seatrt_linear_weight*> w, std::vector<Tensor*> outs) {
  seatrt_linear_multi_args a{};
  a.struct_size = sizeof(a);
  a.count = static_cast<int32_t>(w.size());
  a.x = x.get();
  for (size_t i = 0; i < w.size() && i < SEATRT_FUSED_MAX; ++i) {
    a.weights[i] = w[i];
    a.outs[i] = outs[i]->get();
  }
  cpu::linear_multi(ctx(), &a);
}

void linear_glu(const Tensor& x, const seatrt_linear_weight& gate, const seatrt_linear_weight& up, Tensor& out,
                int32_t act = SEATRT_ACT_GELU_TANH) {
  seatrt_linear_glu_args a{sizeof(a), act, x.get(), &gate, &up, out.get()};
  cpu::linear_glu(ctx(), &a);
}

void rms_norm_multi(const Tensor& x, float eps, std::vector<const Tensor*> w, std::vector<Tensor*> outs) {
  seatrt_rms_norm_multi_args a{};
  a.struct_size = sizeof(a);
  a.count = static_cast<int32_t>(outs.size());
  a.x = x.get();
  a.eps = eps;
  for (size_t i = 0; i < outs.size() && i < SEATRT_FUSED_MAX; ++i) {
    a.weights[i] = w[i] ? w[i]->get() : nullptr;
    a.outs[i] = outs[i]->get();
  }
  cpu::rms_norm_multi(ctx(), &a);
}

}  // namespace

TEST_CASE("linear_multi: every output is its Linear (reference in double, and bit for bit the single calls)") {
  std::mt19937 rng(121);
  const int64_t m = 5, k = 96;
  // q/k/v-like: three NVFP4 weights of different widths; and one dense.
  test::Nvfp4Weight wq = test::random_nvfp4(rng, 64, k, 448.0f * 6.0f / 2.5f);
  test::Nvfp4Weight wk = test::random_nvfp4(rng, 32, k, 448.0f * 6.0f / 1.5f);
  test::Nvfp4Weight wv = test::random_nvfp4(rng, 16, k, 448.0f * 6.0f / 3.0f);
  test::DenseWeight wd = test::random_dense(rng, SEATRT_DTYPE_BF16, 24, k, 0.2);
  for (const int32_t xdtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    CAPTURE(xdtype);
    const Tensor x = test::random_tensor(rng, xdtype, {m, k}, -2, 2);
    Tensor q(SEATRT_DTYPE_F32, {m, 64}), kk(SEATRT_DTYPE_F32, {m, 32}), v(SEATRT_DTYPE_BF16, {m, 16}),
        d(SEATRT_DTYPE_F32, {m, 24});
    linear_multi(x, {&wq.weight, &wk.weight, &wv.weight, &wd.weight}, {&q, &kk, &v, &d});
    CHECK(test::max_rel_err(q.values(), matmul_t(x.values(), wq.dense(), m, 64, k)) < 1e-5);
    CHECK(test::max_rel_err(kk.values(), matmul_t(x.values(), wk.dense(), m, 32, k)) < 1e-5);
    CHECK(test::max_rel_err(v.values(), matmul_t(x.values(), wv.dense(), m, 16, k)) < 1.0 / 128);
    CHECK(test::max_rel_err(d.values(), matmul_t(x.values(), wd.data.values(), m, 24, k)) < 1e-5);
    Tensor q1(SEATRT_DTYPE_F32, {m, 64}), v1(SEATRT_DTYPE_BF16, {m, 16});
    linear(x, wq.weight, q1);
    linear(x, wv.weight, v1);
    CHECK(bitwise_equal(q, q1));
    CHECK(bitwise_equal(v, v1));
  }
  // count 1 is a plain linear.
  const Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, k});
  Tensor one(SEATRT_DTYPE_F32, {2, 32}), ref(SEATRT_DTYPE_F32, {2, 32});
  linear_multi(x, {&wk.weight}, {&one});
  linear(x, wk.weight, ref);
  CHECK(bitwise_equal(one, ref));
}

TEST_CASE("linear_glu: gelu_tanh(x gate^T) * (x up^T) (reference in double, and bit for bit linear, linear, glu)") {
  std::mt19937 rng(122);
  const int64_t m = 4, k = 64, inter = 48;
  test::Nvfp4Weight gate = test::random_nvfp4(rng, inter, k, 448.0f * 6.0f / 2.0f);
  test::Nvfp4Weight up = test::random_nvfp4(rng, inter, k, 448.0f * 6.0f / 2.0f);
  const Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {m, k}, -2, 2);
  Tensor out(SEATRT_DTYPE_F32, {m, inter});
  linear_glu(x, gate.weight, up.weight, out);
  const std::vector<double> g = matmul_t(x.values(), gate.dense(), m, inter, k);
  const std::vector<double> u = matmul_t(x.values(), up.dense(), m, inter, k);
  std::vector<double> want(g.size());
  for (size_t i = 0; i < g.size(); ++i) want[i] = gelu_tanh(g[i]) * u[i];
  CHECK(test::max_rel_err(out.values(), want) < 1e-5);

  Tensor g1(SEATRT_DTYPE_F32, {m, inter}), u1(SEATRT_DTYPE_F32, {m, inter}), ref(SEATRT_DTYPE_F32, {m, inter});
  linear(x, gate.weight, g1);
  linear(x, up.weight, u1);
  seatrt_glu_args a{sizeof(a), SEATRT_ACT_GELU_TANH, g1.get(), u1.get(), ref.get()};
  cpu::glu(ctx(), &a);
  CHECK(bitwise_equal(out, ref));

  // The erf GELU is honoured too (it differs from tanh's at these inputs).
  Tensor erf_out(SEATRT_DTYPE_F32, {m, inter});
  linear_glu(x, gate.weight, up.weight, erf_out, SEATRT_ACT_GELU_ERF);
  CHECK_FALSE(bitwise_equal(erf_out, out));
}

TEST_CASE("rms_norm_multi: rmsnorm(x) * gain per output (reference in double, and bit for bit rms_norm each)") {
  std::mt19937 rng(123);
  const int64_t rows = 3, n = 2816;
  const float eps = 1e-6f;
  const Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {rows, n}, -5, 5);
  const Tensor w0 = test::random_tensor(rng, SEATRT_DTYPE_F32, {n}, 0.01, 0.05);
  const Tensor w1 = test::random_tensor(rng, SEATRT_DTYPE_BF16, {n}, 0.5, 2.0);
  Tensor o0(SEATRT_DTYPE_F32, {rows, n}), o1(SEATRT_DTYPE_F32, {rows, n}), o2(SEATRT_DTYPE_BF16, {rows, n});
  rms_norm_multi(x, eps, {&w0, &w1, nullptr}, {&o0, &o1, &o2});
  const std::vector<double> xv = x.values(), g0 = w0.values(), g1 = w1.values();
  std::vector<double> want0(xv.size()), want1(xv.size()), want2(xv.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0.0;
    for (int64_t c = 0; c < n; ++c) ss += xv[static_cast<size_t>(r * n + c)] * xv[static_cast<size_t>(r * n + c)];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    for (int64_t c = 0; c < n; ++c) {
      const size_t i = static_cast<size_t>(r * n + c);
      want0[i] = xv[i] * inv * g0[static_cast<size_t>(c)];
      want1[i] = xv[i] * inv * g1[static_cast<size_t>(c)];
      want2[i] = xv[i] * inv;
    }
  }
  CHECK(test::max_rel_err(o0.values(), want0) < 1e-5);
  CHECK(test::max_rel_err(o1.values(), want1) < 1e-5);
  CHECK(test::max_rel_err(o2.values(), want2) < 1.0 / 128);
  for (const auto& [w, fused] : {std::pair<const Tensor*, const Tensor*>{&w0, &o0}, {&w1, &o1}}) {
    Tensor single(SEATRT_DTYPE_F32, {rows, n});
    seatrt_rms_norm_args a{sizeof(a), x.get(), w->get(), eps, single.get()};
    cpu::rms_norm(ctx(), &a);
    CHECK(bitwise_equal(*fused, single));
  }
}

TEST_CASE("fused linears and norms refuse bad arguments before writing any output") {
  std::mt19937 rng(124);
  const int64_t k = 32;
  test::Nvfp4Weight w16 = test::random_nvfp4(rng, 16, k, 2.0f);
  test::Nvfp4Weight w8 = test::random_nvfp4(rng, 8, k, 2.0f);
  test::Nvfp4Weight w_other_k = test::random_nvfp4(rng, 16, 64, 2.0f);
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, k});
  const Tensor poison = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, 16}, 7, 9);
  Tensor a = poison, b = poison;
  std::string msg;

  // linear_multi: the second weight's shape is wrong -> the first output untouched.
  CHECK(test::error_of([&] { linear_multi(x, {&w16.weight, &w_other_k.weight}, {&a, &b}); }, &msg) ==
        SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("weights[1]"));
  CHECK(bitwise_equal(a, poison));
  // out of the wrong width, counts outside 1..4, aliasing.
  CHECK(test::error_of([&] { linear_multi(x, {&w16.weight, &w8.weight}, {&a, &b}); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("outs[1]"));
  CHECK(test::error_of([&] { linear_multi(x, {}, {}); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("count 0"));
  CHECK(test::error_of([&] {
          linear_multi(x, {&w16.weight, &w16.weight, &w16.weight, &w16.weight, &w16.weight}, {&a, &a, &a, &a, &a});
        }) == SEATRT_ERR_INVALID_ARG);
  CHECK(test::error_of([&] { linear_multi(x, {&w16.weight, &w16.weight}, {&a, &a}); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("must not alias outs[0]"));
  CHECK(bitwise_equal(a, poison));

  // linear_glu: gate/up widths differ, unknown activation, out aliasing x.
  CHECK(test::error_of([&] { linear_glu(x, w16.weight, w8.weight, a); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("out_features"));
  CHECK(test::error_of([&] { linear_glu(x, w16.weight, w16.weight, a, 99); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("activation"));
  CHECK(test::error_of([&] { linear_glu(x, w_other_k.weight, w_other_k.weight, a); }, &msg) ==
        SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("in_features"));
  CHECK(bitwise_equal(a, poison));

  // rms_norm_multi: the second output's shape is wrong -> the first untouched;
  // a gain of the wrong length; a negative eps; an output aliasing x.
  Tensor n0 = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, k}, 7, 9);
  const Tensor n0_before = n0;
  Tensor wrong(SEATRT_DTYPE_F32, {2, k + 1});
  CHECK(test::error_of([&] { rms_norm_multi(x, 1e-6f, {nullptr, nullptr}, {&n0, &wrong}); }, &msg) ==
        SEATRT_ERR_INVALID_ARG);
  CHECK(bitwise_equal(n0, n0_before));
  const Tensor short_gain = test::random_tensor(rng, SEATRT_DTYPE_F32, {k - 1});
  CHECK(test::error_of([&] { rms_norm_multi(x, 1e-6f, {&short_gain}, {&n0}); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("weights[0]"));
  CHECK(test::error_of([&] { rms_norm_multi(x, -1.0f, {nullptr}, {&n0}); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("eps"));
  CHECK(test::error_of([&] { rms_norm_multi(x, 1e-6f, {nullptr}, {&x}); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("must not alias x"));
  CHECK(bitwise_equal(n0, n0_before));
}
