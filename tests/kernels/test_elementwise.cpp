// elementwise, embedding, gather_rows against naive references.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(3);
  return c;
}

seatrt_elementwise_args ew(int32_t op, seatrt_tensor* a, seatrt_tensor* b, float alpha, seatrt_tensor* out) {
  seatrt_elementwise_args args{};
  args.struct_size = sizeof args;
  args.op = op;
  args.a = a;
  args.b = b;
  args.alpha = alpha;
  args.out = out;
  return args;
}

}  // namespace

TEST_CASE("elementwise add and mul broadcast b over leading dims") {
  std::mt19937 rng(11);
  for (int32_t dtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F16}) {
    Tensor a = test::random_tensor(rng, dtype, {2, 3, 8});
    for (std::vector<int64_t> bshape : {std::vector<int64_t>{8}, {3, 8}, {1, 3, 8}, {2, 3, 8}}) {
      Tensor b = test::random_tensor(rng, SEATRT_DTYPE_F32, bshape);
      int64_t b_rows = b.numel() / 8;
      for (int32_t op : {SEATRT_EW_ADD, SEATRT_EW_MUL}) {
        Tensor out(SEATRT_DTYPE_F32, {2, 3, 8});
        auto args = ew(op, a.get(), b.get(), 0.0f, out.get());
        cpu::elementwise(ctx(), args);
        std::vector<double> expected;
        for (int64_t i = 0; i < a.numel(); ++i) {
          const double y = b.at((i / 8 % b_rows) * 8 + i % 8);
          expected.push_back(op == SEATRT_EW_ADD ? a.at(i) + y : a.at(i) * y);
        }
        CHECK(test::max_rel_err(out.values(), expected) < 1e-6);
      }
    }
  }
}

TEST_CASE("elementwise scale, softcap, in place") {
  std::mt19937 rng(12);
  Tensor a = test::random_tensor(rng, SEATRT_DTYPE_F32, {5, 7}, -100, 100);
  const std::vector<double> before = a.values();
  auto args = ew(SEATRT_EW_SOFTCAP, a.get(), nullptr, 30.0f, a.get());
  cpu::elementwise(ctx(), args);
  std::vector<double> expected;
  for (double v : before) expected.push_back(30.0 * std::tanh(v / 30.0));
  CHECK(test::max_rel_err(a.values(), expected) < 1e-6);
  Tensor s(SEATRT_DTYPE_BF16, {5, 7});
  args = ew(SEATRT_EW_SCALE, a.get(), nullptr, -0.5f, s.get());
  cpu::elementwise(ctx(), args);
  expected.clear();
  for (int64_t i = 0; i < a.numel(); ++i) expected.push_back(a.at(i) * -0.5);
  CHECK(test::max_rel_err(s.values(), expected) < 1.0 / 256);
}

TEST_CASE("elementwise copy converts dtypes with round-to-nearest-even") {
  std::mt19937 rng(13);
  Tensor a = test::random_tensor(rng, SEATRT_DTYPE_F32, {64, 33}, -1000, 1000);
  a.set(0, 1.0 + std::ldexp(1.0, -8));  // a bf16 tie
  Tensor out(SEATRT_DTYPE_BF16, {64, 33});
  auto args = ew(SEATRT_EW_COPY, a.get(), nullptr, 0.0f, out.get());
  cpu::elementwise(ctx(), args);
  for (int64_t i = 0; i < a.numel(); ++i) {
    REQUIRE(out.as<uint16_t>()[i] == test::bf16_nearest(static_cast<float>(a.at(i))));
  }
  Tensor f8(SEATRT_DTYPE_F8_E4M3, {64, 33});
  args = ew(SEATRT_EW_COPY, a.get(), nullptr, 0.0f, f8.get());
  cpu::elementwise(ctx(), args);
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double v = std::fabs(a.at(i)) > 448 ? std::copysign(448.0, a.at(i)) : a.at(i);
    REQUIRE(std::fabs(f8.at(i) - v) <= std::fabs(v) / 16 + std::ldexp(1.0, -10));
  }
}

TEST_CASE("elementwise rejects bad arguments with the op's name") {
  std::mt19937 rng(14);
  Tensor a = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, 8});
  Tensor b = test::random_tensor(rng, SEATRT_DTYPE_F32, {4});
  Tensor out(SEATRT_DTYPE_F32, {2, 8});
  Tensor wrong(SEATRT_DTYPE_F32, {2, 9});
  Tensor ints(SEATRT_DTYPE_I32, {2, 8});
  std::string msg;
  auto args = ew(SEATRT_EW_ADD, a.get(), b.get(), 0, out.get());
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("elementwise: b has shape [4]"));
  args = ew(SEATRT_EW_ADD, a.get(), nullptr, 0, out.get());
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("b is NULL"));
  args = ew(SEATRT_EW_SCALE, a.get(), nullptr, 1, wrong.get());
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
  args = ew(SEATRT_EW_SCALE, ints.get(), nullptr, 1, out.get());
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), args); }, &msg) == SEATRT_ERR_UNSUPPORTED);
  CHECK_THAT(msg, Catch::Contains("I32"));
  args = ew(SEATRT_EW_SOFTCAP, a.get(), nullptr, 0, out.get());
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
  // An op value this provider does not know may be another provider's.
  args = ew(99, a.get(), nullptr, 0, out.get());
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), args); }) == SEATRT_ERR_UNSUPPORTED);
  seatrt_tensor bad = a.desc();
  bad.strides[1] = 2;
  args = ew(SEATRT_EW_COPY, &bad, nullptr, 0, out.get());
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("not contiguous"));
  bad = a.desc();
  bad.shape[0] = int64_t{1} << 40;
  bad.shape[1] = int64_t{1} << 40;
  args = ew(SEATRT_EW_COPY, &bad, nullptr, 0, out.get());
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("impossible shape"));
  bad = a.desc();
  bad.ndim = 9;
  args = ew(SEATRT_EW_COPY, &bad, nullptr, 0, out.get());
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
}

TEST_CASE("embedding looks up scaled rows; ids outside the table are refused") {
  std::mt19937 rng(15);
  Tensor table = test::random_tensor(rng, SEATRT_DTYPE_BF16, {10, 16});
  Tensor ids = test::int_tensor(SEATRT_DTYPE_I32, {4}, {3, 0, 9, 3});
  Tensor out(SEATRT_DTYPE_F32, {4, 16});
  seatrt_embedding_args args{sizeof(seatrt_embedding_args), ids.get(), table.get(), 53.0f, out.get()};
  cpu::embedding(ctx(), args);
  std::vector<double> expected;
  for (int64_t id : {3, 0, 9, 3}) {
    for (int64_t c = 0; c < 16; ++c) expected.push_back(table.at(id * 16 + c) * 53.0);
  }
  CHECK(test::max_rel_err(out.values(), expected) == 0.0);
  ids.as<int32_t>()[2] = 10;
  std::string msg;
  CHECK(test::error_of([&] { cpu::embedding(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("ids[2] = 10"));
}

TEST_CASE("gather_rows copies rows by index, across dtypes") {
  std::mt19937 rng(16);
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {6, 2, 5});
  Tensor index = test::int_tensor(SEATRT_DTYPE_I32, {3}, {5, 0, 5});
  for (int32_t dtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    Tensor out(dtype, {3, 2, 5});
    seatrt_gather_rows_args args{sizeof(seatrt_gather_rows_args), x.get(), index.get(), out.get()};
    cpu::gather_rows(ctx(), args);
    std::vector<double> expected;
    for (int64_t r : {5, 0, 5}) {
      for (int64_t c = 0; c < 10; ++c) expected.push_back(x.at(r * 10 + c));
    }
    CHECK(test::max_rel_err(out.values(), expected) < (dtype == SEATRT_DTYPE_F32 ? 1e-12 : 1.0 / 256));
  }
  Tensor out(SEATRT_DTYPE_F32, {3, 2, 5});
  index.as<int32_t>()[1] = -1;
  seatrt_gather_rows_args args{sizeof(seatrt_gather_rows_args), x.get(), index.get(), out.get()};
  CHECK(test::error_of([&] { cpu::gather_rows(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);
}
