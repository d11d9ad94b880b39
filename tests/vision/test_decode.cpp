// Each fixture image decoded by seatrt equals PIL's Image.open().convert("RGB")
// byte for byte (PNG RGB/RGBA/grey, JPEG, lossless WebP, palette GIF).
#include <catch2/catch.hpp>
#include <cstring>

#include "seatrt/image/image.hpp"
#include "vision_fixture.hpp"

using seatrt::image::decode_image;
using seatrt::test::VisionFixture;

TEST_CASE("decoded fixture images equal PIL's RGB", "[decode]") {
  const auto& fx = VisionFixture::get();
  REQUIRE(fx.images.size() == 7);
  for (std::size_t i = 0; i < fx.images.size(); ++i) {
    const auto& meta = fx.images[i];
    INFO(meta.file);
    const auto bytes = fx.file_bytes(meta);
    REQUIRE(!bytes.empty());
    const auto img = decode_image(bytes);
    const auto& ref = fx.tensor(i, "decoded");  // U8 [H, W, 3]
    REQUIRE(ref.shape == std::vector<int64_t>{meta.height, meta.width, 3});
    REQUIRE(img.width == meta.width);
    REQUIRE(img.height == meta.height);
    REQUIRE(img.rgb.size() == ref.nbytes);
    std::size_t differing = 0;
    int max_diff = 0;
    for (std::size_t k = 0; k < ref.nbytes; ++k) {
      const int d = std::abs(int(img.rgb[k]) - int(ref.data[k]));
      differing += d != 0;
      max_diff = std::max(max_diff, d);
    }
    INFO("values differing: " << differing << ", max |diff| " << max_diff);
    CHECK(differing == 0);
  }
}

TEST_CASE("formats are sniffed from the bytes", "[decode]") {
  using seatrt::image::ImageFormat;
  using seatrt::image::sniff_format;
  const auto& fx = VisionFixture::get();
  const ImageFormat expected[] = {ImageFormat::kPng,  ImageFormat::kPng,  ImageFormat::kPng, ImageFormat::kJpeg,
                                  ImageFormat::kJpeg, ImageFormat::kWebp, ImageFormat::kGif};
  for (std::size_t i = 0; i < fx.images.size(); ++i) {
    INFO(fx.images[i].file);
    CHECK(sniff_format(fx.file_bytes(fx.images[i])) == expected[i]);
  }
}
