// add_rms_norm_pair (ABI 1.4) on the CPU provider: bit for bit against the
// sequence kernels.h spells out (rms_norm(a) into an F32 s,
// add_rms_norm(b, s, scale 1), add_rms_norm(s, residual, residual_scale,
// out)), against a double-precision reference written here from the
// formulas, with out aliasing a or b, and the argument checks, which must
// refuse before anything is written.
#include <catch2/catch.hpp>

#include <cstring>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;
using test::bitwise_equal;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(4);
  return c;
}

constexpr float kEps = 1e-6f;

struct Gains {
  const Tensor *a = nullptr, *b = nullptr, *sum = nullptr, *out = nullptr;
};

const seatrt_tensor* get(const Tensor* t) { return t ? t->get() : nullptr; }

seatrt_add_rms_norm_pair_args pair_args(const Tensor& a, const Tensor& b, Tensor& residual, float scale, Gains g,
                                        Tensor* out) {
  seatrt_add_rms_norm_pair_args args{};
  args.struct_size = sizeof args;
  args.eps = kEps;
  args.a = a.get();
  args.a_weight = get(g.a);
  args.b = b.get();
  args.b_weight = get(g.b);
  args.sum_weight = get(g.sum);
  args.residual = residual.get();
  args.residual_scale = scale;
  args.out_weight = get(g.out);
  args.out = out ? out->get() : nullptr;
  return args;
}

void run_pair(const Tensor& a, const Tensor& b, Tensor& residual, float scale, Gains g, Tensor* out) {
  const auto args = pair_args(a, b, residual, scale, g, out);
  cpu::add_rms_norm_pair(ctx(), &args);
}

void unfused(const Tensor& a, const Tensor& b, Tensor& residual, float scale, Gains g, Tensor* out) {
  const seatrt_tensor d = a.desc();
  Tensor s(SEATRT_DTYPE_F32, std::vector<int64_t>(d.shape, d.shape + d.ndim));
  seatrt_rms_norm_args norm_a{sizeof norm_a, a.get(), get(g.a), kEps, s.get()};
  cpu::rms_norm(ctx(), &norm_a);
  seatrt_add_rms_norm_args add_b{sizeof add_b, b.get(), get(g.b), s.get(), kEps, 1.0f, nullptr, nullptr};
  cpu::add_rms_norm(ctx(), &add_b);
  seatrt_add_rms_norm_args add_s{sizeof add_s, s.get(), get(g.sum), residual.get(), kEps, scale, get(g.out),
                                 out ? out->get() : nullptr};
  cpu::add_rms_norm(ctx(), &add_s);
}

// rmsnorm of one row times a gain, in double.
std::vector<double> norm(const std::vector<double>& x, const Tensor* gain) {
  double sum = 0.0;
  for (double v : x) sum += v * v;
  const double inv = 1.0 / std::sqrt(sum / static_cast<double>(x.size()) + kEps);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * (gain ? gain->at(static_cast<int64_t>(i)) : 1.0);
  return y;
}

std::vector<double> row_of(const Tensor& t, int64_t r, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = t.at(r * n + i);
  return v;
}

// The formulas in double: the residual from the inputs, out from the
// residual as the call stored it (the contract rounds it first).
void check_against_double(const Tensor& a, const Tensor& b, const Tensor& res_in, float scale, Gains g,
                          const Tensor& res_out, const Tensor* out, int64_t rows, int64_t n) {
  const double tol = res_out.dtype() == SEATRT_DTYPE_F32 ? 1e-5 : 1.0 / 128;
  for (int64_t r = 0; r < rows; ++r) {
    const auto na = norm(row_of(a, r, n), g.a), nb = norm(row_of(b, r, n), g.b);
    std::vector<double> s(static_cast<size_t>(n));
    for (size_t i = 0; i < s.size(); ++i) s[i] = na[i] + nb[i];
    const auto ns = norm(s, g.sum);
    const auto res0 = row_of(res_in, r, n), res1 = row_of(res_out, r, n);
    std::vector<double> want(static_cast<size_t>(n));
    for (size_t i = 0; i < want.size(); ++i) want[i] = (res0[i] + ns[i]) * scale;
    CHECK(test::max_rel_err(res1, want) < tol);
    if (!out) continue;
    CHECK(test::max_rel_err(row_of(*out, r, n), norm(res1, g.out)) < tol);
  }
}

}  // namespace

TEST_CASE("add_rms_norm_pair equals rms_norm + add_rms_norm + add_rms_norm and the formulas") {
  std::mt19937 rng(91);
  const int64_t rows = 5;
  for (const int64_t n : {64, 2816}) {
    for (const int32_t dtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
      for (const bool gains : {true, false}) {
        for (const bool with_out : {true, false}) {
          for (const float scale : {1.0f, 0.4375f}) {
            CAPTURE(n, dtype, gains, with_out, scale);
            const Tensor a = test::random_tensor(rng, dtype, {rows, n}, -4, 4);
            const Tensor b = test::random_tensor(rng, dtype, {rows, n}, -0.5, 0.5);
            const Tensor residual = test::random_tensor(rng, dtype, {rows, n}, -30, 30);
            const Tensor aw = test::random_tensor(rng, SEATRT_DTYPE_BF16, {n}, 0.2, 2.0);
            const Tensor bw = test::random_tensor(rng, SEATRT_DTYPE_F32, {n}, 0.2, 2.0);
            const Tensor sw = test::random_tensor(rng, SEATRT_DTYPE_F32, {n}, 0.2, 2.0);
            const Tensor ow = test::random_tensor(rng, SEATRT_DTYPE_BF16, {n}, 0.2, 2.0);
            const Gains g = gains ? Gains{&aw, &bw, &sw, &ow} : Gains{};
            Tensor res = residual, res_ref = residual;
            Tensor out(dtype, {rows, n}), out_ref(dtype, {rows, n});
            for (int64_t i = 0; i < out.numel(); ++i) out.set(i, NAN);
            run_pair(a, b, res, scale, g, with_out ? &out : nullptr);
            unfused(a, b, res_ref, scale, g, with_out ? &out_ref : nullptr);
            CHECK(bitwise_equal(res, res_ref));
            if (with_out) CHECK(bitwise_equal(out, out_ref));
            if (!with_out) CHECK(std::isnan(out.at(0)));  // untouched
            check_against_double(a, b, residual, scale, g, res, with_out ? &out : nullptr, rows, n);
          }
        }
      }
    }
  }
}

TEST_CASE("add_rms_norm_pair: out may alias a or b") {
  std::mt19937 rng(92);
  const int64_t rows = 3, n = 256;
  const Tensor a = test::random_tensor(rng, SEATRT_DTYPE_F32, {rows, n}, -2, 2);
  const Tensor b = test::random_tensor(rng, SEATRT_DTYPE_F32, {rows, n}, -2, 2);
  const Tensor w = test::random_tensor(rng, SEATRT_DTYPE_F32, {n}, 0.5, 1.5);
  const Tensor residual = test::random_tensor(rng, SEATRT_DTYPE_F32, {rows, n}, -5, 5);
  const Gains g{&w, &w, &w, &w};
  Tensor res_ref = residual, out_ref(SEATRT_DTYPE_F32, {rows, n});
  unfused(a, b, res_ref, 0.75f, g, &out_ref);
  for (const bool into_a : {true, false}) {
    CAPTURE(into_a);
    Tensor a_and_out = a, b_and_out = b, res = residual;
    Tensor& target = into_a ? a_and_out : b_and_out;
    run_pair(a_and_out, b_and_out, res, 0.75f, g, &target);
    CHECK(bitwise_equal(res, res_ref));
    CHECK(bitwise_equal(target, out_ref));
  }
}

TEST_CASE("add_rms_norm_pair gives the same bytes with 1 and 5 threads") {
  std::mt19937 rng(93);
  const Tensor a = test::random_tensor(rng, SEATRT_DTYPE_BF16, {9, 128}, -2, 2);
  const Tensor b = test::random_tensor(rng, SEATRT_DTYPE_BF16, {9, 128}, -2, 2);
  const Tensor residual = test::random_tensor(rng, SEATRT_DTYPE_BF16, {9, 128}, -5, 5);
  std::vector<std::vector<double>> results;
  for (const int32_t threads : {1, 5}) {
    cpu::Context c(threads);
    Tensor res = residual, out(SEATRT_DTYPE_BF16, {9, 128});
    const auto args = pair_args(a, b, res, 0.5f, {}, &out);
    cpu::add_rms_norm_pair(c, &args);
    std::vector<double> v = res.values(), o = out.values();
    v.insert(v.end(), o.begin(), o.end());
    results.push_back(v);
  }
  CHECK(results[0] == results[1]);
}

TEST_CASE("add_rms_norm_pair refuses bad arguments by name and writes nothing") {
  std::mt19937 rng(94);
  const int64_t rows = 2, n = 64;
  Tensor a = test::random_tensor(rng, SEATRT_DTYPE_F32, {rows, n});
  Tensor b = test::random_tensor(rng, SEATRT_DTYPE_F32, {rows, n});
  Tensor residual = test::random_tensor(rng, SEATRT_DTYPE_F32, {rows, n});
  Tensor w = test::random_tensor(rng, SEATRT_DTYPE_F32, {n});
  Tensor out(SEATRT_DTYPE_F32, {rows, n});
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, NAN);
  const Tensor res_before = residual, a_before = a, b_before = b;
  const auto good = pair_args(a, b, residual, 0.5f, {&w, &w, &w, &w}, &out);
  using Args = seatrt_add_rms_norm_pair_args;
  const auto refuses = [&](const std::function<void(Args&)>& change, seatrt_status_code code, const std::string& what) {
    CAPTURE(what);
    Args args = good;
    change(args);
    std::string msg;
    CHECK(test::error_of([&] { cpu::add_rms_norm_pair(ctx(), &args); }, &msg) == code);
    CHECK_THAT(msg, Catch::Contains("add_rms_norm_pair: ") && Catch::Contains(what));
    CHECK(bitwise_equal(residual, res_before));
    CHECK(bitwise_equal(a, a_before));
    CHECK(bitwise_equal(b, b_before));
    for (int64_t i = 0; i < out.numel(); ++i) REQUIRE(std::isnan(out.at(i)));
  };
  constexpr auto kInvalid = SEATRT_ERR_INVALID_ARG;
  CHECK(test::error_of([&] { cpu::add_rms_norm_pair(ctx(), nullptr); }) == kInvalid);
  refuses([](Args& x) { x.struct_size = 4; }, kInvalid, "struct_size");
  refuses([](Args& x) { x.a = nullptr; }, kInvalid, "a is NULL");
  refuses([](Args& x) { x.b = nullptr; }, kInvalid, "b is NULL");
  refuses([](Args& x) { x.residual = nullptr; }, kInvalid, "residual is NULL");
  Tensor narrow(SEATRT_DTYPE_F32, {rows, n / 2});
  refuses([&](Args& x) { x.b = narrow.get(); }, kInvalid, "b has shape [2, 32] but a has shape [2, 64]");
  refuses([&](Args& x) { x.residual = narrow.get(); }, kInvalid, "residual has shape [2, 32]");
  refuses([&](Args& x) { x.out = narrow.get(); }, kInvalid, "out has shape [2, 32]");
  Tensor bf16(SEATRT_DTYPE_BF16, {rows, n});
  refuses([&](Args& x) { x.b = bf16.get(); }, kInvalid, "b has dtype BF16 but a has F32");
  refuses([&](Args& x) { x.residual = bf16.get(); }, kInvalid, "residual has dtype BF16");
  refuses([&](Args& x) { x.out = bf16.get(); }, kInvalid, "out has dtype BF16");
  Tensor ints(SEATRT_DTYPE_I32, {rows, n});
  refuses([&](Args& x) { x.a = ints.get(); }, SEATRT_ERR_UNSUPPORTED, "a has dtype I32");
  refuses([&](Args& x) { x.residual = a.get(); }, kInvalid, "residual must not alias a");
  refuses([&](Args& x) { x.residual = b.get(); }, kInvalid, "residual must not alias b");
  refuses([&](Args& x) { x.out = residual.get(); }, kInvalid, "out must not alias residual");
  refuses([](Args& x) { x.eps = -1.0f; }, kInvalid, "eps must be finite and >= 0");
  refuses([](Args& x) { x.eps = NAN; }, kInvalid, "eps");
  refuses([](Args& x) { x.residual_scale = INFINITY; }, kInvalid, "residual_scale must be finite");
  refuses([](Args& x) { x.residual_scale = NAN; }, kInvalid, "residual_scale");
  Tensor w_short = test::random_tensor(rng, SEATRT_DTYPE_F32, {n - 1});
  Tensor w_ints(SEATRT_DTYPE_I32, {n});
  refuses([&](Args& x) { x.a_weight = w_short.get(); }, kInvalid, "a_weight has shape [63]");
  refuses([&](Args& x) { x.b_weight = w_short.get(); }, kInvalid, "b_weight has shape [63]");
  refuses([&](Args& x) { x.sum_weight = w_ints.get(); }, SEATRT_ERR_UNSUPPORTED, "sum_weight has dtype I32");
  refuses([&](Args& x) { x.out_weight = w_short.get(); }, kInvalid, "out_weight has shape [63]");
  // out_weight is ignored without out; the unbroken arguments work.
  Args no_out = good;
  no_out.out = nullptr;
  no_out.out_weight = w_short.get();
  CHECK(test::error_of([&] { cpu::add_rms_norm_pair(ctx(), &no_out); }) == SEATRT_OK);
  CHECK_FALSE(bitwise_equal(residual, res_before));
  CHECK(test::error_of([&] { cpu::add_rms_norm_pair(ctx(), &good); }) == SEATRT_OK);
  CHECK_FALSE(std::isnan(out.at(0)));
}
