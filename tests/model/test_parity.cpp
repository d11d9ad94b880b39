// The Gemma-4 forward pass against the Hugging Face reference (fp32 run of
// transformers' gemma4 on the dequantized fixture weights; see
// tools/fixtures/make_gemma4_fixtures.py): logits, per-layer hidden states,
// router top-k, and 32-token greedy continuations, for the MoE and the dense
// fixture, loaded through the real plugins on the CPU provider.  The traced
// step runs node by node; the greedy continuation through planned steps.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <map>

#include "fixture_support.hpp"
#include "seatrt/model/sequence_driver.hpp"

namespace seatrt::test {
namespace {

constexpr double kTolerance = 1e-4;  // max|ours - ref| / max|ref|

// Copies every traced tensor to host memory, keyed by (name, layer).
struct TraceCapture {
  const seatrt_kernel_api* kernels;
  seatrt_kernel_context* context;
  std::map<std::pair<std::string, int32_t>, std::vector<unsigned char>> tensors;

  static void callback(void* user, int32_t layer, const char* name, const seatrt_tensor* t) {
    auto* self = static_cast<TraceCapture*>(user);
    std::size_t n = 4;
    for (int i = 0; i < t->ndim; ++i) n *= static_cast<std::size_t>(t->shape[i]);
    auto& bytes = self->tensors[{name, layer}];
    bytes.resize(n);
    seatrt_status* st = self->kernels->copy(self->context, nullptr, bytes.data(), SEATRT_DEVICE_CPU, t->data,
                                            self->kernels->device_kind, n);
    if (st) bytes.clear();  // the comparison then fails on size
  }
  template <typename T>
  std::vector<T> get(const std::string& name, int32_t layer) const {
    const auto it = tensors.find({name, layer});
    if (it == tensors.end()) return {};
    std::vector<T> out(it->second.size() / sizeof(T));
    std::memcpy(out.data(), it->second.data(), it->second.size());
    return out;
  }
};

double max_abs(const float* v, std::size_t n) {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(static_cast<double>(v[i])));
  return m;
}

double relative_error(const float* ours, const float* ref, std::size_t n) {
  double diff = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(ours[i]) - static_cast<double>(ref[i]));
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
  }
  const double scale = max_abs(ref, n);
  return scale > 0 ? diff / scale : diff;
}

void check_fixture(const std::string& name) {
  const auto dir = fixture(name);
  const auto ref = read_json(dir / "reference.json");
  const auto prompts = ref["prompts"].get<std::vector<std::vector<int32_t>>>();
  const auto greedy = ref["greedy"].get<std::vector<std::vector<int32_t>>>();
  const int32_t new_tokens = ref["greedy_new_tokens"].get<int32_t>();
  REQUIRE(!prompts.empty());
  std::size_t longest = 0;
  for (const auto& p : prompts) longest = std::max(longest, p.size());

  auto session = cpu_session();
  const auto& loaded = session->load(dir, static_cast<int64_t>(longest) + new_tokens + 1);
  const auto& info = loaded.info();
  const auto L = static_cast<std::size_t>(info.num_layers);
  const auto H = static_cast<std::size_t>(info.hidden_size);
  const auto V = static_cast<std::size_t>(info.vocab_size);
  const bool moe = info.is_moe != 0;

  double worst_logits = 0, worst_hidden = 0, worst_router_w = 0;
  for (std::size_t p = 0; p < prompts.size(); ++p) {
    const std::string key = "p" + std::to_string(p);
    const auto T = prompts[p].size();
    INFO(name << " prompt " << p << " (" << T << " tokens)");

    TraceCapture capture{loaded.kernels(), loaded.kernel_context(), {}};
    REQUIRE(loaded.arch().set_trace != nullptr);
    REQUIRE(loaded.arch().set_trace(loaded.model(), TraceCapture::callback, &capture) == nullptr);
    model::SequenceDriver driver(loaded, static_cast<int32_t>(T) + 1);
    const auto logits = driver.step(prompts[p], /*all_rows=*/true);
    REQUIRE(loaded.arch().set_trace(loaded.model(), nullptr, nullptr) == nullptr);

    // Logits at every position.
    const auto ref_logits = read_reference(dir, key + ".logits");
    REQUIRE(ref_logits.f32.size() == T * V);
    REQUIRE(logits.size() == T * V);
    const double e_logits = relative_error(logits.data(), ref_logits.f32.data(), T * V);
    worst_logits = std::max(worst_logits, e_logits);
    CHECK(e_logits <= kTolerance);

    // Hidden states: [0] the scaled embedding, [l+1] the output of layer l.
    const auto ref_hidden = read_reference(dir, key + ".hidden");
    REQUIRE(ref_hidden.f32.size() == (L + 1) * T * H);
    for (std::size_t l = 0; l <= L; ++l) {
      const auto ours = capture.get<float>("hidden", static_cast<int32_t>(l) - 1);
      INFO("hidden state " << l);
      REQUIRE(ours.size() == T * H);
      const double e = relative_error(ours.data(), ref_hidden.f32.data() + l * T * H, T * H);
      worst_hidden = std::max(worst_hidden, e);
      CHECK(e <= kTolerance);
    }

    // Router: identical top-k ids (in order), weights close.
    if (moe) {
      const auto ref_idx = read_reference(dir, key + ".router_idx");
      const auto ref_w = read_reference(dir, key + ".router_w");
      const auto k = static_cast<std::size_t>(ref_idx.shape.back());
      for (std::size_t l = 0; l < L; ++l) {
        INFO("router of layer " << l);
        const auto ids = capture.get<int32_t>("router_ids", static_cast<int32_t>(l));
        const auto w = capture.get<float>("router_weights", static_cast<int32_t>(l));
        REQUIRE(ids.size() == T * k);
        REQUIRE(w.size() == T * k);
        const std::vector<int32_t> expected(ref_idx.i32.begin() + static_cast<std::ptrdiff_t>(l * T * k),
                                            ref_idx.i32.begin() + static_cast<std::ptrdiff_t>((l + 1) * T * k));
        CHECK(ids == expected);
        for (std::size_t i = 0; i < T * k; ++i)
          worst_router_w = std::max(worst_router_w, std::fabs(static_cast<double>(w[i] - ref_w.f32[l * T * k + i])));
      }
    }

    // 32-token greedy continuation (prefill, then one token at a time).
    const auto result = model::run_greedy(loaded, prompts[p], new_tokens);
    CHECK(result.greedy == greedy[p]);
  }
  if (moe) CHECK(worst_router_w <= 1e-4);
  std::printf("%s: %zu prompts, max rel err logits %.3g, hidden %.3g, max abs err router weights %.3g\n", name.c_str(),
              prompts.size(), worst_logits, worst_hidden, worst_router_w);
}

TEST_CASE("gemma4 MoE fixture matches the HF reference", "[parity]") { check_fixture("gemma4-tiny-moe"); }

TEST_CASE("gemma4 dense fixture matches the HF reference", "[parity]") { check_fixture("gemma4-tiny-dense"); }

}  // namespace
}  // namespace seatrt::test
