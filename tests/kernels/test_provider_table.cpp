// The provider's C table: probe, options, memory, layouts, statuses for bad
// arguments, and results that do not depend on the thread count.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <thread>

#include "fake_host.hpp"
#include "provider_table.hpp"
#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;

namespace {

const seatrt_kernel_api& api() {
  static const bool initialised = [] {
    REQUIRE(cpu::plugin_descriptor().initialize(test::fake_host()) == nullptr);
    return true;
  }();
  (void)initialised;
  return cpu::kernel_api();
}

seatrt_kernel_context* make(const char* options) {
  seatrt_kernel_context* ctx = nullptr;
  REQUIRE(test::take_status(api().create(options, 0, &ctx)) == SEATRT_OK);
  return ctx;
}

}  // namespace

TEST_CASE("descriptor and probe") {
  const seatrt_plugin& p = cpu::plugin_descriptor();
  CHECK(std::string(p.name) == "cpu");
  CHECK(p.kinds == SEATRT_KIND_KERNELS);
  CHECK(p.abi_major == SEATRT_ABI_MAJOR);
  CHECK(p.kernels == &api());
  CHECK(api().device_kind == SEATRT_DEVICE_CPU);
  seatrt_kernel_probe probe{};
  probe.struct_size = sizeof probe;
  REQUIRE(test::take_status(api().probe(&probe)) == SEATRT_OK);
  CHECK(probe.score == 1);
  CHECK_THAT(std::string(probe.detail), Catch::Contains("threads"));
  CHECK(api().graph_begin == nullptr);
  CHECK(api().graph_end == nullptr);
  CHECK(api().graph_launch == nullptr);
  CHECK(api().graph_destroy == nullptr);
}

TEST_CASE("create reads [kernels.options] and refuses bad ones with a named problem") {
  seatrt_kernel_context* ctx = make("threads = 3");
  api().destroy(ctx);
  api().destroy(make(""));
  api().destroy(make(nullptr));
  std::string msg;
  seatrt_kernel_context* out = nullptr;
  CHECK(test::take_status(api().create("thread = 3", 0, &out), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("thread") && Catch::Contains("threads"));
  CHECK(test::take_status(api().create("threads = 0", 0, &out), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK(test::take_status(api().create("threads = \"many\"", 0, &out), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK(test::take_status(api().create("threads = = 2", 0, &out), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("line 1"));
  CHECK(test::take_status(api().create("", 1, &out), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK(out == nullptr);
}

TEST_CASE("memory: 256-byte aligned host memory, memcpy copies, no-op streams") {
  seatrt_kernel_context* ctx = make("threads = 2");
  void* p = nullptr;
  REQUIRE(test::take_status(api().alloc(ctx, 1000, &p)) == SEATRT_OK);
  CHECK(reinterpret_cast<uintptr_t>(p) % 256 == 0);
  const char text[] = "seatrt";
  seatrt_stream stream = nullptr;
  REQUIRE(test::take_status(api().stream_create(ctx, &stream)) == SEATRT_OK);
  CHECK(stream != nullptr);
  REQUIRE(test::take_status(api().copy(ctx, stream, p, SEATRT_DEVICE_CPU, text, SEATRT_DEVICE_CPU, sizeof text)) == SEATRT_OK);
  CHECK(std::memcmp(p, text, sizeof text) == 0);
  REQUIRE(test::take_status(api().memset_zero(ctx, stream, p, 4)) == SEATRT_OK);
  CHECK(static_cast<char*>(p)[3] == 0);
  CHECK(static_cast<char*>(p)[4] == 'r');
  CHECK(test::take_status(api().copy(ctx, stream, p, SEATRT_DEVICE_CUDA, text, SEATRT_DEVICE_CPU, 4)) == SEATRT_ERR_UNSUPPORTED);
  CHECK(test::take_status(api().stream_sync(ctx, stream)) == SEATRT_OK);
  size_t free_bytes = 0, total_bytes = 0;
  REQUIRE(test::take_status(api().memory_info(ctx, &free_bytes, &total_bytes)) == SEATRT_OK);
  CHECK(total_bytes > 0);
  CHECK(free_bytes <= total_bytes);
  api().stream_destroy(ctx, stream);
  api().free_memory(ctx, p);
  int32_t layouts[4] = {0, 0, 0, 0};
  int32_t count = 0;
  REQUIRE(test::take_status(api().weight_layouts(ctx, SEATRT_WFMT_NVFP4, layouts, 4, &count)) == SEATRT_OK);
  CHECK(count == 1);
  CHECK(layouts[0] == SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR);
  REQUIRE(test::take_status(api().weight_layouts(ctx, SEATRT_WFMT_DENSE, layouts, 4, &count)) == SEATRT_OK);
  CHECK(layouts[0] == SEATRT_LAYOUT_DENSE_ROW_MAJOR);
  CHECK(test::take_status(api().weight_layouts(ctx, 9, layouts, 4, &count)) == SEATRT_ERR_UNSUPPORTED);
  api().destroy(ctx);
}

TEST_CASE("operations through the table return statuses, never crash") {
  seatrt_kernel_context* ctx = make("threads = 2");
  std::string msg;
  CHECK(test::take_status(api().rms_norm(ctx, nullptr, nullptr), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("rms_norm: args is NULL"));
  seatrt_linear_args linear{sizeof linear, nullptr, nullptr, nullptr};
  CHECK(test::take_status(api().linear(ctx, nullptr, &linear), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("linear: x is NULL"));
  seatrt_moe_args moe{};
  moe.struct_size = sizeof moe;
  moe.num_experts = 2;
  CHECK(test::take_status(api().moe(ctx, nullptr, &moe)) == SEATRT_ERR_INVALID_ARG);
  seatrt_linear_weight w{};
  CHECK(test::take_status(api().prepare_weight(ctx, &w)) == SEATRT_ERR_INVALID_ARG);
  CHECK(test::take_status(api().sample(nullptr, nullptr, nullptr)) == SEATRT_ERR_INVALID_ARG);
  // The ABI 1.4 slots are filled and checked like every other.
  REQUIRE(api().struct_size >= offsetof(seatrt_kernel_api, add_rms_norm_pair) + sizeof(api().add_rms_norm_pair));
  CHECK(test::take_status(api().qkv_norm_rope_store(ctx, nullptr, nullptr), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("qkv_norm_rope_store: args is NULL"));
  seatrt_add_rms_norm_pair_args pair{};
  pair.struct_size = sizeof pair;
  CHECK(test::take_status(api().add_rms_norm_pair(ctx, nullptr, &pair), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("add_rms_norm_pair: a is NULL"));
  // So is the ABI 1.5 one.
  REQUIRE(api().struct_size >= offsetof(seatrt_kernel_api, route) + sizeof(api().route));
  seatrt_route_args route{};
  route.struct_size = sizeof route;
  CHECK(test::take_status(api().route(ctx, nullptr, &route), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("route: x is NULL"));
  api().destroy(ctx);
}

TEST_CASE("results are bitwise identical with 1 and 5 threads") {
  std::mt19937 rng(71);
  const int64_t tokens = 9, hidden = 64, inter = 32, experts = 6, k = 2;
  std::vector<test::Nvfp4Weight> w;
  std::vector<seatrt_linear_weight> gate, up, down;
  for (int64_t e = 0; e < experts; ++e) {
    w.push_back(test::random_nvfp4(rng, inter, hidden, 100.0f));
    w.push_back(test::random_nvfp4(rng, inter, hidden, 100.0f));
    w.push_back(test::random_nvfp4(rng, hidden, inter, 100.0f));
  }
  for (int64_t e = 0; e < experts; ++e) {
    gate.push_back(w[static_cast<size_t>(3 * e)].weight);
    up.push_back(w[static_cast<size_t>(3 * e + 1)].weight);
    down.push_back(w[static_cast<size_t>(3 * e + 2)].weight);
  }
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {tokens, hidden});
  std::vector<int64_t> id_values;
  for (int64_t i = 0; i < tokens * k; ++i) id_values.push_back(static_cast<int64_t>(rng() % experts));
  Tensor ids = test::int_tensor(SEATRT_DTYPE_I32, {tokens, k}, id_values);
  Tensor weights = test::random_tensor(rng, SEATRT_DTYPE_F32, {tokens, k}, 0, 1);
  std::vector<std::vector<unsigned char>> results;
  for (int32_t threads : {1, 5}) {
    cpu::Context ctx(threads);
    Tensor out(SEATRT_DTYPE_F32, {tokens, hidden});
    seatrt_moe_args args{sizeof(seatrt_moe_args), SEATRT_ACT_GELU_TANH, static_cast<int32_t>(experts), x.get(), ids.get(),
                         weights.get(), gate.data(), up.data(), down.data(), out.get()};
    cpu::moe(ctx, &args);
    Tensor lin(SEATRT_DTYPE_F32, {tokens, inter});
    seatrt_linear_args largs{sizeof largs, x.get(), &gate[0], lin.get()};
    cpu::linear(ctx, &largs);
    std::vector<unsigned char> bytes(out.bytes(), out.bytes() + out.numel() * 4);
    bytes.insert(bytes.end(), lin.bytes(), lin.bytes() + lin.numel() * 4);
    results.push_back(bytes);
  }
  CHECK(results[0] == results[1]);
}

TEST_CASE("one context used from two threads at once gives the same results") {
  std::mt19937 rng(72);
  test::Nvfp4Weight w = test::random_nvfp4(rng, 96, 128, 50.0f);
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {6, 128});
  cpu::Context ctx(3);
  Tensor expected(SEATRT_DTYPE_F32, {6, 96});
  seatrt_linear_args args{sizeof args, x.get(), &w.weight, expected.get()};
  cpu::linear(ctx, &args);
  std::vector<Tensor> outs(2, Tensor(SEATRT_DTYPE_F32, {6, 96}));
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      for (int iter = 0; iter < 25; ++iter) {
        seatrt_linear_args a{sizeof a, x.get(), &w.weight, outs[i].get()};
        cpu::linear(ctx, &a);
        if (std::memcmp(outs[i].bytes(), expected.bytes(), 6 * 96 * 4) != 0) ++mismatches[i];
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(mismatches[0] == 0);
  CHECK(mismatches[1] == 0);
}
