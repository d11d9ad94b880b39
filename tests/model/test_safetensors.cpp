// The safetensors reader and dtype conversions on known values (from the
// formats' definitions: bf16 = top half of fp32, IEEE half, OCP E4M3FN).
#include <catch2/catch.hpp>

#include "fixture_support.hpp"
#include "seatrt/model/checkpoint.hpp"
#include "seatrt/model/dtype.hpp"

namespace seatrt::test {
namespace {

TEST_CASE("narrow float types decode exactly", "[safetensors]") {
  CHECK(model::bf16_to_f32(0x3F80) == 1.0f);
  CHECK(model::bf16_to_f32(0xC040) == -3.0f);
  CHECK(model::f16_to_f32(0x3C00) == 1.0f);
  CHECK(model::f16_to_f32(0x0001) == 0x1p-24f);
  CHECK(model::e4m3_to_f32(0x38) == 1.0f);
  CHECK(model::e4m3_to_f32(0x7E) == 448.0f);
  CHECK(model::e4m3_to_f32(0xFE) == -448.0f);
  CHECK(model::e4m3_to_f32(0x01) == 0x1p-9f);
  CHECK(std::isnan(model::e4m3_to_f32(0x7F)));
  CHECK(model::f32_to_bf16(1.00390625f) == 0x3F80);  // tie -> even
  CHECK(model::f32_to_bf16(1.01171875f) == 0x3F82);
}

TEST_CASE("the sharded MoE fixture is read completely", "[safetensors]") {
  const model::Checkpoint ckpt(fixture("gemma4-tiny-moe"));
  CHECK(ckpt.files().size() == 2);
  const auto index = read_json(fixture("gemma4-tiny-moe") / "model.safetensors.index.json");
  CHECK(ckpt.tensors().size() == index["weight_map"].size());
  const auto* embed = ckpt.find("model.language_model.embed_tokens.weight");
  REQUIRE(embed);
  CHECK(embed->dtype == SEATRT_DTYPE_BF16);
  CHECK(embed->shape == std::vector<int64_t>{4096, 64});
  const auto* packed = ckpt.find("model.language_model.layers.0.self_attn.q_proj.weight_packed");
  REQUIRE(packed);
  CHECK(packed->dtype == SEATRT_DTYPE_U8);
  CHECK(packed->shape == std::vector<int64_t>{128, 32});
  const auto* scale = ckpt.find("model.language_model.layers.0.self_attn.q_proj.weight_scale");
  REQUIRE(scale);
  CHECK(scale->dtype == SEATRT_DTYPE_F8_E4M3);
  CHECK(scale->shape == std::vector<int64_t>{128, 4});
  CHECK(ckpt.find("no.such.tensor") == nullptr);
}

TEST_CASE("UTF-8 validation", "[safetensors]") {
  CHECK(model::is_valid_utf8("plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK_FALSE(model::is_valid_utf8("\xff"));
  CHECK_FALSE(model::is_valid_utf8("\xc0\xaf"));      // overlong
  CHECK_FALSE(model::is_valid_utf8("\xed\xa0\x80"));  // surrogate
  CHECK_FALSE(model::is_valid_utf8("\xe2\x82"));      // truncated
}

}  // namespace
}  // namespace seatrt::test
