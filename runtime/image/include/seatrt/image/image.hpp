// Decoding an image a request carries (PNG, JPEG, WebP, GIF's first frame)
// into 8-bit RGB, through Debian's packaged decoders.  Every failure is an
// ImageError naming the problem (the server answers it with a 400); no
// input, however truncated or hostile, crashes the process or allocates
// beyond the limits.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace seatrt::image {

// What went wrong, for the caller's error code and message.
enum class ImageErrorKind {
  kUnsupported,  // not a format seatrt reads (or a variant of one, e.g. CMYK JPEG)
  kMalformed,    // truncated or corrupt data
  kTooLarge,     // over the byte or pixel limit
  kConfig,       // the model's processor settings are unusable
  kRequest,      // the request's content part or URL is not well-formed
};

class ImageError : public std::runtime_error {
 public:
  ImageError(ImageErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ImageErrorKind kind() const { return kind_; }

 private:
  ImageErrorKind kind_;
};

// Bounds checked before anything is allocated for the pixels.
struct DecodeLimits {
  std::size_t max_bytes = 20u << 20;  // the encoded file
  int64_t max_pixels = 50'000'000;    // width x height (what PIL's bomb guard allows by default, x ~0.56)
};

// Interleaved 8-bit RGB, rows top to bottom, no padding.
struct RgbImage {
  int32_t width = 0;
  int32_t height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3
};

enum class ImageFormat { kUnknown, kPng, kJpeg, kWebp, kGif };

// The format the leading bytes announce (kUnknown when none).
ImageFormat sniff_format(std::span<const uint8_t> bytes);
const char* format_name(ImageFormat format);

// Decodes to RGB as PIL's Image.open(..).convert("RGB") does: alpha is
// dropped (not composited), grey is replicated, palettes are looked up, a
// GIF gives its first frame on its logical screen.
RgbImage decode_image(std::span<const uint8_t> bytes, const DecodeLimits& limits = {});

// One decoder per format (src/decode_<format>.cpp); decode_image sniffs
// and calls one.  Each assumes the byte limit was checked.
RgbImage decode_png(std::span<const uint8_t> bytes, const DecodeLimits& limits);
RgbImage decode_jpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits);
RgbImage decode_webp(std::span<const uint8_t> bytes, const DecodeLimits& limits);
RgbImage decode_gif(std::span<const uint8_t> bytes, const DecodeLimits& limits);

// Throws kTooLarge when width x height is over the limit, kMalformed when
// a side is not positive; `what` names the format in the message.
void check_dimensions(int64_t width, int64_t height, const DecodeLimits& limits, const char* what);

}  // namespace seatrt::image
