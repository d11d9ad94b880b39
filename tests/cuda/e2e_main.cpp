// Runner of the end-to-end CUDA checks.  Exits 77 (CTest SKIP_RETURN_CODE,
// reported as SKIPPED, never passed) when the CUDA provider's probe says it
// cannot run here (no driver or no sm_90 device).
#include <catch2/catch.hpp>

#include "../support/catch_runner.hpp"

#include <cstdio>
#include <cstdlib>

#include "e2e_session.hpp"

namespace seatrt::e2e {
namespace {
std::filesystem::path env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
}  // namespace
std::filesystem::path cuda_plugin_path() { return env_or("SEATRT_CUDA_PLUGIN", SEATRT_CUDA_PLUGIN_PATH); }
std::filesystem::path cpu_plugin_path() { return env_or("SEATRT_CPU_PLUGIN", SEATRT_CPU_PLUGIN_PATH); }
std::filesystem::path plugin_dir() { return env_or("SEATRT_TEST_PLUGIN_DIR", SEATRT_TEST_PLUGIN_DIR); }
std::filesystem::path fixtures_dir() { return env_or("SEATRT_TEST_FIXTURES_DIR", SEATRT_TEST_FIXTURES_DIR); }
}  // namespace seatrt::e2e

int main(int argc, char** argv) {
  using namespace seatrt::e2e;
  try {
    const ProbeResult p = probe_provider(cuda_plugin_path());
    if (p.score == 0) {
      std::printf("SKIPPED: the CUDA provider cannot run here (%s)\n", p.detail.c_str());
      return 77;
    }
    std::printf("device: %s\n", p.detail.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "setup failed: %s\n", e.what());
    return 1;
  }
  return run_catch_session(argc, argv);
}
