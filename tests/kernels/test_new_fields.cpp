// The argument checks of the ABI 2.0 kinds and fields (the values are
// tested against torch goldens in test_goldens.cpp): conv1d_causal and
// delta_rule sequences and states, rope sections, mul_rows, linear bias;
// and the stateful ops' results for 1 and 5 threads.
#include <catch2/catch.hpp>

#include <cstring>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;

namespace {

constexpr int32_t kF32 = SEATRT_DTYPE_F32, kI32 = SEATRT_DTYPE_I32;

cpu::Context& ctx() {
  static cpu::Context c(3);
  return c;
}

// A conv1d_causal batch: 2 sequences of 3 and 2 rows, C = 4, W = 3.
struct Conv {
  std::mt19937 rng{81};
  Tensor x = test::random_tensor(rng, kF32, {5, 4});
  Tensor weight = test::random_tensor(rng, kF32, {4, 3});
  Tensor state = test::random_tensor(rng, kF32, {3, 4, 2});
  Tensor index = test::int_tensor(kI32, {2}, {2, 0});
  Tensor starts = test::int_tensor(kI32, {3}, {0, 3, 5});
  Tensor out{kF32, {5, 4}};
  seatrt_conv1d_causal_args args{};
  Conv() {
    args.struct_size = sizeof args;
    args.activation = SEATRT_ACT_SILU;
    args.x = x.get();
    args.weight = weight.get();
    args.state = state.get();
    args.state_index = index.get();
    args.query_start = starts.get();
    args.num_seqs = 2;
    args.out = out.get();
  }
};

// A delta_rule batch: 2 sequences of 2 and 1 rows, Hk 1, Hv 2, Dk 4, Dv 3.
struct Delta {
  std::mt19937 rng{82};
  Tensor q = test::random_tensor(rng, kF32, {3, 1, 4});
  Tensor k = test::random_tensor(rng, kF32, {3, 1, 4});
  Tensor v = test::random_tensor(rng, kF32, {3, 2, 3});
  Tensor g = test::random_tensor(rng, kF32, {3, 2}, -1, 0);
  Tensor beta = test::random_tensor(rng, kF32, {3, 2}, 0, 1);
  Tensor state = test::random_tensor(rng, kF32, {2, 2, 4, 3});
  Tensor index = test::int_tensor(kI32, {2}, {1, 0});
  Tensor starts = test::int_tensor(kI32, {3}, {0, 2, 3});
  Tensor out{kF32, {3, 2, 3}};
  seatrt_delta_rule_args args{};
  Delta() {
    args.struct_size = sizeof args;
    args.l2_normalize = 1;
    args.q = q.get();
    args.k = k.get();
    args.v = v.get();
    args.g = g.get();
    args.beta = beta.get();
    args.state = state.get();
    args.state_index = index.get();
    args.query_start = starts.get();
    args.num_seqs = 2;
    args.scale = 0.5f;
    args.out = out.get();
  }
};

}  // namespace

TEST_CASE("conv1d_causal refuses bad sequences, states and activations, writing nothing") {
  Conv c;
  const Tensor state_before = c.state;
  std::string msg;
  Tensor twice = test::int_tensor(kI32, {2}, {1, 1});
  c.args.state_index = twice.get();
  CHECK(test::error_of([&] { cpu::conv1d_causal(ctx(), c.args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("state row 1 is used by two sequences"));
  Tensor outside = test::int_tensor(kI32, {2}, {0, 3});
  c.args.state_index = outside.get();
  CHECK(test::error_of([&] { cpu::conv1d_causal(ctx(), c.args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("state_index[1] = 3"));
  c.args.state_index = c.index.get();
  Tensor decreasing = test::int_tensor(kI32, {3}, {0, 4, 3});
  c.args.query_start = decreasing.get();
  CHECK(test::error_of([&] { cpu::conv1d_causal(ctx(), c.args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("query_start[2]"));
  c.args.query_start = c.starts.get();
  Tensor wrong_state(kF32, {3, 4, 3});
  c.args.state = wrong_state.get();
  CHECK(test::error_of([&] { cpu::conv1d_causal(ctx(), c.args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("state"));
  c.args.state = c.state.get();
  c.args.activation = SEATRT_ACT_GELU_TANH;
  CHECK(test::error_of([&] { cpu::conv1d_causal(ctx(), c.args); }) == SEATRT_ERR_UNSUPPORTED);
  c.args.activation = SEATRT_CONV_ACT_NONE;
  c.args.out = c.x.get();
  CHECK(test::error_of([&] { cpu::conv1d_causal(ctx(), c.args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("alias"));
  CHECK(test::bitwise_equal(c.state, state_before));
}

TEST_CASE("delta_rule refuses mismatched heads and states, writing nothing") {
  Delta d;
  const Tensor state_before = d.state;
  std::string msg;
  Tensor v3(kF32, {3, 3, 3});
  Tensor out3(kF32, {3, 3, 3});
  d.args.v = v3.get();
  d.args.out = out3.get();
  Tensor q2(kF32, {3, 2, 4}), k2(kF32, {3, 2, 4});
  d.args.q = q2.get();
  d.args.k = k2.get();
  CHECK(test::error_of([&] { cpu::delta_rule(ctx(), d.args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("multiple"));
  Delta e;
  Tensor state_dv(kF32, {2, 2, 4, 4});
  e.args.state = state_dv.get();
  CHECK(test::error_of([&] { cpu::delta_rule(ctx(), e.args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("state"));
  e.args.state = e.state.get();
  Tensor g_bf16(SEATRT_DTYPE_BF16, {3, 2});
  e.args.g = g_bf16.get();
  CHECK(test::error_of([&] { cpu::delta_rule(ctx(), e.args); }) == SEATRT_ERR_UNSUPPORTED);
  CHECK(test::bitwise_equal(d.state, state_before));
}

TEST_CASE("conv1d_causal and delta_rule give the same bits with 1 and 5 threads") {
  std::vector<std::vector<double>> results;
  for (int32_t threads : {1, 5}) {
    cpu::Context c(threads);
    Conv conv;
    cpu::conv1d_causal(c, conv.args);
    Delta delta;
    cpu::delta_rule(c, delta.args);
    std::vector<double> all = conv.out.values();
    for (const Tensor* t : {&conv.state, &delta.out, &delta.state}) {
      const auto v = t->values();
      all.insert(all.end(), v.begin(), v.end());
    }
    results.push_back(all);
  }
  CHECK(results[0] == results[1]);
}

TEST_CASE("rope sections must sum to D/2 and positions carry one column per section") {
  std::mt19937 rng(83);
  Tensor x = test::random_tensor(rng, kF32, {2, 1, 8});
  Tensor inv_freq = test::random_tensor(rng, kF32, {4}, 0, 1);
  Tensor pos2 = test::int_tensor(kI32, {2, 2}, {1, 2, 3, 4});
  Tensor pos1 = test::int_tensor(kI32, {2}, {1, 2});
  Tensor out(kF32, {2, 1, 8});
  seatrt_rope_args a{sizeof a, x.get(), pos2.get(), inv_freq.get(), out.get(), 2, {1, 3, 0, 0}};
  CHECK(test::error_of([&] { cpu::rope(ctx(), a); }) == SEATRT_OK);
  a.sections[1] = 2;
  std::string msg;
  CHECK(test::error_of([&] { cpu::rope(ctx(), a); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("sum to 3"));
  a.sections[1] = 3;
  a.positions = pos1.get();
  CHECK(test::error_of([&] { cpu::rope(ctx(), a); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("positions"));
  a.num_sections = SEATRT_ROPE_MAX_SECTIONS + 1;
  CHECK(test::error_of([&] { cpu::rope(ctx(), a); }) == SEATRT_ERR_INVALID_ARG);
}

TEST_CASE("mul_rows needs one factor per row; linear bias one value per output") {
  std::mt19937 rng(84);
  Tensor a = test::random_tensor(rng, kF32, {2, 3, 4});
  Tensor factors = test::random_tensor(rng, kF32, {6, 1});
  Tensor wrong = test::random_tensor(rng, kF32, {4});
  Tensor out(kF32, {2, 3, 4});
  seatrt_elementwise_args ew{sizeof ew, SEATRT_EW_MUL_ROWS, a.get(), factors.get(), 0.0f, out.get()};
  cpu::elementwise(ctx(), ew);
  for (int64_t i = 0; i < a.numel(); ++i) REQUIRE(out.at(i) == static_cast<double>(static_cast<float>(a.at(i) * factors.at(i / 4))));
  ew.b = wrong.get();
  std::string msg;
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), ew); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("one value per row"));
  ew.b = nullptr;
  CHECK(test::error_of([&] { cpu::elementwise(ctx(), ew); }) == SEATRT_ERR_INVALID_ARG);

  test::DenseWeight w = test::random_dense(rng, kF32, 5, 4, 1.0);
  Tensor x = test::random_tensor(rng, kF32, {2, 4});
  Tensor y(kF32, {2, 5});
  Tensor bias4(kF32, {4});
  seatrt_linear_args la{sizeof la, x.get(), &w.weight, y.get(), bias4.get()};
  CHECK(test::error_of([&] { cpu::linear(ctx(), la); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("bias"));
}
