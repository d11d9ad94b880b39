// NVFP4 unpacking and dequantization (the plugin's arithmetic, compiled in)
// against the format's definition, and quantization_config parsing.
#include <catch2/catch.hpp>

#include "nvfp4_config.hpp"
#include "nvfp4_convert.hpp"

namespace seatrt::test {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("E2M1 codes and nibble order", "[nvfp4]") {
  const float expected[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (uint8_t c = 0; c < 16; ++c) CHECK(nvfp4::e2m1_to_f32(c) == expected[c]);
  // The spec's example: row [0.5, -6, 1.5, 3] packs to bytes 0xF1, 0x53 (low
  // nibble = even element); one group of 16, the rest zero.
  uint8_t packed[8] = {0xF1, 0x53, 0, 0, 0, 0, 0, 0};
  uint8_t scale = 0x40;  // E4M3 2.0
  float out[16];
  nvfp4::dequantize({packed, &scale, 4.0f, 1, 16}, out);  // step = 2 / 4
  CHECK(out[0] == 0.25f);
  CHECK(out[1] == -3.0f);
  CHECK(out[2] == 0.75f);
  CHECK(out[3] == 1.5f);
  for (int i = 4; i < 16; ++i) CHECK(out[i] == 0.0f);
}

std::string config(const std::string& format, const std::string& ignore, const std::string& extra = "") {
  return R"({"quant_method":"compressed-tensors","format":")" + format +
         R"(","quantization_status":"compressed","config_groups":{"group_0":{"targets":["Linear"],)" + extra +
         R"("weights":{"num_bits":4,"type":"float","group_size":16,"strategy":"tensor_group","symmetric":true,)"
         R"("dynamic":false,"scale_dtype":"torch.float8_e4m3fn"}}},"ignore":)" + ignore + "}";
}

TEST_CASE("ignore lists: explicit names and re: prefix regexes", "[nvfp4]") {
  const auto c = nvfp4::SchemeConfig::parse(
      config("nvfp4-pack-quantized", R"(["lm_head","model.language_model.layers.3.router.proj","re:.*vision_tower.*"])"));
  CHECK(c.quantizes("model.language_model.layers.0.self_attn.q_proj"));
  CHECK_FALSE(c.quantizes("model.language_model.layers.3.router.proj"));
  CHECK(c.quantizes("model.language_model.layers.4.router.proj"));
  CHECK_FALSE(c.quantizes("model.vision_tower.encoder.layers.0.mlp.up_proj.linear"));
  const auto r = nvfp4::SchemeConfig::parse(config("nvfp4-pack-quantized", R"(["re:.*router"])"));
  std::string why;
  CHECK_FALSE(r.quantizes("model.language_model.layers.4.router.proj", &why));  // re.match is a prefix match
  CHECK(why == "ignore entry 're:.*router'");
}

TEST_CASE("unsupported quantization configs are named", "[nvfp4]") {
  CHECK_THROWS_WITH(nvfp4::SchemeConfig::parse(config("int4-pack-quantized", "[]")),
                    Contains("'int4-pack-quantized' is not supported"));
  CHECK_THROWS_WITH(nvfp4::SchemeConfig::parse(config("nvfp4-pack-quantized", "[]", R"("input_activations":{"num_bits":4},)")),
                    Contains("input_activations"));
  CHECK_THROWS_WITH(nvfp4::SchemeConfig::parse(config("nvfp4-pack-quantized", R"(["re:(("])")), Contains("re:(("));
  CHECK_THROWS_WITH(nvfp4::SchemeConfig::parse("[1]"), Contains("not a JSON object"));
}

}  // namespace
}  // namespace seatrt::test
