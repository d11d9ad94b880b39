// stream_wait (ABI 1.3) on the CUDA provider: work on a second stream sees
// what the first stream wrote before the call, eagerly and inside a graph
// captured across the two streams.  The first stream's part is a chain of
// launches long enough that a missing wait would let the second stream read
// the output before it is written (it starts as NaN bytes, which fail).
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "harness.hpp"

using namespace seatrt_test;

namespace {

constexpr int64_t kRows = 2048, kCols = 2816;

// On `first`: y = x * 2, then y *= 1 twenty times (the delay).  On
// `second`, after waiting for `first`: z = y + x.
void enqueue(seatrt_stream first, seatrt_stream second, const seatrt_tensor& x, seatrt_tensor& y,
             seatrt_tensor& z) {
  const auto& a = cuda().api();
  auto scale = ew(SEATRT_EW_SCALE, &x, nullptr, 2.0f, &y);
  ok(a.elementwise(cuda().ctx(), first, &scale), "y = 2x");
  auto keep = ew(SEATRT_EW_SCALE, &y, nullptr, 1.0f, &y);
  for (int i = 0; i < 20; ++i) ok(a.elementwise(cuda().ctx(), first, &keep), "y *= 1");
  ok(a.stream_wait(cuda().ctx(), second, first), "stream_wait (fork)");
  auto add = ew(SEATRT_EW_ADD, &y, &x, 0.0f, &z);
  ok(a.elementwise(cuda().ctx(), second, &add), "z = y + x");
}

// z must be fl(fl(2x) + x) everywhere.
void check_z(const std::vector<uint8_t>& x_raw, const seatrt_tensor& z) {
  const std::vector<float> x = decode(x_raw, SEATRT_DTYPE_F32), got = cuda().download_f32(z);
  REQUIRE(got.size() == x.size());
  size_t wrong = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = 2.0f * x[i] + x[i];
    if (std::memcmp(&want, &got[i], sizeof want) != 0) ++wrong;
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("stream_wait orders a second stream after the first, eagerly and in a graph") {
  const auto& a = cuda().api();
  REQUIRE(SEATRT_HAS_FIELD(&a, seatrt_kernel_api, stream_wait));
  REQUIRE(a.stream_wait != nullptr);
  seatrt_stream side = nullptr;
  ok(a.stream_create(cuda().ctx(), &side), "stream_create");
  const std::vector<uint8_t> x_raw = random_values(kRows * kCols, SEATRT_DTYPE_F32);
  const std::vector<uint8_t> nan_bytes(static_cast<size_t>(kRows * kCols) * 4, 0xFF);
  const seatrt_tensor x = cuda().upload(x_raw.data(), x_raw.size(), SEATRT_DTYPE_F32, {kRows, kCols});

  SECTION("eager: the side stream reads y after the main stream wrote it") {
    seatrt_tensor y = cuda().upload(nan_bytes.data(), nan_bytes.size(), SEATRT_DTYPE_F32, {kRows, kCols});
    seatrt_tensor z = cuda().upload(nan_bytes.data(), nan_bytes.size(), SEATRT_DTYPE_F32, {kRows, kCols});
    enqueue(cuda().stream(), side, x, y, z);
    ok(a.stream_sync(cuda().ctx(), side), "sync side");
    check_z(x_raw, z);
  }

  SECTION("graph: a capture forks to the side stream and joins back") {
    REQUIRE(a.graph_begin != nullptr);
    seatrt_tensor y = cuda().upload(nan_bytes.data(), nan_bytes.size(), SEATRT_DTYPE_F32, {kRows, kCols});
    seatrt_tensor z = cuda().upload(nan_bytes.data(), nan_bytes.size(), SEATRT_DTYPE_F32, {kRows, kCols});
    ok(a.graph_begin(cuda().ctx(), cuda().stream()), "graph_begin");
    enqueue(cuda().stream(), side, x, y, z);
    ok(a.stream_wait(cuda().ctx(), cuda().stream(), side), "stream_wait (join)");
    seatrt_graph* g = nullptr;
    ok(a.graph_end(cuda().ctx(), cuda().stream(), &g), "graph_end");
    ok(a.graph_launch(cuda().ctx(), cuda().stream(), g), "graph_launch");
    ok(a.stream_sync(cuda().ctx(), cuda().stream()), "sync");
    check_z(x_raw, z);
    a.graph_destroy(cuda().ctx(), g);
  }

  SECTION("a stream waiting on itself is a no-op") {
    CHECK(code_of(a.stream_wait(cuda().ctx(), side, side)) == SEATRT_OK);
  }
  a.stream_destroy(cuda().ctx(), side);
}
