// Gemma-4 preprocessing against HF's Gemma4ImageProcessor: target sizes,
// pixel values within 1e-6 (the reference stores HF's floats as exact
// uint8 levels: value = float(level) * float(1/255)), position ids, soft
// token counts; from HF's own decoded pixels (the resize alone) and from
// the files (decoding + resize).  Also where the settings come from.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>

#include "seatrt/image/preprocess.hpp"
#include "vision_fixture.hpp"

namespace img = seatrt::image;
using seatrt::test::VisionFixture;

namespace {

img::RgbImage reference_decoded(const VisionFixture& fx, std::size_t i) {
  const auto& t = fx.tensor(i, "decoded");
  img::RgbImage out;
  out.height = static_cast<int32_t>(t.shape[0]);
  out.width = static_cast<int32_t>(t.shape[1]);
  out.rgb.assign(t.data, t.data + t.nbytes);
  return out;
}

// Max |seatrt - HF| over every row of the padded output, and the checks of
// the layout; returns the max difference.
double compare_with_hf(const VisionFixture& fx, std::size_t i, const img::PatchedImage& got) {
  const auto& meta = fx.images[i];
  const auto& levels = fx.tensor(i, "levels");        // U8 [P, 768]
  const auto& positions = fx.tensor(i, "positions");  // I32 [P, 2]
  REQUIRE(got.max_patches == fx.max_patches);
  REQUIRE(got.num_patches == meta.num_patches);
  REQUIRE(got.num_soft_tokens == meta.num_soft_tokens);
  REQUIRE(got.grid_width * 16 == meta.resized_width);
  REQUIRE(got.grid_height * 16 == meta.resized_height);
  REQUIRE(levels.shape == std::vector<int64_t>{meta.num_patches, 768});
  REQUIRE(got.pixel_values.size() == static_cast<std::size_t>(fx.max_patches) * 768);
  const float scale = static_cast<float>(1.0 / 255.0);
  double max_diff = 0.0;
  for (std::size_t k = 0; k < got.pixel_values.size(); ++k) {
    const float hf = k < levels.nbytes ? static_cast<float>(levels.data[k]) * scale : 0.0f;  // padding is 0
    max_diff = std::max(max_diff, std::abs(double(got.pixel_values[k]) - double(hf)));
  }
  std::vector<int32_t> hf_pos(static_cast<std::size_t>(fx.max_patches) * 2, -1);
  std::memcpy(hf_pos.data(), positions.data, positions.nbytes);
  CHECK(got.positions == hf_pos);
  return max_diff;
}

}  // namespace

TEST_CASE("settings come from processor_config.json's image_processor section", "[preprocess]") {
  const auto& fx = VisionFixture::get();
  REQUIRE(!std::filesystem::exists(fx.dir / "preprocessor_config.json"));
  const auto c = img::load_processor_config(fx.dir);
  CHECK(c.max_soft_tokens == 70);
  CHECK(c.max_patches() == 630);
  CHECK(c.patch_size == 16);
  CHECK(c.source.find("processor_config.json [image_processor]") != std::string::npos);
}

TEST_CASE("preprocessor_config.json is read when processor_config.json has no section", "[preprocess]") {
  const auto dir = std::filesystem::temp_directory_path() / "seatrt-vision-preprocessor";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "processor_config.json") << R"({"processor_class": "Gemma4Processor"})";
  std::ofstream(dir / "preprocessor_config.json") << R"({"max_soft_tokens": 140, "patch_size": 16})";
  const auto c = img::load_processor_config(dir);
  CHECK(c.max_soft_tokens == 140);
  CHECK(c.source.find("preprocessor_config.json") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("settings seatrt does not reproduce are refused by name", "[preprocess]") {
  auto refused = [](const char* json, const char* word) {
    INFO(json);
    try {
      img::parse_processor_config(json, "test");
      FAIL("accepted");
    } catch (const img::ImageError& e) {
      CHECK(e.kind() == img::ImageErrorKind::kConfig);
      CHECK(std::string(e.what()).find(word) != std::string::npos);
    }
  };
  refused(R"({"max_soft_tokens": 100})", "max_soft_tokens");
  refused(R"({"do_normalize": true})", "do_normalize");
  refused(R"({"resample": 2})", "resample");
  refused(R"({"patch_size": "16"})", "patch_size");
  refused(R"([1, 2])", "object");
  refused(R"({"max_soft_tokens": )", "JSON");
}

TEST_CASE("target sizes equal HF's", "[preprocess]") {
  const auto& fx = VisionFixture::get();
  const auto c = img::load_processor_config(fx.dir);
  for (const auto& m : fx.images) {
    INFO(m.file);
    const auto t = img::target_size(m.height, m.width, c);
    CHECK(t.width == m.resized_width);
    CHECK(t.height == m.resized_height);
  }
  // HF's thin-image branch (values from get_aspect_ratio_preserving_size
  // with max_patches 630, patch 16, pooling 3): 2x900 -> 48 x 3360 capped.
  const auto thin = img::target_size(900, 2, c);
  CHECK(thin.width == 48);
  CHECK(thin.height == 3360);
}

TEST_CASE("pixel values from HF's decoded pixels equal HF's within 1e-6", "[preprocess]") {
  const auto& fx = VisionFixture::get();
  const auto c = img::load_processor_config(fx.dir);
  for (std::size_t i = 0; i < fx.images.size(); ++i) {
    INFO(fx.images[i].file);
    const double d = compare_with_hf(fx, i, img::preprocess(reference_decoded(fx, i), c));
    INFO("max |diff| " << d);
    CHECK(d <= 1e-6);
  }
}

TEST_CASE("pixel values from the image files equal HF's within 1e-6", "[preprocess]") {
  const auto& fx = VisionFixture::get();
  const auto c = img::load_processor_config(fx.dir);
  for (std::size_t i = 0; i < fx.images.size(); ++i) {
    INFO(fx.images[i].file);
    const double d = compare_with_hf(fx, i, img::preprocess(img::decode_image(fx.file_bytes(fx.images[i])), c));
    INFO("max |diff| " << d);
    CHECK(d <= 1e-6);
  }
}
