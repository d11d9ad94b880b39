// Runs everywhere (CI has nvcc but no GPU): loading the CUDA provider and
// probing it never crashes; without a device the probe answers score 0 with
// a reason, and create() fails with a status instead of aborting.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <stdexcept>
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

TEST_CASE("profile options are parsed before any device work: bad ones refused everywhere") {
  seatrt_kernel_context* ctx = nullptr;
  CHECK(code_of(cuda().api().create("profile = 1", 0, &ctx)) == SEATRT_ERR_INVALID_ARG);
  CHECK(code_of(cuda().api().create("profile_file = \"\"", 0, &ctx)) == SEATRT_ERR_INVALID_ARG);
  CHECK(code_of(cuda().api().create("profile = [", 0, &ctx)) == SEATRT_ERR_INVALID_ARG);
  CHECK(code_of(cuda().api().create("threads = 4", 0, &ctx)) == SEATRT_ERR_INVALID_ARG);
  CHECK(ctx == nullptr);
}

// The message of a refused create(), or "" when it succeeded (then the
// context is destroyed).
std::string create_error(const char* options) {
  seatrt_kernel_context* ctx = nullptr;
  try {
    ok(cuda().api().create(options, 0, &ctx), "create");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  cuda().api().destroy(ctx);
  return "";
}

TEST_CASE("prefill_bf16 is checked before any device work: bad values and unknown keys refused everywhere") {
  seatrt_kernel_context* ctx = nullptr;
  CHECK(code_of(cuda().api().create("prefill_bf16 = 1", 0, &ctx)) == SEATRT_ERR_INVALID_ARG);
  CHECK(code_of(cuda().api().create("prefill_bf16 = \"true\"", 0, &ctx)) == SEATRT_ERR_INVALID_ARG);
  CHECK(code_of(cuda().api().create("prefill_bf16 = true\nprofile = 2", 0, &ctx)) == SEATRT_ERR_INVALID_ARG);
  CHECK(code_of(cuda().api().create("prefill_bf16 = true\nprefill_fp8 = true", 0, &ctx)) == SEATRT_ERR_INVALID_ARG);
  CHECK(ctx == nullptr);
  const std::string bad_value = create_error("prefill_bf16 = 1");
  CHECK(bad_value.find("prefill_bf16 must be true or false") != std::string::npos);
  const std::string unknown = create_error("prefill_fp8 = true");
  CHECK(unknown.find("unknown option 'prefill_fp8'") != std::string::npos);
  CHECK(unknown.find("prefill_bf16") != std::string::npos);  // the known keys are listed
  const std::string not_toml = create_error("prefill_bf16 = [");
  CHECK(not_toml.find("not valid TOML") != std::string::npos);
  // The profile keys still reach the profile parser after prefill_bf16 is
  // taken out of the table.
  CHECK(create_error("prefill_bf16 = false\nprofile_file = \"\"").find("profile_file must be") != std::string::npos);
}

TEST_CASE("prefill_bf16 = true is accepted where there is a device") {
  if (cuda().probe().score == 0) return;  // create() needs a device; the refusals above run everywhere
  CHECK(create_error("prefill_bf16 = true") == "");
  CHECK(create_error("prefill_bf16 = false\nprofile = false") == "");
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
  CHECK(a.struct_size >= sizeof(seatrt_kernel_api));
  const void* slots[] = {reinterpret_cast<const void*>(a.probe),       reinterpret_cast<const void*>(a.supports),
                         reinterpret_cast<const void*>(a.run),         reinterpret_cast<const void*>(a.plan),
                         reinterpret_cast<const void*>(a.plan_launch), reinterpret_cast<const void*>(a.plan_destroy),
                         reinterpret_cast<const void*>(a.plan_describe)};
  for (const void* s : slots) CHECK(s != nullptr);
}

// The SM90_TILED repack is plain C++ (used by the quantization plugin), so
// it is checked here, on every machine.
#include <cmath>
#include <random>

#include "seatrt_cuda/nvfp4_sm90_tiled.hpp"

TEST_CASE("E4M3 decoding of known bytes") {
  CHECK(seatrt_cuda::e4m3_value(0x38) == 1.0f);
  CHECK(seatrt_cuda::e4m3_value(0xB8) == -1.0f);
  CHECK(seatrt_cuda::e4m3_value(0x7E) == 448.0f);
  CHECK(seatrt_cuda::e4m3_value(0x01) == std::ldexp(1.0f, -9));
  CHECK(seatrt_cuda::e4m3_value(0x3C) == 1.5f);
  CHECK(std::isnan(seatrt_cuda::e4m3_value(0x7F)));
}

TEST_CASE("SM90_TILED scales fold the global scale exactly") {
  std::mt19937& g = rng();  // seeded and printed by main
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<uint8_t> s(64);
    for (auto& b : s) {
      do b = static_cast<uint8_t>(g() & 0x7F); while (b == 0x7F);  // non-negative, not NaN
    }
    const float gs = std::ldexp(1.0f + static_cast<float>(g() % 1000) / 1000.0f, static_cast<int>(g() % 30) - 5);
    const auto t = seatrt_cuda::repack_nvfp4_sm90_tiled(s.data(), s.size(), gs);
    REQUIRE(t.bf16_scales.size() == s.size());
    CHECK(t.global_scale >= 1.0f);
    CHECK(t.global_scale < 2.0f);
    int j = 0;
    std::frexp(gs / t.global_scale, &j);  // gs / m is a power of two: 2^(j-1)
    CHECK(std::ldexp(t.global_scale, j - 1) == gs);
    for (size_t i = 0; i < s.size(); ++i) {
      const uint32_t bits = static_cast<uint32_t>(t.bf16_scales[i]) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      // scale_bf16 * 2^(j-1) is the E4M3 value again, exactly.
      CHECK(std::ldexp(v, j - 1) == seatrt_cuda::e4m3_value(s[i]));
    }
  }
  const uint8_t nan_scale = 0x7F;
  CHECK_THROWS_AS(seatrt_cuda::repack_nvfp4_sm90_tiled(&nan_scale, 1, 100.0f), std::invalid_argument);
  CHECK_THROWS_AS(seatrt_cuda::repack_nvfp4_sm90_tiled(&nan_scale, 0, 0.0f), std::invalid_argument);
}
