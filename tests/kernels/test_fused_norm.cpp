// The ABI 1.1 fused norms against the composition of the unfused ops they
// replace (rms_norm, elementwise ADD/SCALE, rope), on fresh random inputs:
// bit-identical on F32, one rounding apart on BF16.  Also the aliasing the
// Gemma-4 plugin relies on (out == x) and the argument checks.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;
using test::bitwise_equal;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(4);
  return c;
}

void rms_norm(const Tensor& x, const Tensor* w, float eps, Tensor& out) {
  seatrt_rms_norm_args a{sizeof(a), x.get(), w ? w->get() : nullptr, eps, out.get()};
  cpu::rms_norm(ctx(), &a);
}

void elementwise(seatrt_elementwise_op op, Tensor& a, const Tensor* b, float alpha) {
  seatrt_elementwise_args args{sizeof(args), op, a.get(), b ? b->get() : nullptr, alpha, a.get()};
  cpu::elementwise(ctx(), &args);
}

// The unfused sequence the plugin ran before ABI 1.1.
void add_rms_norm_unfused(const Tensor& x, const Tensor* xw, Tensor& residual, float eps, float scale,
                          const Tensor* ow, Tensor* out) {
  const seatrt_tensor d = residual.desc();
  Tensor branch(SEATRT_DTYPE_F32, std::vector<int64_t>(d.shape, d.shape + d.ndim));
  rms_norm(x, xw, eps, branch);
  elementwise(SEATRT_EW_ADD, residual, &branch, 0.0f);
  elementwise(SEATRT_EW_SCALE, residual, nullptr, scale);
  if (out) rms_norm(residual, ow, eps, *out);
}

void add_rms_norm(const Tensor& x, const Tensor* xw, Tensor& residual, float eps, float scale, const Tensor* ow,
                  Tensor* out) {
  seatrt_add_rms_norm_args a{sizeof(a),  x.get(), xw ? xw->get() : nullptr, residual.get(), eps, scale,
                             ow ? ow->get() : nullptr, out ? out->get() : nullptr};
  cpu::add_rms_norm(ctx(), &a);
}

}  // namespace

TEST_CASE("add_rms_norm equals rms_norm + ADD + SCALE + rms_norm, bit for bit on F32") {
  std::mt19937 rng(71);
  const int64_t rows = 5, n = 2816;
  for (const bool weighted : {true, false}) {
    for (const bool with_out : {true, false}) {
      for (const float scale : {1.0f, 0.4375f}) {
        for (const int32_t xdtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
          CAPTURE(weighted, with_out, scale, xdtype);
          const Tensor x = test::random_tensor(rng, xdtype, {rows, n}, -4, 4);
          const Tensor xw = test::random_tensor(rng, SEATRT_DTYPE_F32, {n}, 0.2, 2.0);
          const Tensor ow = test::random_tensor(rng, SEATRT_DTYPE_BF16, {n}, 0.2, 2.0);
          const Tensor residual = test::random_tensor(rng, SEATRT_DTYPE_F32, {rows, n}, -30, 30);
          Tensor res_fused = residual, res_ref = residual;
          Tensor out_fused(SEATRT_DTYPE_F32, {rows, n}), out_ref(SEATRT_DTYPE_F32, {rows, n});
          add_rms_norm(x, weighted ? &xw : nullptr, res_fused, 1e-6f, scale, weighted ? &ow : nullptr,
                       with_out ? &out_fused : nullptr);
          add_rms_norm_unfused(x, weighted ? &xw : nullptr, res_ref, 1e-6f, scale, weighted ? &ow : nullptr,
                               with_out ? &out_ref : nullptr);
          CHECK(bitwise_equal(res_fused, res_ref));
          CHECK_FALSE(bitwise_equal(res_fused, residual));  // it did update
          if (with_out) CHECK(bitwise_equal(out_fused, out_ref));
        }
      }
    }
  }
}

TEST_CASE("add_rms_norm: out may alias x (the branch buffer is reused)") {
  std::mt19937 rng(72);
  const Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {3, 256}, -2, 2);
  const Tensor w = test::random_tensor(rng, SEATRT_DTYPE_F32, {256}, 0.5, 1.5);
  const Tensor residual = test::random_tensor(rng, SEATRT_DTYPE_F32, {3, 256}, -5, 5);
  Tensor res_ref = residual, out_ref(SEATRT_DTYPE_F32, {3, 256});
  add_rms_norm_unfused(x, &w, res_ref, 1e-6f, 2.0f, &w, &out_ref);
  Tensor x_and_out = x, res = residual;
  seatrt_add_rms_norm_args a{sizeof(a), x_and_out.get(), w.get(), res.get(), 1e-6f, 2.0f, w.get(), x_and_out.get()};
  cpu::add_rms_norm(ctx(), &a);
  CHECK(bitwise_equal(res, res_ref));
  CHECK(bitwise_equal(x_and_out, out_ref));
}

TEST_CASE("add_rms_norm on a BF16 residual rounds once per store") {
  std::mt19937 rng(73);
  const int64_t rows = 4, n = 512;
  const Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {rows, n}, -3, 3);
  const Tensor w = test::random_tensor(rng, SEATRT_DTYPE_F32, {n}, 0.5, 1.5);
  Tensor residual = test::random_tensor(rng, SEATRT_DTYPE_BF16, {rows, n}, -8, 8);
  // fp32 reference: the same composition on an F32 copy of the residual.
  Tensor res_ref(SEATRT_DTYPE_F32, {rows, n}), out_ref(SEATRT_DTYPE_F32, {rows, n});
  for (int64_t i = 0; i < residual.numel(); ++i) res_ref.set(i, residual.at(i));
  add_rms_norm_unfused(x, &w, res_ref, 1e-6f, 0.75f, &w, &out_ref);
  Tensor out(SEATRT_DTYPE_BF16, {rows, n});
  add_rms_norm(x, &w, residual, 1e-6f, 0.75f, &w, &out);
  CHECK(test::max_rel_err(residual.values(), res_ref.values()) < 1.0 / 128);
  CHECK(test::max_rel_err(out.values(), out_ref.values()) < 1.0 / 64);
}

TEST_CASE("add_rms_norm refuses bad arguments by name") {
  std::mt19937 rng(74);
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, 64});
  Tensor residual = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, 64});
  Tensor short_w = test::random_tensor(rng, SEATRT_DTYPE_F32, {63});
  Tensor other(SEATRT_DTYPE_F32, {2, 32});
  std::string msg;
  seatrt_add_rms_norm_args a{sizeof(a), x.get(), short_w.get(), residual.get(), 1e-6f, 1.0f, nullptr, nullptr};
  CHECK(test::error_of([&] { cpu::add_rms_norm(ctx(), &a); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("add_rms_norm: x_weight"));
  a.x_weight = nullptr;
  a.residual = x.get();
  CHECK(test::error_of([&] { cpu::add_rms_norm(ctx(), &a); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("residual must not alias x"));
  a.residual = residual.get();
  a.out = other.get();
  CHECK(test::error_of([&] { cpu::add_rms_norm(ctx(), &a); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("out"));
  a.out = nullptr;
  a.eps = -1.0f;
  CHECK(test::error_of([&] { cpu::add_rms_norm(ctx(), &a); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("eps"));
}

TEST_CASE("rms_norm_rope equals rms_norm then rope, bit for bit on F32, in place") {
  std::mt19937 rng(75);
  const int64_t tokens = 5, heads = 4, dim = 64, half = 32;
  Tensor positions = test::int_tensor(SEATRT_DTYPE_I32, {tokens}, {0, 3, 511, 8191, 131071});
  // Proportional partial rope: the first quarter of the pairs rotate.
  Tensor inv_freq(SEATRT_DTYPE_F32, {half});
  for (int64_t i = 0; i < half; ++i)
    inv_freq.set(i, i < 8 ? std::pow(1e6, -2.0 * static_cast<double>(i) / static_cast<double>(dim)) : 0.0);
  for (const bool weighted : {true, false}) {
    for (const int32_t xdtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
      CAPTURE(weighted, xdtype);
      const Tensor x = test::random_tensor(rng, xdtype, {tokens, heads, dim}, -3, 3);
      const Tensor w = test::random_tensor(rng, SEATRT_DTYPE_F32, {dim}, 0.5, 1.5);
      Tensor ref(SEATRT_DTYPE_F32, {tokens, heads, dim});
      rms_norm(x, weighted ? &w : nullptr, 1e-6f, ref);
      seatrt_rope_args ra{sizeof(ra), ref.get(), positions.get(), inv_freq.get(), ref.get()};
      cpu::rope(ctx(), &ra);
      Tensor out(SEATRT_DTYPE_F32, {tokens, heads, dim});
      seatrt_rms_norm_rope_args a{sizeof(a),       x.get(),       weighted ? w.get() : nullptr, 1e-6f, 0,
                                  positions.get(), inv_freq.get(), out.get()};
      cpu::rms_norm_rope(ctx(), &a);
      CHECK(bitwise_equal(out, ref));
      if (xdtype == SEATRT_DTYPE_F32) {  // out == x, as the plugin calls it
        Tensor inplace = x;
        a.x = inplace.get();
        a.out = inplace.get();
        cpu::rms_norm_rope(ctx(), &a);
        CHECK(bitwise_equal(inplace, ref));
      }
    }
  }
}

TEST_CASE("rms_norm_rope refuses bad arguments by name") {
  std::mt19937 rng(76);
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, 2, 8});
  Tensor positions = test::int_tensor(SEATRT_DTYPE_I32, {2}, {0, 1});
  Tensor inv_freq(SEATRT_DTYPE_F32, {3});
  Tensor w = test::random_tensor(rng, SEATRT_DTYPE_F32, {8});
  std::string msg;
  seatrt_rms_norm_rope_args a{sizeof(a), x.get(), w.get(), 1e-6f, 0, positions.get(), inv_freq.get(), x.get()};
  CHECK(test::error_of([&] { cpu::rms_norm_rope(ctx(), &a); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("rms_norm_rope: inv_freq"));
  Tensor freq4(SEATRT_DTYPE_F32, {4});
  Tensor w7 = test::random_tensor(rng, SEATRT_DTYPE_F32, {7});
  a.inv_freq = freq4.get();
  a.weight = w7.get();
  CHECK(test::error_of([&] { cpu::rms_norm_rope(ctx(), &a); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("rms_norm_rope: weight"));
}
