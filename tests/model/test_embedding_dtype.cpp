// The tied embedding / LM head is kept in the checkpoint's BF16 (half the
// bytes of an F32 copy, the largest read of a decode step) and that is
// lossless: a copy of the MoE fixture whose embedding is stored as F32
// (the same values widened) must load with exactly vocab x hidden x 2 more
// weight bytes and give the same logits.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "fixture_support.hpp"
#include "seatrt/model/sequence_driver.hpp"

namespace seatrt::test {
namespace {

const std::string kEmbed = "model.language_model.embed_tokens.weight";

// Rewrites `name` in its shard from BF16 to F32 (exact widening), moving
// the other tensors' data so the data area stays exactly covered.
void widen_to_f32(const std::filesystem::path& dir, const std::string& name) {
  const auto file = shard_of(dir, name);
  RawSafetensors raw = read_raw(file);
  std::vector<std::pair<uint64_t, std::string>> order;
  for (auto& [key, entry] : raw.header.items())
    if (key != "__metadata__") order.emplace_back(entry["data_offsets"][0].get<uint64_t>(), key);
  std::sort(order.begin(), order.end());
  std::string data;
  for (const auto& [begin, key] : order) {
    auto& entry = raw.header[key];
    const auto end = entry["data_offsets"][1].get<uint64_t>();
    std::string bytes = raw.data.substr(begin, end - begin);
    if (key == name) {
      REQUIRE(entry["dtype"] == "BF16");
      std::string wide(bytes.size() * 2, '\0');
      for (std::size_t i = 0; i < bytes.size() / 2; ++i) {
        uint16_t half;
        std::memcpy(&half, bytes.data() + 2 * i, 2);
        const uint32_t bits = static_cast<uint32_t>(half) << 16;
        std::memcpy(wide.data() + 4 * i, &bits, 4);
      }
      bytes = std::move(wide);
      entry["dtype"] = "F32";
    }
    entry["data_offsets"] = {data.size(), data.size() + bytes.size()};
    data += bytes;
  }
  raw.data = std::move(data);
  write_raw(file, raw);
}

struct Loaded {
  uint64_t weight_bytes;
  int64_t vocab, hidden;
  std::vector<float> logits;
};

Loaded load_and_run(const std::filesystem::path& dir, const std::vector<int32_t>& prompt) {
  auto session = cpu_session();
  const auto& loaded = session->load(dir, static_cast<int64_t>(prompt.size()) + 1);
  model::SequenceDriver driver(loaded, static_cast<int32_t>(prompt.size()) + 1);
  Loaded out{loaded.info().weight_bytes, loaded.info().vocab_size, loaded.info().hidden_size, {}};
  out.logits = driver.step(prompt, /*all_rows=*/true);
  return out;
}

TEST_CASE("gemma4 keeps a BF16 tied embedding in BF16, losslessly", "[embedding]") {
  const auto ref = read_json(fixture("gemma4-tiny-moe") / "reference.json");
  const auto prompt = ref["prompts"][0].get<std::vector<int32_t>>();
  const Loaded bf16 = load_and_run(fixture("gemma4-tiny-moe"), prompt);

  FixtureCopy copy("gemma4-tiny-moe");
  widen_to_f32(copy.dir(), kEmbed);
  const Loaded f32 = load_and_run(copy.dir(), prompt);

  // The F32 table costs exactly 2 more bytes per element: the BF16 one was
  // kept as BF16 (not widened at load).
  CHECK(f32.weight_bytes - bf16.weight_bytes == static_cast<uint64_t>(bf16.vocab * bf16.hidden * 2));
  // Same values, so the same logits at every position (the providers widen
  // BF16 to fp32 exactly before any arithmetic).
  REQUIRE(bf16.logits.size() == f32.logits.size());
  REQUIRE(!bf16.logits.empty());
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < bf16.logits.size(); ++i) {
    REQUIRE(std::isfinite(bf16.logits[i]));
    worst = std::max(worst, std::fabs(static_cast<double>(bf16.logits[i]) - f32.logits[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(f32.logits[i])));
  }
  CHECK(worst <= 1e-6 * scale);
}

}  // namespace
}  // namespace seatrt::test
