// The CUDA provider's per-op timer ([kernels.options] profile = true): ops
// run eagerly are counted per key in the table written at context destroy;
// a plan's launches are not.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include "harness.hpp"
#include "seatrt/cpp/tensor.hpp"

using namespace seatrt_test;

namespace {

std::string read_and_remove(const std::string& file) {
  std::string text;
  if (std::FILE* f = std::fopen(file.c_str(), "r")) {
    for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
    std::fclose(f);
  }
  std::remove(file.c_str());
  return text;
}

}  // namespace

TEST_CASE("profile: eager ops are counted per key, a plan's launches are not") {
  const seatrt_kernel_api& a = cuda().api();
  const std::string file = (std::filesystem::temp_directory_path() / "seatrt_cuda_profile_test.tsv").string();
  std::remove(file.c_str());
  seatrt_kernel_context* ctx = nullptr;
  REQUIRE(code_of(a.create(("profile = true\nprofile_file = \"" + file + "\"").c_str(), 0, &ctx)) == SEATRT_OK);
  REQUIRE(ctx != nullptr);
  seatrt_stream stream = nullptr;
  REQUIRE(code_of(a.stream_create(ctx, &stream)) == SEATRT_OK);
  const size_t bytes = 2 * 4 * 256 * sizeof(float);
  void* buf = nullptr;
  REQUIRE(code_of(a.alloc(ctx, bytes, &buf)) == SEATRT_OK);
  REQUIRE(code_of(a.memset_zero(ctx, stream, buf, bytes)) == SEATRT_OK);
  seatrt_tensor x = seatrt::sdk::contiguous_tensor(buf, SEATRT_DTYPE_F32, {4, 256}, SEATRT_DEVICE_CUDA);
  seatrt_tensor y = seatrt::sdk::contiguous_tensor(static_cast<float*>(buf) + 4 * 256, SEATRT_DTYPE_F32, {4, 256},
                                                   SEATRT_DEVICE_CUDA);
  seatrt_elementwise_args add{};
  add.struct_size = sizeof add;
  add.op = SEATRT_EW_ADD;
  add.a = &x;
  add.b = &y;
  add.out = &x;
  const seatrt_op op = seatrt::sdk::make_op<SEATRT_OP_ELEMENTWISE>(add);
  for (int i = 0; i < 3; ++i) REQUIRE(code_of(a.run(ctx, stream, &op)) == SEATRT_OK);
  // Planned: the same op twice, the plan launched twice.
  seatrt::sdk::GraphBuilder g;
  g.add<SEATRT_OP_ELEMENTWISE>(add, "add 1");
  g.add<SEATRT_OP_ELEMENTWISE>(add, "add 2");
  const seatrt_op_graph graph = g.graph("two adds", 0);
  seatrt_plan* plan = nullptr;
  REQUIRE(code_of(a.plan(ctx, &graph, &plan)) == SEATRT_OK);
  REQUIRE(plan != nullptr);
  REQUIRE(code_of(a.plan_launch(ctx, stream, plan)) == SEATRT_OK);
  REQUIRE(code_of(a.plan_launch(ctx, stream, plan)) == SEATRT_OK);
  REQUIRE(code_of(a.stream_sync(ctx, stream)) == SEATRT_OK);
  a.plan_destroy(ctx, plan);
  a.stream_destroy(ctx, stream);
  a.free_memory(ctx, buf);
  a.destroy(ctx);  // writes the table
  const std::string text = read_and_remove(file);
  INFO(text);
  CHECK(text.rfind("# stream\top", 0) == 0);
  // stream 0, elementwise, add, out 0, in 0, rows 4, count 3 (the eager
  // calls only), then the times.
  CHECK(text.find("\n0\telementwise\tadd\t0\t0\t4\t3\t") != std::string::npos);
  CHECK(text.find("\telementwise\t", text.find("\telementwise\t") + 1) == std::string::npos);  // one row only
}

TEST_CASE("profile: off by default, no table written") {
  const seatrt_kernel_api& a = cuda().api();
  const std::string file = (std::filesystem::temp_directory_path() / "seatrt_cuda_profile_off.tsv").string();
  std::remove(file.c_str());
  seatrt_kernel_context* ctx = nullptr;
  REQUIRE(code_of(a.create(("profile = false\nprofile_file = \"" + file + "\"").c_str(), 0, &ctx)) == SEATRT_OK);
  a.destroy(ctx);
  CHECK(read_and_remove(file).empty());
}
