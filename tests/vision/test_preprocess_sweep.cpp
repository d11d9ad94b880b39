// Preprocessing over 50 more sizes (1x1, 1000x1, thin both ways, an exact
// fit that skips the resize, shrunk and enlarged, budgets 70/140/280)
// against HF: target size, patch count, and the FNV-1a 64 hash and sum of
// the levels (pixel values x 255) HF produced, so any single level off
// fails.  The images are a formula both sides compute (sweep_pixel in
// tools/fixtures/make_vision_fixture.py).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "seatrt/image/preprocess.hpp"
#include "vision_fixture.hpp"

namespace img = seatrt::image;

namespace {

img::RgbImage sweep_image(int32_t width, int32_t height) {
  img::RgbImage out{width, height, std::vector<uint8_t>(static_cast<std::size_t>(width) * height * 3)};
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int64_t c = 0; c < 3; ++c)
        out.rgb[static_cast<std::size_t>((y * width + x) * 3 + c)] =
            static_cast<uint8_t>((x * 7 + y * 13 + c * 29 + ((x * y) % 17) * 11) % 256);
  return out;
}

}  // namespace

TEST_CASE("preprocessing over 50 sizes and 3 budgets equals HF level for level", "[preprocess]") {
  const auto& fx = seatrt::test::VisionFixture::get();
  std::ifstream in(fx.dir / "preprocess_sweep.json");
  const auto sweep = nlohmann::json::parse(in);
  REQUIRE(sweep.at("cases").size() == 50);
  for (const auto& c : sweep.at("cases")) {
    const int32_t w = c.at("width"), h = c.at("height"), budget = c.at("max_soft_tokens");
    INFO(w << "x" << h << " at " << budget << " soft tokens");
    const auto config = img::parse_processor_config(nlohmann::json{{"max_soft_tokens", budget}}.dump(), "sweep");
    const auto got = img::preprocess(sweep_image(w, h), config);
    CHECK(got.grid_width * 16 == c.at("resized_width").get<int32_t>());
    CHECK(got.grid_height * 16 == c.at("resized_height").get<int32_t>());
    REQUIRE(got.num_patches == c.at("num_patches").get<int32_t>());
    uint64_t hash = 0xCBF29CE484222325ull;
    int64_t sum = 0;
    const std::size_t values = static_cast<std::size_t>(got.num_patches) * config.patch_values();
    for (std::size_t k = 0; k < values; ++k) {
      const auto level = static_cast<uint8_t>(std::lround(double(got.pixel_values[k]) * 255.0));
      hash = (hash ^ level) * 0x100000001B3ull;
      sum += level;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    CHECK(sum == c.at("levels_sum").get<int64_t>());
    CHECK(std::string(hex) == c.at("levels_fnv1a64").get<std::string>());
  }
}
