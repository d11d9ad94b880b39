// linear with DENSE (F32/BF16) and NVFP4 weights against a double reference.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;
using test::matmul_t;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(3);
  return c;
}

}  // namespace

TEST_CASE("linear with dense F32 and BF16 weights, leading axes kept") {
  std::mt19937 rng(31);
  for (int32_t wdtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    const int64_t n = 37, k = 80;
    test::DenseWeight w = test::random_dense(rng, wdtype, n, k, 0.2);
    Tensor x = test::random_tensor(rng, SEATRT_DTYPE_BF16, {2, 3, k});
    Tensor out(SEATRT_DTYPE_F32, {2, 3, n});
    seatrt_linear_args args{sizeof(seatrt_linear_args), x.get(), &w.weight, out.get(), nullptr};
    cpu::linear(ctx(), args);
    CHECK(test::max_rel_err(out.values(), matmul_t(x.values(), w.data.values(), 6, n, k)) < 1e-5);
  }
}

TEST_CASE("linear with NVFP4 weights decodes w = fp4 * scale / global_scale per group of 16") {
  std::mt19937 rng(32);
  const int64_t n = 48, k = 96;
  test::Nvfp4Weight w = test::random_nvfp4(rng, n, k, 448.0f * 6.0f / 3.7f);
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {7, k});
  Tensor out(SEATRT_DTYPE_F32, {7, n});
  seatrt_linear_args args{sizeof(seatrt_linear_args), x.get(), &w.weight, out.get(), nullptr};
  cpu::linear(ctx(), args);
  CHECK(test::max_rel_err(out.values(), matmul_t(x.values(), w.dense(), 7, n, k)) < 1e-5);
  // One token, bf16 out (decode step shape).
  Tensor x1 = test::random_tensor(rng, SEATRT_DTYPE_BF16, {1, k});
  Tensor out1(SEATRT_DTYPE_BF16, {1, n});
  args = {sizeof(seatrt_linear_args), x1.get(), &w.weight, out1.get(), nullptr};
  cpu::linear(ctx(), args);
  CHECK(test::max_rel_err(out1.values(), matmul_t(x1.values(), w.dense(), 1, n, k)) < 1.0 / 128);
}

TEST_CASE("linear refuses wrong shapes, layouts and NVFP4 parameters") {
  std::mt19937 rng(33);
  test::Nvfp4Weight w = test::random_nvfp4(rng, 16, 32, 2.0f);
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, 32});
  Tensor out(SEATRT_DTYPE_F32, {2, 16});
  seatrt_linear_args args{sizeof(seatrt_linear_args), x.get(), &w.weight, out.get(), nullptr};
  REQUIRE(test::error_of([&] { cpu::linear(ctx(), args); }) == SEATRT_OK);
  std::string msg;
  Tensor x_wrong = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, 31});
  args.x = x_wrong.get();
  CHECK(test::error_of([&] { cpu::linear(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("in_features is 32"));
  args.x = x.get();
  Tensor out_wrong(SEATRT_DTYPE_F32, {2, 15});
  args.out = out_wrong.get();
  CHECK(test::error_of([&] { cpu::linear(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
  args.out = out.get();
  seatrt_linear_weight bad = w.weight;
  bad.layout = SEATRT_LAYOUT_NVFP4_SM90_TILED;
  args.weight = &bad;
  CHECK(test::error_of([&] { cpu::linear(ctx(), args); }, &msg) == SEATRT_ERR_UNSUPPORTED);
  CHECK_THAT(msg, Catch::Contains("NVFP4_CT_ROW_MAJOR"));
  bad = w.weight;
  bad.group_size = 32;
  CHECK(test::error_of([&] { cpu::linear(ctx(), args); }) == SEATRT_ERR_UNSUPPORTED);
  bad = w.weight;
  bad.global_scale = 0.0f;
  CHECK(test::error_of([&] { cpu::linear(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("global_scale"));
  bad = w.weight;
  bad.scales.shape[1] = 1;
  CHECK(test::error_of([&] { cpu::linear(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("weight.scales has shape [16, 1]"));
  bad = w.weight;
  bad.format = 5;
  CHECK(test::error_of([&] { cpu::linear(ctx(), args); }) == SEATRT_ERR_UNSUPPORTED);
  bad = w.weight;
  bad.data.data = nullptr;
  CHECK(test::error_of([&] { cpu::linear(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
  args.weight = nullptr;
  CHECK(test::error_of([&] { cpu::linear(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
}
