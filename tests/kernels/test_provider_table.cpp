// The provider's C table: probe, options, memory, layouts, run/supports
// (statuses for bad arguments, the struct_size rule), and results that do
// not depend on the thread count.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <thread>

#include "fake_host.hpp"
#include "provider_table.hpp"
#include "seatrt/cpp/op_registry.hpp"
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
  // The CPU provider plans nothing: the host runs a graph's nodes in order.
  CHECK(api().plan == nullptr);
  CHECK(api().plan_launch == nullptr);
  CHECK(api().plan_destroy == nullptr);
  CHECK(api().plan_describe == nullptr);
  CHECK(api().supports != nullptr);
  CHECK(api().run != nullptr);
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

TEST_CASE("run returns statuses naming the problem, never crashes") {
  seatrt_kernel_context* ctx = make("threads = 2");
  std::string msg;
  CHECK(test::take_status(api().run(ctx, nullptr, nullptr), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("op is NULL"));
  seatrt_op op{sizeof op, SEATRT_OP_RMS_NORM, nullptr};
  CHECK(test::take_status(api().run(ctx, nullptr, &op), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("rms_norm: no args"));
  seatrt_linear_args linear{};
  linear.struct_size = sizeof linear;
  op = sdk::make_op<SEATRT_OP_LINEAR>(linear);
  CHECK(test::take_status(api().run(ctx, nullptr, &op), &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("linear: 'x' is required"));
  seatrt_moe_args moe{};
  moe.struct_size = sizeof moe;
  moe.num_experts = 2;
  op = sdk::make_op<SEATRT_OP_MOE>(moe);
  CHECK(test::take_status(api().run(ctx, nullptr, &op)) == SEATRT_ERR_INVALID_ARG);
  op.kind = 99;
  CHECK(test::take_status(api().run(ctx, nullptr, &op), &msg) == SEATRT_ERR_UNSUPPORTED);
  CHECK_THAT(msg, Catch::Contains("unknown op kind 99"));
  CHECK(api().supports(ctx, &op) == 0);
  CHECK(api().supports(ctx, nullptr) == 0);
  seatrt_linear_weight w{};
  CHECK(test::take_status(api().prepare_weight(ctx, &w)) == SEATRT_ERR_INVALID_ARG);
  op = seatrt_op{sizeof op, SEATRT_OP_SAMPLE, nullptr};
  CHECK(test::take_status(api().run(nullptr, nullptr, &op)) == SEATRT_ERR_INVALID_ARG);
  api().destroy(ctx);
}

TEST_CASE("run follows the struct_size rule: shorter reads zeros, longer must be zero beyond") {
  seatrt_kernel_context* ctx = make("threads = 2");
  std::mt19937 rng(73);
  Tensor x = test::random_tensor(rng, SEATRT_DTYPE_F32, {3, 8});
  Tensor w = test::random_tensor(rng, SEATRT_DTYPE_F32, {8});
  Tensor full(SEATRT_DTYPE_F32, {3, 8}), shorter(SEATRT_DTYPE_F32, {3, 8});
  // A caller compiled before weight_offset: the offset reads as 0.
  struct {
    seatrt_rms_norm_args args;
    unsigned char tail[16];
  } wide{};
  wide.args = {sizeof(seatrt_rms_norm_args), x.get(), w.get(), 1e-6f, full.get(), 0.0f};
  seatrt_op op = sdk::make_op<SEATRT_OP_RMS_NORM>(wide.args);
  REQUIRE(test::take_status(api().run(ctx, nullptr, &op)) == SEATRT_OK);
  seatrt_rms_norm_args old = wide.args;
  old.out = shorter.get();
  old.weight_offset = 5.0f;  // beyond the old struct_size: must not be read
  old.struct_size = offsetof(seatrt_rms_norm_args, weight_offset);
  op = sdk::make_op<SEATRT_OP_RMS_NORM>(old);
  CHECK(api().supports(ctx, &op) == 1);
  REQUIRE(test::take_status(api().run(ctx, nullptr, &op)) == SEATRT_OK);
  CHECK(test::bitwise_equal(full, shorter));
  // A newer caller's struct: zero bytes beyond are fine, set ones are not ours.
  wide.args.struct_size = sizeof wide;
  op = seatrt_op{sizeof op, SEATRT_OP_RMS_NORM, &wide};
  CHECK(api().supports(ctx, &op) == 1);
  CHECK(test::take_status(api().run(ctx, nullptr, &op)) == SEATRT_OK);
  wide.tail[3] = 1;
  CHECK(api().supports(ctx, &op) == 0);
  std::string msg;
  CHECK(test::take_status(api().run(ctx, nullptr, &op), &msg) == SEATRT_ERR_UNSUPPORTED);
  CHECK_THAT(msg, Catch::Contains("rms_norm"));
  api().destroy(ctx);
}

TEST_CASE("supports answers by kind, enum values, dtypes and devices without running") {
  seatrt_kernel_context* ctx = make("threads = 1");
  Tensor a(SEATRT_DTYPE_F32, {2, 4}), out(SEATRT_DTYPE_F32, {2, 4}), ints(SEATRT_DTYPE_I32, {2, 4});
  seatrt_elementwise_args ew{sizeof ew, SEATRT_EW_SIGMOID, a.get(), nullptr, 0.0f, out.get()};
  seatrt_op op = sdk::make_op<SEATRT_OP_ELEMENTWISE>(ew);
  CHECK(api().supports(ctx, &op) == 1);
  ew.op = SEATRT_EW_MUL_ROWS + 1;
  CHECK(api().supports(ctx, &op) == 0);
  ew.op = SEATRT_EW_ADD;
  ew.b = ints.get();
  CHECK(api().supports(ctx, &op) == 0);
  ew.b = a.get();
  CHECK(api().supports(ctx, &op) == 1);
  seatrt_tensor on_gpu = a.desc();
  on_gpu.device.kind = SEATRT_DEVICE_CUDA;
  ew.a = &on_gpu;
  CHECK(api().supports(ctx, &op) == 0);
  ew.a = a.get();
  ew.out = nullptr;  // required
  CHECK(api().supports(ctx, &op) == 0);
  // Every 2.0 kind is known; a kind past the table is not.
  for (int32_t kind = SEATRT_OP_ELEMENTWISE; kind < SEATRT_OP_KIND_END_2_0; ++kind) {
    CHECK(sdk::op_info(kind) != nullptr);
  }
  seatrt_op unknown{sizeof unknown, SEATRT_OP_KIND_END_2_0, &ew};
  CHECK(api().supports(ctx, &unknown) == 0);
  seatrt_router_topk_args router{};
  router.struct_size = sizeof router;
  Tensor logits(SEATRT_DTYPE_F32, {1, 4}), ids(SEATRT_DTYPE_I32, {1, 2}), weights(SEATRT_DTYPE_F32, {1, 2});
  router.logits = logits.get();
  router.ids = ids.get();
  router.weights = weights.get();
  router.top_k = 2;
  router.scoring = SEATRT_ROUTER_SIGMOID;
  op = sdk::make_op<SEATRT_OP_ROUTER_TOPK>(router);
  CHECK(api().supports(ctx, &op) == 1);
  router.scoring = 7;
  CHECK(api().supports(ctx, &op) == 0);
  std::string msg;
  CHECK(test::take_status(api().run(ctx, nullptr, &op), &msg) == SEATRT_ERR_UNSUPPORTED);
  CHECK_THAT(msg, Catch::Contains("scoring"));
  api().destroy(ctx);
}

TEST_CASE("sample runs through run, logit bias included") {
  seatrt_kernel_context* ctx = make("threads = 2");
  Tensor logits(SEATRT_DTYPE_F32, {1, 4});
  for (int64_t i = 0; i < 4; ++i) logits.set(i, i == 1 ? 1.0 : 0.0);
  const int32_t bias_ids[] = {2};
  const float bias_values[] = {2.0f};
  seatrt_sampling_row row{};
  row.struct_size = sizeof row;
  row.top_p = 1.0f;
  row.repetition_penalty = 1.0f;
  row.bias_ids = bias_ids;
  row.bias_values = bias_values;
  row.num_bias = 1;
  int32_t token = -1;
  seatrt_sample_args args{};
  args.struct_size = sizeof args;
  args.logits = logits.get();
  args.rows = &row;
  args.token = &token;
  const seatrt_op op = sdk::make_op<SEATRT_OP_SAMPLE>(args);
  CHECK(api().supports(ctx, &op) == 1);
  REQUIRE(test::take_status(api().run(ctx, nullptr, &op)) == SEATRT_OK);
  CHECK(token == 2);  // greedy over the biased logits
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
    cpu::moe(ctx, args);
    Tensor lin(SEATRT_DTYPE_F32, {tokens, inter});
    seatrt_linear_args largs{sizeof largs, x.get(), &gate[0], lin.get(), nullptr};
    cpu::linear(ctx, largs);
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
  seatrt_linear_args args{sizeof args, x.get(), &w.weight, expected.get(), nullptr};
  cpu::linear(ctx, args);
  std::vector<Tensor> outs(2, Tensor(SEATRT_DTYPE_F32, {6, 96}));
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      for (int iter = 0; iter < 25; ++iter) {
        seatrt_linear_args a{sizeof a, x.get(), &w.weight, outs[i].get(), nullptr};
        cpu::linear(ctx, a);
        if (std::memcmp(outs[i].bytes(), expected.bytes(), 6 * 96 * 4) != 0) ++mismatches[i];
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(mismatches[0] == 0);
  CHECK(mismatches[1] == 0);
}
