// End-to-end check of the CUDA provider (issue 7, "Correctness" bullet 2):
// the tiny Gemma-4 fixtures (tests/fixtures/gemma4-tiny-{moe,dense}, HF
// transformers fp32 references, see tools/fixtures/README.md) run through
// the real pipeline (checkpoint -> quant plugin -> gemma4 plugin -> kernel
// provider) and compared with the reference:
//   - router top-k: the set of k expert ids of each (layer, prompt token)
//     equals the reference's for >= 99.5% of the pairs;
//   - greedy continuations (32 tokens, KV cache) identical for every prompt;
//   - logits of every prompt position: max|ours - ref| / max|ref| <= 1e-2.
// The same runs on the CPU provider are the control (they must pass too, and
// their errors are printed beside the CUDA ones).
//
// Why 1e-2 for the logits: it is the bf16 bound the provider's op tests use
// for BF16 outputs (bf16 keeps 8 significant bits, unit roundoff 2^-8 =
// 3.9e-3; a few such roundings along the layers stay under 1e-2).  This
// pipeline keeps activations and the KV cache in fp32, so the measured error
// is expected far below (printed); the bound is what the issue asks, not a
// claim that bf16 is used.  Greedy tokens and router choices are compared
// exactly; the fixtures' prompts were drawn so that every greedy step has a
// top-1/top-2 gap >= 2e-3 and every router choice a probability gap >= 2e-4.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "e2e_session.hpp"
#include "scoped_env.hpp"
#include "fixture_support.hpp"
#include "seatrt/model/sequence_driver.hpp"

namespace seatrt::e2e {

// Defined by main: the environment (SEATRT_CUDA_PLUGIN, SEATRT_CPU_PLUGIN,
// SEATRT_TEST_PLUGIN_DIR, SEATRT_TEST_FIXTURES_DIR) or the build's paths, so
// that a build carried to another machine runs from there.
std::filesystem::path cuda_plugin_path();
std::filesystem::path cpu_plugin_path();
std::filesystem::path plugin_dir();
std::filesystem::path fixtures_dir();

namespace {

constexpr double kLogitsBound = 1e-2;          // max|ours - ref| / max|ref|
constexpr double kRouterAgreementMin = 0.995;  // fraction of (layer, token) pairs

double relative_error(const std::vector<float>& ours, const std::vector<float>& ref) {
  if (ours.size() != ref.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(static_cast<double>(ours[i]) - static_cast<double>(ref[i]));
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    scale = std::max(scale, std::fabs(static_cast<double>(ref[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

// Does the k-id set of our row equal the reference row's (order-free)?
bool same_set(std::vector<int32_t> a, std::vector<int32_t> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

struct FixtureResult {
  double worst_logits = 0;
  std::size_t router_pairs = 0, router_agree = 0;
  std::size_t prompts = 0, greedy_identical = 0;
};

FixtureResult run_fixture(const std::string& name, const std::filesystem::path& provider) {
  const auto dir = fixtures_dir() / name;
  const auto ref = test::read_json(dir / "reference.json");
  const auto prompts = ref["prompts"].get<std::vector<std::vector<int32_t>>>();
  const auto greedy = ref["greedy"].get<std::vector<std::vector<int32_t>>>();
  const int32_t new_tokens = ref["greedy_new_tokens"].get<int32_t>();
  REQUIRE(!prompts.empty());
  REQUIRE(greedy.size() == prompts.size());
  std::size_t longest = 0;
  for (const auto& p : prompts) longest = std::max(longest, p.size());

  auto session = open_session(plugin_dir(), provider);
  const auto& loaded = session->load(dir, static_cast<int64_t>(longest) + new_tokens + 1);
  const auto L = static_cast<std::size_t>(loaded.info().num_layers);
  const bool moe = loaded.info().is_moe != 0;

  FixtureResult r;
  for (std::size_t p = 0; p < prompts.size(); ++p) {
    const std::string key = "p" + std::to_string(p);
    const auto T = prompts[p].size();
    INFO(name << " prompt " << p << " (" << T << " tokens)");
    std::vector<float> logits;
    std::vector<std::vector<int32_t>> router_ids;
    {
      const TraceIds trace(loaded, "router_ids");
      model::SequenceDriver driver(loaded, static_cast<int32_t>(T) + 1);
      logits = driver.step(prompts[p], /*all_rows=*/true);
      router_ids = trace.ids();
    }
    const auto ref_logits = test::read_reference(dir, key + ".logits");
    const double e = relative_error(logits, ref_logits.f32);
    r.worst_logits = std::max(r.worst_logits, e);
    CHECK(e <= kLogitsBound);

    if (moe) {
      const auto ref_idx = test::read_reference(dir, key + ".router_idx");
      const auto k = static_cast<std::size_t>(ref_idx.shape.back());
      REQUIRE(ref_idx.i32.size() == L * T * k);
      REQUIRE(router_ids.size() == L);
      for (std::size_t l = 0; l < L; ++l) {
        REQUIRE(router_ids[l].size() == T * k);
        for (std::size_t t = 0; t < T; ++t) {
          const auto ours = router_ids[l].begin() + static_cast<std::ptrdiff_t>(t * k);
          const auto theirs = ref_idx.i32.begin() + static_cast<std::ptrdiff_t>((l * T + t) * k);
          ++r.router_pairs;
          if (same_set({ours, ours + static_cast<std::ptrdiff_t>(k)}, {theirs, theirs + static_cast<std::ptrdiff_t>(k)}))
            ++r.router_agree;
        }
      }
    }

    const auto result = model::run_greedy(loaded, prompts[p], new_tokens);
    ++r.prompts;
    if (result.greedy == greedy[p]) ++r.greedy_identical;
    CHECK(result.greedy == greedy[p]);
  }
  return r;
}

void check_fixture(const std::string& name, const std::filesystem::path& provider, const char* label) {
  const FixtureResult r = run_fixture(name, provider);
  const double agreement = r.router_pairs ? static_cast<double>(r.router_agree) / static_cast<double>(r.router_pairs) : 1.0;
  std::printf("%s %s: logits max rel err %.3g (bound %.0e); greedy identical %zu/%zu prompts; ", label, name.c_str(),
              r.worst_logits, kLogitsBound, r.greedy_identical, r.prompts);
  if (r.router_pairs)
    std::printf("router top-k sets agree %zu/%zu (layer, token) pairs = %.2f%%\n", r.router_agree, r.router_pairs,
                100.0 * agreement);
  else
    std::printf("no router (dense)\n");
  std::fflush(stdout);
  CHECK(r.greedy_identical == r.prompts);
  if (r.router_pairs) CHECK(agreement >= kRouterAgreementMin);
  CHECK(r.worst_logits <= kLogitsBound);
}

TEST_CASE("cuda: MoE fixture matches the HF reference end to end", "[e2e][cuda]") {
  check_fixture("gemma4-tiny-moe", cuda_plugin_path(), "cuda");
}

// The same under the opt-in decode kernel switches (scoped_env.hpp): route
// blocks per 8 tokens (the 12-token prompt takes two), the MoE down's reads
// before its PDL wait.
TEST_CASE("cuda: MoE fixture matches the HF reference under the opt-in decode switches", "[e2e][cuda]") {
  seatrt_test::ScopedEnv env(seatrt_test::opt_in_decode_switches());
  check_fixture("gemma4-tiny-moe", cuda_plugin_path(), "cuda (opt-in switches)");
}

TEST_CASE("cuda: dense fixture matches the HF reference end to end", "[e2e][cuda]") {
  check_fixture("gemma4-tiny-dense", cuda_plugin_path(), "cuda");
}

TEST_CASE("cpu control: MoE fixture matches the HF reference end to end", "[e2e][cpu]") {
  check_fixture("gemma4-tiny-moe", cpu_plugin_path(), "cpu ");
}

TEST_CASE("cpu control: dense fixture matches the HF reference end to end", "[e2e][cpu]") {
  check_fixture("gemma4-tiny-dense", cpu_plugin_path(), "cpu ");
}

}  // namespace
}  // namespace seatrt::e2e
