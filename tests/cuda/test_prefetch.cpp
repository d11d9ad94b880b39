// prefetch_weights (ABI 1.6) on the CUDA provider: a hint that must change
// nothing.  A Linear (NVFP4 in the provider's tiled layout, and dense BF16)
// run after the weights were prefetched -- eagerly and inside a captured
// graph between two Linears that depend on each other -- gives the bits it
// gave before; bad arguments are refused naming the problem; an empty list
// is a no-op.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "fixtures_gpu.hpp"
#include "harness.hpp"

using namespace seatrt_test;

namespace {

bool all_finite(const std::vector<float>& v) {
  for (float f : v)
    if (!std::isfinite(f)) return false;
  return true;
}

seatrt_status* prefetch(const std::vector<const seatrt_linear_weight*>& weights, int32_t count) {
  seatrt_prefetch_weights_args a{};
  a.struct_size = sizeof a;
  a.count = count;
  a.weights = weights.empty() ? nullptr : weights.data();
  return cuda().api().prefetch_weights(cuda().ctx(), cuda().stream(), &a);
}

}  // namespace

TEST_CASE("prefetch_weights changes no result, eagerly or in a graph, and refuses bad arguments", "[prefetch]") {
  const seatrt_kernel_api& a = cuda().api();
  REQUIRE(SEATRT_HAS_FIELD(&a, seatrt_kernel_api, prefetch_weights));
  REQUIRE(a.prefetch_weights != nullptr);
  const int64_t n = 2816, k = 4096, rows = 3;
  const HostNvfp4 h = random_nvfp4(n, k);
  const seatrt_linear_weight w4 = nvfp4_weight(cuda(), h, /*tiled=*/true);
  const seatrt_linear_weight wd = dense_bf16_weight(cuda(), random_values(k * n, SEATRT_DTYPE_BF16, 0.05f), k, n);
  Pair x = both_random(SEATRT_DTYPE_F32, {rows, k}, 1.0f);
  Pair mid = both_empty(SEATRT_DTYPE_F32, {rows, n}), out = both_empty(SEATRT_DTYPE_F32, {rows, k});
  seatrt_linear_args l1{sizeof l1, &x.cuda, &w4, &mid.cuda};
  seatrt_linear_args l2{sizeof l2, &mid.cuda, &wd, &out.cuda};
  auto chain = [&] {
    ok(a.linear(cuda().ctx(), cuda().stream(), &l1), "linear nvfp4");
    ok(a.linear(cuda().ctx(), cuda().stream(), &l2), "linear dense");
  };
  chain();
  const std::vector<uint8_t> want = cuda().download(out.cuda);
  REQUIRE(all_finite(cuda().download_f32(out.cuda)));

  // Eager: prefetch between the two dependent Linears.
  const std::vector<uint8_t> poison(want.size(), 0xFF);
  ok(a.copy(cuda().ctx(), cuda().stream(), out.cuda.data, SEATRT_DEVICE_CUDA, poison.data(), SEATRT_DEVICE_CPU,
            poison.size()),
     "poison");
  ok(a.linear(cuda().ctx(), cuda().stream(), &l1), "linear nvfp4");
  ok(prefetch({&wd, &w4}, 2), "prefetch");
  ok(a.linear(cuda().ctx(), cuda().stream(), &l2), "linear dense");
  CHECK(cuda().download(out.cuda) == want);

  // In a graph: the prefetch node between them keeps their order.
  ok(a.graph_begin(cuda().ctx(), cuda().stream()), "graph_begin");
  ok(a.linear(cuda().ctx(), cuda().stream(), &l1), "linear nvfp4 (captured)");
  ok(prefetch({&wd, &w4}, 2), "prefetch (captured)");
  ok(a.linear(cuda().ctx(), cuda().stream(), &l2), "linear dense (captured)");
  seatrt_graph* g = nullptr;
  ok(a.graph_end(cuda().ctx(), cuda().stream(), &g), "graph_end");
  for (int rep = 0; rep < 3; ++rep) {
    ok(a.copy(cuda().ctx(), cuda().stream(), out.cuda.data, SEATRT_DEVICE_CUDA, poison.data(), SEATRT_DEVICE_CPU,
              poison.size()),
       "poison");
    ok(a.graph_launch(cuda().ctx(), cuda().stream(), g), "graph_launch");
    CHECK(cuda().download(out.cuda) == want);
  }
  a.graph_destroy(cuda().ctx(), g);

  ok(prefetch({}, 0), "an empty list");
  CHECK(code_of(prefetch({&w4}, 9)) == SEATRT_ERR_INVALID_ARG);
  CHECK(code_of(prefetch({nullptr}, 1)) == SEATRT_ERR_INVALID_ARG);
  CHECK(code_of(prefetch({}, 1)) == SEATRT_ERR_INVALID_ARG);
}
