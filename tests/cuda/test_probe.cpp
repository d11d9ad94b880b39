// Runs everywhere (CI has nvcc but no GPU): loading the CUDA provider and
// probing it never crashes; without a device the probe answers score 0 with
// a reason, and create() fails with a status instead of aborting.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "harness.hpp"

namespace seatrt_test {
Provider& cuda() {
  static Provider p(std::getenv("SEATRT_CUDA_PLUGIN") ? std::getenv("SEATRT_CUDA_PLUGIN") : SEATRT_CUDA_PLUGIN_PATH, "cuda");
  return p;
}
Provider& cpu() { return cuda(); }
}  // namespace seatrt_test

using namespace seatrt_test;

TEST_CASE("probe answers without crashing, and a score matches the detail") {
  const seatrt_kernel_probe p = cuda().probe();
  REQUIRE(p.detail != nullptr);
  const std::string d = p.detail;
  if (p.score == 0) {
    INFO(d);
    CHECK((d == "no CUDA driver" || d == "no device" || d.find("sm_90a only") != std::string::npos ||
           d.rfind("CUDA unavailable", 0) == 0));
  } else {
    CHECK(p.score >= 100);
    CHECK(d.find("sm_90") != std::string::npos);
  }
}

TEST_CASE("create fails cleanly without a device, and options are checked") {
  const seatrt_kernel_probe p = cuda().probe();
  seatrt_kernel_context* ctx = nullptr;
  if (p.score == 0) {
    CHECK(code_of(cuda().api().create("", 0, &ctx)) != SEATRT_OK);
    CHECK(ctx == nullptr);
  } else {
    CHECK(code_of(cuda().api().create("fast = true", 0, &ctx)) == SEATRT_ERR_INVALID_ARG);
    CHECK(code_of(cuda().api().create("", 9999, &ctx)) == SEATRT_ERR_INVALID_ARG);
  }
}

TEST_CASE("the weight layouts are listed without a device") {
  int32_t ids[4] = {};
  int32_t n = 0;
  REQUIRE(code_of(cuda().api().weight_layouts(nullptr, SEATRT_WFMT_NVFP4, ids, 4, &n)) == SEATRT_OK);
  REQUIRE(n == 2);
  CHECK(ids[0] == SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR);
  CHECK(ids[1] == SEATRT_LAYOUT_NVFP4_SM90_TILED);
  CHECK(code_of(cuda().api().weight_layouts(nullptr, 42, ids, 4, &n)) == SEATRT_ERR_UNSUPPORTED);
}

TEST_CASE("every slot of the table is filled") {
  const seatrt_kernel_api& a = cuda().api();
  CHECK(a.device_kind == SEATRT_DEVICE_CUDA);
  const void* slots[] = {reinterpret_cast<const void*>(a.probe), reinterpret_cast<const void*>(a.linear),
                         reinterpret_cast<const void*>(a.moe), reinterpret_cast<const void*>(a.attention),
                         reinterpret_cast<const void*>(a.sample), reinterpret_cast<const void*>(a.graph_launch)};
  for (const void* s : slots) CHECK(s != nullptr);
}
