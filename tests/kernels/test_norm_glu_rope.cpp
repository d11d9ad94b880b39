// rms_norm, glu and rope against naive double-precision references.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(4);
  return c;
}

std::vector<double> rms_ref(const Tensor& x, const Tensor* w, double eps) {
  const int64_t n = x.desc().shape[x.desc().ndim - 1];
  std::vector<double> out;
  for (int64_t r = 0; r < x.numel() / n; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += x.at(r * n + i) * x.at(r * n + i);
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i) out.push_back(x.at(r * n + i) * inv * (w ? w->at(i) : 1.0));
  }
  return out;
}

}  // namespace

TEST_CASE("rms_norm with and without weight, fp32 inside") {
  std::mt19937 rng(21);
  for (int32_t dtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F16}) {
    Tensor x = test::random_tensor(rng, dtype, {3, 4, 96}, -3, 3);
    Tensor w = test::random_tensor(rng, SEATRT_DTYPE_BF16, {96}, 0.5, 1.5);
    Tensor out(SEATRT_DTYPE_F32, {3, 4, 96});
    seatrt_rms_norm_args args{sizeof(seatrt_rms_norm_args), x.get(), w.get(), 1e-6f, out.get(), 0.0f};
    cpu::rms_norm(ctx(), args);
    CHECK(test::max_rel_err(out.values(), rms_ref(x, &w, 1e-6)) < 2e-6);
    args.weight = nullptr;
    cpu::rms_norm(ctx(), args);
    CHECK(test::max_rel_err(out.values(), rms_ref(x, nullptr, 1e-6)) < 2e-6);
  }
  // In place, bf16 out: one rounding of the fp32 result.
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_BF16, {2, 64});
  const Tensor x0 = x;
  seatrt_rms_norm_args args{sizeof(seatrt_rms_norm_args), x.get(), nullptr, 1e-6f, x.get(), 0.0f};
  cpu::rms_norm(ctx(), args);
  CHECK(test::max_rel_err(x.values(), rms_ref(x0, nullptr, 1e-6)) < 1.0 / 128);
  // A weight of the wrong length is refused.
  Tensor w = test::random_tensor(rng, SEATRT_DTYPE_F32, {63});
  args.weight = w.get();
  std::string msg;
  CHECK(test::error_of([&] { cpu::rms_norm(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("rms_norm: weight"));
}

TEST_CASE("glu on strided gate/up views of one fused tensor, all activations") {
  std::mt19937 rng(22);
  const int64_t m = 5, inter = 24;
  Tensor fused = test::random_tensor(rng, SEATRT_DTYPE_F32, {m, 2 * inter}, -4, 4);
  seatrt_tensor gate = test::view(fused, {m, inter}, {2 * inter, 1}, 0);
  seatrt_tensor up = test::view(fused, {m, inter}, {2 * inter, 1}, inter);
  for (int32_t act : {SEATRT_ACT_GELU_TANH, SEATRT_ACT_SILU, SEATRT_ACT_GELU_ERF}) {
    Tensor out(SEATRT_DTYPE_F32, {m, inter});
    seatrt_glu_args args{sizeof(seatrt_glu_args), act, &gate, &up, out.get()};
    cpu::glu(ctx(), args);
    std::vector<double> expected;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t i = 0; i < inter; ++i) {
        const double g = fused.at(r * 2 * inter + i), u = fused.at(r * 2 * inter + inter + i);
        double a;
        if (act == SEATRT_ACT_GELU_TANH) {
          a = 0.5 * g * (1 + std::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g)));
        } else if (act == SEATRT_ACT_SILU) {
          a = g / (1 + std::exp(-g));
        } else {
          a = 0.5 * g * (1 + std::erf(g / std::sqrt(2.0)));
        }
        expected.push_back(a * u);
      }
    }
    CHECK(test::max_rel_err(out.values(), expected) < 1e-6);
  }
  Tensor out(SEATRT_DTYPE_F32, {m, inter});
  seatrt_glu_args args{sizeof(seatrt_glu_args), 7, &gate, &up, out.get()};
  CHECK(test::error_of([&] { cpu::glu(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
}

TEST_CASE("rope: NeoX half-split over the whole head dim; zero frequencies pass through") {
  std::mt19937 rng(23);
  const int64_t tokens = 4, heads = 3, dim = 32, half = 16;
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {tokens, heads, dim});
  const Tensor x0 = x;
  Tensor positions = test::int_tensor(SEATRT_DTYPE_I32, {tokens}, {0, 7, 1023, 40000});
  // Proportional style: the first 4 pairs rotate, the rest have frequency 0.
  Tensor inv_freq(SEATRT_DTYPE_F32, {half});
  for (int64_t i = 0; i < half; ++i) inv_freq.set(i, i < 4 ? std::pow(1e6, -2.0 * static_cast<double>(i) / static_cast<double>(dim)) : 0.0);
  seatrt_rope_args args{sizeof(seatrt_rope_args), x.get(), positions.get(), inv_freq.get(), x.get(), 0, {}};
  cpu::rope(ctx(), args);
  std::vector<double> expected(static_cast<size_t>(x.numel()));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t base = (t * heads + h) * dim;
      for (int64_t i = 0; i < half; ++i) {
        const double theta = static_cast<double>(static_cast<float>(positions.as<int32_t>()[t]) *
                                                 static_cast<float>(inv_freq.at(i)));
        const double a = x0.at(base + i), b = x0.at(base + i + half);
        expected[static_cast<size_t>(base + i)] = a * std::cos(theta) - b * std::sin(theta);
        expected[static_cast<size_t>(base + i + half)] = b * std::cos(theta) + a * std::sin(theta);
      }
    }
  }
  CHECK(test::max_rel_err(x.values(), expected) < 1e-6);
  // Pairs with frequency zero are bit-identical to the input.
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t i = 4; i < half; ++i) {
      CHECK(x.at(t * heads * dim + i) == x0.at(t * heads * dim + i));
      CHECK(x.at(t * heads * dim + i + half) == x0.at(t * heads * dim + i + half));
    }
  }
  // Position 0 leaves everything unchanged.
  for (int64_t i = 0; i < heads * dim; ++i) CHECK(x.at(i) == x0.at(i));
  Tensor bad_freq(SEATRT_DTYPE_F32, {half + 1});
  args.inv_freq = bad_freq.get();
  CHECK(test::error_of([&] { cpu::rope(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
}
