// A plan whose graph has two independent branches joined by a later node
// (a MoE layer's dense MLP and experts: the CUDA planner may run one on a
// second stream and join before the node that reads both).  The first
// branch is a chain of launches long enough that a missing join would let
// the joining node read its output before it is written (it starts as NaN
// bytes, which fail), for a plan made for one launch and one made for many.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "harness.hpp"

using namespace seatrt_test;

namespace {

constexpr int64_t kRows = 2048, kCols = 2816;

// Branch 1: y = x * 2, then y *= 1 twenty times (the delay).  Branch 2:
// w = x * 3.  Join: z = y + w.
void build(seatrt::sdk::GraphBuilder& g, const seatrt_tensor& x, seatrt_tensor& y, seatrt_tensor& w,
           seatrt_tensor& z) {
  g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_SCALE, &x, nullptr, 2.0f, &y), "dense/scale");
  for (int i = 0; i < 20; ++i)
    g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_SCALE, &y, nullptr, 1.0f, &y), "dense/keep " + std::to_string(i));
  g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_SCALE, &x, nullptr, 3.0f, &w), "experts/scale");
  g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_ADD, &y, &w, 0.0f, &z), "end/sum");
}

// z must be fl(fl(2x) + fl(3x)) everywhere.
void check_z(const std::vector<uint8_t>& x_raw, const seatrt_tensor& z) {
  const std::vector<float> x = decode(x_raw, SEATRT_DTYPE_F32), got = cuda().download_f32(z);
  REQUIRE(got.size() == x.size());
  size_t wrong = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float two = 2.0f * x[i], three = 3.0f * x[i], want = two + three;
    if (std::memcmp(&want, &got[i], sizeof want) != 0) ++wrong;
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("a plan joins independent branches before the node that reads both") {
  const std::vector<uint8_t> x_raw = random_values(kRows * kCols, SEATRT_DTYPE_F32);
  const std::vector<uint8_t> nan_bytes(static_cast<size_t>(kRows * kCols) * 4, 0xFF);
  const seatrt_tensor x = cuda().upload(x_raw.data(), x_raw.size(), SEATRT_DTYPE_F32, {kRows, kCols});
  for (int32_t launches : {1, 0}) {
    INFO("launches " << launches);
    seatrt_tensor y = cuda().upload(nan_bytes.data(), nan_bytes.size(), SEATRT_DTYPE_F32, {kRows, kCols});
    seatrt_tensor w = cuda().upload(nan_bytes.data(), nan_bytes.size(), SEATRT_DTYPE_F32, {kRows, kCols});
    seatrt_tensor z = cuda().upload(nan_bytes.data(), nan_bytes.size(), SEATRT_DTYPE_F32, {kRows, kCols});
    seatrt::sdk::GraphBuilder g;
    build(g, x, y, w, z);
    Plan plan(cuda(), g, "two branches", launches);
    for (int launch = 0; launch < (launches == 0 ? 3 : 1); ++launch) {
      plan.launch();
      cuda().sync();
      check_z(x_raw, z);
      // Poison the join's output so the next launch must write it again.
      ok(cuda().api().copy(cuda().ctx(), cuda().stream(), z.data, SEATRT_DEVICE_CUDA, nan_bytes.data(),
                           SEATRT_DEVICE_CPU, nan_bytes.size()),
         "poison z");
    }
  }
}
