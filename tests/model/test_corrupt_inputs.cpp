// Corrupt checkpoints, generated at test time from the good MoE fixture:
// each must fail to load with an error that names the file / key / tensor at
// fault, never crash (CI runs this under AddressSanitizer + UBSan).
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <vector>

#include "fixture_support.hpp"
#include "seatrt/model/checkpoint.hpp"
#include "seatrt/model/finite_check.hpp"
#include "seatrt/model/model_session.hpp"
#include "seatrt/model/status.hpp"

namespace seatrt::test {
namespace {

using Catch::Matchers::Contains;

constexpr const char* kFixture = "gemma4-tiny-moe";
constexpr const char* kShard = "model-00002-of-00002.safetensors";

// Loading runs every check up to and including the architecture guard.
void load_all(const std::filesystem::path& dir) {
  auto session = cpu_session();
  session->prepare(dir)->inspect({});
}

// The two tensors at the start of a shard's data area, by offset.
std::pair<std::string, std::string> first_two_tensors(const RawSafetensors& raw) {
  std::vector<std::pair<uint64_t, std::string>> by_offset;
  for (const auto& [name, spec] : raw.header.items())
    if (name != "__metadata__") by_offset.emplace_back(spec["data_offsets"][0].get<uint64_t>(), name);
  std::sort(by_offset.begin(), by_offset.end());
  return {by_offset.at(0).second, by_offset.at(1).second};
}

TEST_CASE("truncated safetensors file", "[corrupt]") {
  FixtureCopy copy(kFixture);
  const auto shard = copy.dir() / kShard;
  std::filesystem::resize_file(shard, std::filesystem::file_size(shard) / 2);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(kShard) && Contains("past the end"));
  std::filesystem::resize_file(shard, 5);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(kShard) && Contains("truncated"));
}

TEST_CASE("header length absurd or past the end", "[corrupt]") {
  FixtureCopy copy(kFixture);
  const auto shard = copy.dir() / kShard;
  const auto raw = read_raw(shard);
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    const char huge[8] = {0, 0, 0, 0, 0, 0, 0, 0x7F};
    f.write(huge, 8);
  }
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(kShard) && Contains("absurd"));
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    const uint64_t n = std::filesystem::file_size(shard);  // more than what follows the 8 bytes
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
    f.write(bytes, 8);
  }
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(kShard) && Contains("truncated"));
}

TEST_CASE("header offsets past the end", "[corrupt]") {
  FixtureCopy copy(kFixture);
  const auto shard = copy.dir() / kShard;
  auto raw = read_raw(shard);
  const auto [first, second] = first_two_tensors(raw);
  raw.header[second]["data_offsets"][1] = raw.data.size() + 64;
  write_raw(shard, raw);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(second) && Contains("past the end"));
}

TEST_CASE("header offsets overlapping", "[corrupt]") {
  FixtureCopy copy(kFixture);
  const auto shard = copy.dir() / kShard;
  auto raw = read_raw(shard);
  const auto [first, second] = first_two_tensors(raw);
  auto& offsets = raw.header[second]["data_offsets"];
  const uint64_t size = offsets[1].get<uint64_t>() - offsets[0].get<uint64_t>();
  const uint64_t begin = raw.header[first]["data_offsets"][1].get<uint64_t>() - 1;
  offsets = {begin, begin + size};
  write_raw(shard, raw);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(first) && Contains(second) && Contains("overlap"));
}

TEST_CASE("header not covering the data", "[corrupt]") {
  FixtureCopy copy(kFixture);
  const auto shard = copy.dir() / kShard;
  auto raw = read_raw(shard);
  raw.data += std::string(32, '\0');  // trailing bytes no tensor owns
  write_raw(shard, raw);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(kShard) && Contains("does not cover"));
}

TEST_CASE("dtype x shape does not match the byte size", "[corrupt]") {
  FixtureCopy copy(kFixture);
  const auto shard = copy.dir() / kShard;
  auto raw = read_raw(shard);
  const auto [first, second] = first_two_tensors(raw);
  auto& shape = raw.header[first]["shape"];
  shape[0] = shape[0].get<int64_t>() * 2;
  write_raw(shard, raw);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(first) && Contains("bytes"));
  raw.header[first]["dtype"] = "Q7";
  write_raw(shard, raw);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(first) && Contains("unknown dtype 'Q7'"));
}

TEST_CASE("malformed and non-UTF-8 headers", "[corrupt]") {
  FixtureCopy copy(kFixture);
  const auto shard = copy.dir() / kShard;
  const auto raw = read_raw(shard);
  std::string text = raw.header.dump();
  const auto at = text.find("model.");
  REQUIRE(at != std::string::npos);
  text[at] = '\xff';
  write_header_bytes(shard, text, raw.data);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(kShard) && Contains("UTF-8"));
  write_header_bytes(shard, "{\"a\": [1, 2", raw.data);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(kShard) && Contains("not valid JSON"));
  write_header_bytes(shard, "[1, 2, 3]", raw.data);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("not a JSON object"));
}

TEST_CASE("missing shard, or an index that disagrees with the shards", "[corrupt]") {
  FixtureCopy copy(kFixture);
  std::filesystem::remove(copy.dir() / kShard);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(kShard) && Contains("missing"));

  FixtureCopy listed(kFixture);
  auto index = read_json(listed.dir() / "model.safetensors.index.json");
  index["weight_map"]["model.language_model.extra.weight"] = kShard;
  write_json(listed.dir() / "model.safetensors.index.json", index);
  CHECK_THROWS_WITH(load_all(listed.dir()), Contains("model.language_model.extra.weight"));

  FixtureCopy none(kFixture);
  for (const auto& e : std::filesystem::directory_iterator(none.dir()))
    if (e.path().extension() == ".safetensors" || e.path().extension() == ".json")
      if (e.path().filename() != "config.json") std::filesystem::remove(e.path());
  CHECK_THROWS_WITH(load_all(none.dir()), Contains("no model.safetensors"));
}

TEST_CASE("missing, unexpected and misshapen tensors are listed", "[corrupt]") {
  FixtureCopy copy(kFixture);
  const std::string norm = "model.language_model.norm.weight";
  const std::string qn = "model.language_model.layers.0.self_attn.q_norm.weight";
  for (const std::string& name : {norm, qn}) {
    const auto shard = shard_of(copy.dir(), name);
    auto raw = read_raw(shard);
    auto index = read_json(copy.dir() / "model.safetensors.index.json");
    if (name == norm) {  // renamed: the old name is missing, the new one unexpected
      raw.header[norm + "_renamed"] = raw.header[norm];
      raw.header.erase(norm);
      index["weight_map"][norm + "_renamed"] = index["weight_map"][norm];
      index["weight_map"].erase(norm);
    } else {  // same bytes, wrong shape
      raw.header[qn]["shape"] = {16, 2};
    }
    write_raw(shard, raw);
    write_json(copy.dir() / "model.safetensors.index.json", index);
  }
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("missing tensors: " + norm) &&
                                              Contains("unexpected tensors: " + norm + "_renamed") &&
                                              Contains("misshapen tensors: " + qn + " [16, 2] (expected [32])"));
}

TEST_CASE("fused 3-D experts are refused with the reason", "[corrupt]") {
  FixtureCopy copy(kFixture);
  const std::string from = "model.language_model.layers.0.experts.0.gate_proj.weight_packed";
  const std::string to = "model.language_model.layers.0.experts.gate_up_proj";
  const auto shard = shard_of(copy.dir(), from);
  auto raw = read_raw(shard);
  auto index = read_json(copy.dir() / "model.safetensors.index.json");
  raw.header[to] = raw.header[from];
  raw.header.erase(from);
  index["weight_map"][to] = index["weight_map"][from];
  index["weight_map"].erase(from);
  write_raw(shard, raw);
  write_json(copy.dir() / "model.safetensors.index.json", index);
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains(to) && Contains("per-expert Linears"));
}

void edit_config(const std::filesystem::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  auto config = read_json(dir / "config.json");
  edit(config);
  write_json(dir / "config.json", config);
}

TEST_CASE("config.json with missing keys or wrong types", "[corrupt]") {
  FixtureCopy copy(kFixture);
  edit_config(copy.dir(), [](auto& c) { c["text_config"].erase("hidden_size"); });
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("text_config.hidden_size is missing"));

  edit_config(copy.dir(), [](auto& c) {
    c["text_config"]["hidden_size"] = 64;
    c["text_config"]["num_hidden_layers"] = "6";
  });
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("text_config.num_hidden_layers must be an integer"));

  edit_config(copy.dir(), [](auto& c) {
    c["text_config"]["num_hidden_layers"] = 6;
    c["text_config"]["rope_parameters"]["full_attention"].erase("rope_theta");
  });
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("text_config.rope_parameters.full_attention.rope_theta is missing"));

  edit_config(copy.dir(), [](auto& c) { c["text_config"] = 7; });
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("text_config"));

  edit_config(copy.dir(), [](auto& c) { c["quantization_config"] = "yes"; });
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("quantization_config' must be an object"));

  FixtureCopy generation(kFixture);
  std::ofstream(generation.dir() / "generation_config.json", std::ios::trunc) << "{\"eos_token_id\": [1,";
  CHECK_THROWS_WITH(load_all(generation.dir()), Contains("generation_config.json") && Contains("malformed JSON"));

  std::ofstream(copy.dir() / "config.json", std::ios::trunc) << "{\"model_type\": \"gemma4\",";
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("config.json") && Contains("malformed JSON"));
}

TEST_CASE("a shape config.json does not agree with is refused", "[corrupt]") {
  FixtureCopy copy(kFixture);
  edit_config(copy.dir(), [](auto& c) { c["text_config"]["num_experts"] = 16; });
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("missing tensors: model.language_model.layers.0.experts.10.") &&
                                              Contains("router.proj.weight [8, 64] (expected [16, 64])"));
}

TEST_CASE("quantization_config with a format seatrt does not know", "[corrupt]") {
  FixtureCopy copy(kFixture);
  edit_config(copy.dir(), [](auto& c) {
    c["quantization_config"]["format"] = "int4-pack-quantized";
    c["quantization_config"]["config_groups"]["group_0"]["format"] = "int4-pack-quantized";
  });
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("int4-pack-quantized") && Contains("not supported"));

  edit_config(copy.dir(), [](auto& c) { c["quantization_config"]["quant_method"] = "gptq"; });
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("no quantization plugin") && Contains("gptq"));
}

TEST_CASE("an ignore list that disagrees with the stored tensors", "[corrupt]") {
  FixtureCopy copy(kFixture);
  edit_config(copy.dir(), [](auto& c) { c["quantization_config"]["ignore"].push_back("re:.*mlp.*"); });
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("mlp") && Contains("stored quantized") &&
                                              Contains("ignore entry 're:.*mlp.*'"));
}

TEST_CASE("a FIFO or a directory in place of a checkpoint file is refused, never waited on", "[corrupt]") {
  // Opening a FIFO for reading blocks until a writer comes: the loader must
  // refuse it by its type first (found by a fuzzing sweep: it hung).
  for (const char* name : {kShard, "config.json", "model.safetensors.index.json"}) {
    FixtureCopy copy(kFixture);
    const auto path = copy.dir() / name;
    std::filesystem::remove(path);
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    CHECK_THROWS_WITH(load_all(copy.dir()), Contains(name) && Contains("not a regular file"));
  }
  FixtureCopy copy(kFixture);
  std::filesystem::remove(copy.dir() / "config.json");
  std::filesystem::create_directory(copy.dir() / "config.json");
  CHECK_THROWS_WITH(load_all(copy.dir()), Contains("config.json") && Contains("is a directory"));
}

TEST_CASE("first_non_finite finds exactly the NaN and infinity encodings of each float dtype", "[corrupt]") {
  const auto scan = [](int32_t dtype, std::vector<unsigned char> bytes) {
    model::TensorEntry t;
    t.dtype = dtype;
    t.data = bytes.data();
    t.nbytes = bytes.size();
    return model::first_non_finite(t);
  };
  // Little-endian element bytes; the largest finite value of each type is not flagged.
  CHECK(scan(SEATRT_DTYPE_BF16, {0x7F, 0x7F, 0x80, 0xFF}) == 1);  // 0x7F7F max, 0xFF80 -inf
  CHECK(scan(SEATRT_DTYPE_BF16, {0x7F, 0x7F, 0xC0, 0x7F}) == 1);  // 0x7FC0 NaN
  CHECK(scan(SEATRT_DTYPE_BF16, {0x7F, 0x7F, 0x7F, 0xFF}) == -1);
  CHECK(scan(SEATRT_DTYPE_F16, {0xFF, 0x7B, 0x00, 0x7C}) == 1);  // 0x7BFF max, 0x7C00 inf
  CHECK(scan(SEATRT_DTYPE_F32, {0xFF, 0xFF, 0x7F, 0x7F, 0x00, 0x00, 0xC0, 0x7F}) == 1);
  CHECK(scan(SEATRT_DTYPE_F8_E4M3, {0x7E, 0xFE, 0x00, 0xFF}) == 3);  // 0x7E = 448; 0xFF NaN
  CHECK(scan(SEATRT_DTYPE_F8_E4M3, {0x7E, 0xFE, 0x7F}) == 2);
  CHECK(scan(SEATRT_DTYPE_U8, {0xFF, 0x7F}) == -1);  // packed codes have no NaN
  // Every lane of the 8-byte-word test: a buffer of the largest finite value
  // with one NaN (or infinity) at each position in turn.
  struct Case {
    int32_t dtype;
    std::vector<unsigned char> finite, bad;
  };
  for (const Case& c : {Case{SEATRT_DTYPE_BF16, {0x7F, 0x7F}, {0x80, 0xFF}}, Case{SEATRT_DTYPE_F16, {0xFF, 0x7B}, {0x01, 0x7C}},
                        Case{SEATRT_DTYPE_F32, {0xFF, 0xFF, 0x7F, 0x7F}, {0, 0, 0x80, 0xFF}},
                        Case{SEATRT_DTYPE_F8_E4M3, {0xFE}, {0x7F}}}) {
    for (size_t at = 0; at < 40; ++at) {
      std::vector<unsigned char> bytes;
      for (size_t i = 0; i < 40; ++i) bytes.insert(bytes.end(), (i == at ? c.bad : c.finite).begin(), (i == at ? c.bad : c.finite).end());
      INFO("dtype " << c.dtype << " at " << at);
      CHECK(scan(c.dtype, bytes) == static_cast<int64_t>(at));
    }
    std::vector<unsigned char> clean;
    for (size_t i = 0; i < 40; ++i) clean.insert(clean.end(), c.finite.begin(), c.finite.end());
    CHECK(scan(c.dtype, clean) == -1);
  }
  // A NaN far into a large tensor (past the scan's first chunks).
  std::vector<unsigned char> big(2 * 100000, 0);
  big[2 * 77777] = 0xC0;
  big[2 * 77777 + 1] = 0x7F;
  CHECK(scan(SEATRT_DTYPE_BF16, big) == 77777);
}

TEST_CASE("a checkpoint with NaN or infinity in a float tensor is refused at load, naming the tensor", "[corrupt]") {
  // One tensor of each float dtype the fixture stores, poisoned in turn.
  std::map<std::string, std::string> first_of;  // dtype -> tensor name
  {
    FixtureCopy probe(kFixture);
    for (const auto& shard : {std::string("model-00001-of-00002.safetensors"), std::string(kShard)}) {
      const auto raw = read_raw(probe.dir() / shard);
      for (const auto& [name, spec] : raw.header.items())
        if (name != "__metadata__") first_of.emplace(spec["dtype"].get<std::string>(), name);
    }
  }
  int poisoned = 0;
  for (const auto& [dtype, name] : first_of) {
    const std::vector<unsigned char> nan = dtype == "BF16" ? std::vector<unsigned char>{0xC0, 0x7F}
                                           : dtype == "F32" ? std::vector<unsigned char>{0, 0, 0xC0, 0x7F}
                                           : dtype == "F8_E4M3" ? std::vector<unsigned char>{0x7F}
                                                                : std::vector<unsigned char>{};
    if (nan.empty()) continue;
    FixtureCopy copy(kFixture);
    const auto shard = shard_of(copy.dir(), name);
    auto raw = read_raw(shard);
    const auto begin = raw.header[name]["data_offsets"][0].get<size_t>();
    for (size_t i = 0; i < nan.size(); ++i) raw.data[begin + i] = static_cast<char>(nan[i]);
    write_raw(shard, raw);
    INFO(dtype << " " << name);
    auto session = cpu_session();
    CHECK_THROWS_WITH(session->load(copy.dir(), 64), Contains(name) && Contains("non-finite") && Contains("element 0"));
    ++poisoned;
  }
  CHECK(poisoned >= 2);  // the fixture has BF16 norms and F8_E4M3 scales at least
}

}  // namespace
}  // namespace seatrt::test
