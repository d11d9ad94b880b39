// GPU tests of the CUDA provider.  Exits with the skip code (77) when the
// provider's probe finds no usable device, so CTest reports SKIPPED on
// machines without a GPU, never passed.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "../support/catch_runner.hpp"
#include "harness.hpp"

namespace seatrt_test {
namespace {
std::unique_ptr<Provider> g_cuda, g_cpu;
std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
}  // namespace
Provider& cuda() { return *g_cuda; }
Provider& cpu() { return *g_cpu; }
}  // namespace seatrt_test

int main(int argc, char** argv) {
  using namespace seatrt_test;
  try {
    g_cuda = std::make_unique<Provider>(env_or("SEATRT_CUDA_PLUGIN", SEATRT_CUDA_PLUGIN_PATH), "cuda");
    const seatrt_kernel_probe p = g_cuda->probe();
    if (p.score == 0) {
      std::printf("SKIPPED: the CUDA provider cannot run here (%s)\n", p.detail ? p.detail : "");
      return kSkipCode;
    }
    std::printf("device: %s\n", p.detail);
    g_cpu = std::make_unique<Provider>(env_or("SEATRT_CPU_PLUGIN", SEATRT_CPU_PLUGIN_PATH), "cpu");
    g_cuda->open();
    g_cpu->open();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "setup failed: %s\n", e.what());
    return 1;
  }
  // A fresh seed each run unless SEATRT_TEST_SEED names one (to reproduce a failure).
  const char* given = std::getenv("SEATRT_TEST_SEED");
  const unsigned seed = given ? static_cast<unsigned>(std::strtoul(given, nullptr, 0)) : std::random_device{}();
  rng().seed(seed);
  std::printf("random seed: %u (rerun with SEATRT_TEST_SEED=%u)\n", seed, seed);
  return run_catch_session(argc, argv);
}
