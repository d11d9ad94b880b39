// Number formats: bf16/f16 rounding, E4M3 and E2M1 against their definitions,
// and NVFP4 decoding checked by hand and against compressed-tensors' output.
#include <catch2/catch.hpp>

#include <bit>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dtype.hpp"
#include "test_support.hpp"
#include "weight.hpp"

using namespace seatrt;

TEST_CASE("bf16 rounds to nearest even and keeps NaN/inf") {
  CHECK(cpu::f32_to_bf16(1.0f) == 0x3F80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the even (1.0).
  CHECK(cpu::f32_to_bf16(1.0f + 0x1p-8f) == 0x3F80);
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6: goes up to even.
  CHECK(cpu::f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3F82);
  CHECK(cpu::f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3F81);
  CHECK(cpu::f32_to_bf16(-2.0f) == 0xC000);
  CHECK(cpu::f32_to_bf16(INFINITY) == 0x7F80);
  CHECK(std::isnan(cpu::bf16_to_f32(cpu::f32_to_bf16(NAN))));
  CHECK(cpu::f32_to_bf16(3.4028235e38f) == 0x7F80);  // rounds past the largest bf16
  std::mt19937 rng(1);
  std::uniform_int_distribution<uint32_t> bits(0, 0xFFFFFFFFu);
  for (int i = 0; i < 20000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    if (!std::isfinite(f) || std::fabs(f) > 3.3e38f) continue;
    REQUIRE(cpu::f32_to_bf16(f) == test::bf16_nearest(f));
  }
}

TEST_CASE("f16 conversion by the IEEE definition") {
  CHECK(cpu::f32_to_f16(1.0f) == 0x3C00);
  CHECK(cpu::f32_to_f16(65504.0f) == 0x7BFF);
  CHECK(cpu::f32_to_f16(65519.0f) == 0x7BFF);
  CHECK(cpu::f32_to_f16(65520.0f) == 0x7C00);   // halfway to 2^16: ties to even = inf
  CHECK(cpu::f32_to_f16(0x1p-24f) == 0x0001);   // smallest subnormal
  CHECK(cpu::f32_to_f16(0x1p-25f) == 0x0000);   // halfway to 0: even
  CHECK(cpu::f32_to_f16(0x1.8p-24f) == 0x0002);  // 1.5 units: to even 2
  CHECK(cpu::f32_to_f16(1.0f + 0x1p-11f) == 0x3C00);  // tie to even
  CHECK(cpu::f32_to_f16(-0.0f) == 0x8000);
  CHECK(cpu::f16_to_f32(0x0001) == 0x1p-24f);
  CHECK(cpu::f16_to_f32(0xC000) == -2.0f);
  CHECK(cpu::f16_to_f32(0x7C00) == INFINITY);
  for (uint32_t h = 0; h < 0x7C00; ++h) {  // every finite positive half round-trips
    REQUIRE(cpu::f32_to_f16(cpu::f16_to_f32(static_cast<uint16_t>(h))) == h);
  }
}

TEST_CASE("E4M3FN decodes by its definition and encodes to nearest, saturating") {
  CHECK(cpu::e4m3_to_f32(0x7E) == 448.0f);
  CHECK(cpu::e4m3_to_f32(0x38) == 1.0f);
  CHECK(cpu::e4m3_to_f32(0x08) == 0x1p-6f);
  CHECK(cpu::e4m3_to_f32(0x01) == 0x1p-9f);
  CHECK(cpu::e4m3_to_f32(0xB8) == -1.0f);
  CHECK(std::isnan(cpu::e4m3_to_f32(0x7F)));
  CHECK(std::isnan(cpu::e4m3_to_f32(0xFF)));
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) continue;
    const double v = test::e4m3_value(static_cast<uint8_t>(b));
    REQUIRE(cpu::e4m3_to_f32(static_cast<uint8_t>(b)) == static_cast<float>(v));
    if (b != 0x80) REQUIRE(cpu::f32_to_e4m3(static_cast<float>(v)) == b);  // -0 encodes as 0x80 too
  }
  CHECK(cpu::f32_to_e4m3(1000.0f) == 0x7E);
  CHECK(cpu::f32_to_e4m3(-1e9f) == 0xFE);
  CHECK(cpu::f32_to_e4m3(1.0625f) == 0x38);   // halfway 1 .. 1.125: even mantissa (1.0)
  CHECK(cpu::f32_to_e4m3(1.1875f) == 0x3A);   // halfway 1.125 .. 1.25: even (1.25)
  CHECK(cpu::f32_to_e4m3(0x1p-10f) == 0x00);  // half of the smallest subnormal: even (0)
  CHECK(cpu::f32_to_e4m3(0x1.8p-9f) == 0x02);
}

TEST_CASE("E2M1 code table: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives") {
  const float expected[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (uint8_t c = 0; c < 16; ++c) {
    CHECK(cpu::e2m1_to_f32(c) == expected[c]);
    CHECK(cpu::e2m1_to_f32(c) == static_cast<float>(test::e2m1_value(c)));
  }
}

TEST_CASE("NVFP4 row decoding worked by hand") {
  // Row [0.5, -6, 1.5, 3, 0 x 12] packs (low nibble first) to 0xF1, 0x53
  // (the format spec's example); group scale E4M3 0x48 = 2^(9-7) = 4,
  // global scale 2: w = fp4 * 4 / 2.
  test::Tensor packed(SEATRT_DTYPE_E2M1X2, {1, 8});
  packed.as<uint8_t>()[0] = 0xF1;
  packed.as<uint8_t>()[1] = 0x53;
  test::Tensor scales(SEATRT_DTYPE_F8_E4M3, {1, 1});
  scales.as<uint8_t>()[0] = 0x48;
  seatrt_linear_weight w{};
  w.struct_size = sizeof w;
  w.format = SEATRT_WFMT_NVFP4;
  w.layout = SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR;
  w.group_size = 16;
  w.out_features = 1;
  w.in_features = 16;
  w.data = packed.desc();
  w.scales = scales.desc();
  w.global_scale = 2.0f;
  REQUIRE_NOTHROW(cpu::validate_weight(&w, "test", "w"));
  float row[16];
  cpu::decode_weight_row(w, 0, row);
  const float expected[16] = {1.0f, -12.0f, 3.0f, 6.0f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 16; ++i) CHECK(row[i] == expected[i]);
}

TEST_CASE("NVFP4 decoding matches compressed-tensors' decompressor bit for bit") {
  std::ifstream in(SEATRT_TEST_DATA_DIR "/nvfp4_ct_oracle.json");
  REQUIRE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  const int64_t out = j["out_features"], inf = j["in_features"];
  test::Tensor packed(SEATRT_DTYPE_U8, {out, inf / 2});
  test::Tensor scales(SEATRT_DTYPE_F8_E4M3, {out, inf / 16});
  for (size_t i = 0; i < j["packed"].size(); ++i) packed.as<uint8_t>()[i] = j["packed"][i].get<uint8_t>();
  for (size_t i = 0; i < j["scale_bits"].size(); ++i) scales.as<uint8_t>()[i] = j["scale_bits"][i].get<uint8_t>();
  seatrt_linear_weight w{};
  w.struct_size = sizeof w;
  w.format = SEATRT_WFMT_NVFP4;
  w.layout = SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR;
  w.group_size = 16;
  w.out_features = out;
  w.in_features = inf;
  w.data = packed.desc();
  w.scales = scales.desc();
  w.global_scale = j["global_scale"].get<float>();
  std::vector<float> row(static_cast<size_t>(inf));
  int64_t mismatches = 0, bf16_mismatches = 0;
  for (int64_t r = 0; r < out; ++r) {
    cpu::decode_weight_row(w, r, row.data());
    for (int64_t c = 0; c < inf; ++c) {
      const size_t i = static_cast<size_t>(r * inf + c);
      if (std::bit_cast<uint32_t>(row[static_cast<size_t>(c)]) != j["weight_f32_bits"][i].get<uint32_t>()) ++mismatches;
      if (cpu::f32_to_bf16(row[static_cast<size_t>(c)]) != j["weight_bf16_bits"][i].get<uint16_t>()) ++bf16_mismatches;
    }
  }
  CHECK(mismatches == 0);
  CHECK(bf16_mismatches == 0);
}
