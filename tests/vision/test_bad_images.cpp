// Truncated, corrupt, oversized and unsupported images are ImageErrors of
// the right kind naming the problem; none crashes (the ASan build runs
// these too).
#include <catch2/catch.hpp>
#include <string>

#include "seatrt/image/image.hpp"
#include "vision_fixture.hpp"

namespace img = seatrt::image;
using seatrt::test::VisionFixture;

namespace {

img::ImageErrorKind error_kind(const std::vector<uint8_t>& bytes, const img::DecodeLimits& limits = {},
                               std::string* message = nullptr) {
  try {
    img::decode_image(bytes, limits);
  } catch (const img::ImageError& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  FAIL("decoded without an error");
  return img::ImageErrorKind::kConfig;
}

}  // namespace

TEST_CASE("every truncation of every fixture image is refused as malformed", "[bad]") {
  const auto& fx = VisionFixture::get();
  for (const auto& m : fx.images) {
    const auto bytes = fx.file_bytes(m);
    // Cut points across the whole file, the last one just short of the end
    // of the image data.
    for (std::size_t cut : {std::size_t{1}, std::size_t{9}, std::size_t{40}, bytes.size() / 3, bytes.size() / 2,
                            bytes.size() * 9 / 10, bytes.size() - 16}) {
      if (cut >= bytes.size()) continue;
      INFO(m.file << " cut at " << cut << " of " << bytes.size());
      const std::vector<uint8_t> head(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
      std::string message;
      const auto kind = error_kind(head, {}, &message);
      INFO(message);
      CHECK((kind == img::ImageErrorKind::kMalformed || kind == img::ImageErrorKind::kUnsupported));
      CHECK(!message.empty());
    }
  }
}

TEST_CASE("corrupt image data is refused as malformed", "[bad]") {
  const auto& fx = VisionFixture::get();
  for (const auto& m : fx.images) {
    auto bytes = fx.file_bytes(m);
    // Overwrite the middle of the file (past every header) with noise.
    for (std::size_t k = bytes.size() / 3; k < bytes.size() * 2 / 3; ++k) bytes[k] = static_cast<uint8_t>(k * 131 + 7);
    INFO(m.file);
    try {
      img::decode_image(bytes);
      // GIF and lossless data can decode garbage into other pixels
      // without a checksum; the decoders must at least not crash.
      SUCCEED();
    } catch (const img::ImageError& e) {
      CHECK(e.kind() == img::ImageErrorKind::kMalformed);
    }
  }
  // PNG checks CRCs: one flipped byte in IDAT is an error.
  auto png = fx.file_bytes(fx.images[0]);
  png[png.size() / 2] ^= 0x55;
  CHECK(error_kind(png) == img::ImageErrorKind::kMalformed);
}

TEST_CASE("oversized images are refused before decoding", "[bad]") {
  const auto& fx = VisionFixture::get();
  for (const auto& m : fx.images) {
    INFO(m.file);
    const auto bytes = fx.file_bytes(m);
    std::string message;
    img::DecodeLimits few_pixels;
    few_pixels.max_pixels = static_cast<int64_t>(m.width) * m.height - 1;
    CHECK(error_kind(bytes, few_pixels, &message) == img::ImageErrorKind::kTooLarge);
    CHECK(message.find("pixels") != std::string::npos);
    img::DecodeLimits few_bytes;
    few_bytes.max_bytes = bytes.size() - 1;
    CHECK(error_kind(bytes, few_bytes, &message) == img::ImageErrorKind::kTooLarge);
    CHECK(message.find("bytes") != std::string::npos);
  }
}

TEST_CASE("unknown, empty and unsupported images name the problem", "[bad]") {
  std::string message;
  CHECK(error_kind({}, {}, &message) == img::ImageErrorKind::kMalformed);
  CHECK(message.find("empty") != std::string::npos);
  const std::string bmp = "BM\x36\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00";
  CHECK(error_kind(std::vector<uint8_t>(bmp.begin(), bmp.end()), {}, &message) == img::ImageErrorKind::kUnsupported);
  CHECK(message.find("not recognised") != std::string::npos);
  const std::string text = "<svg xmlns='http://www.w3.org/2000/svg'/>";
  CHECK(error_kind(std::vector<uint8_t>(text.begin(), text.end())) == img::ImageErrorKind::kUnsupported);
  // A PNG signature followed by nothing.
  const std::vector<uint8_t> sig{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  CHECK(error_kind(sig, {}, &message) == img::ImageErrorKind::kMalformed);
  CHECK(message.find("PNG") != std::string::npos);
}
