// Format sniffing and dispatch: the magic bytes decide, never a file name
// or a declared MIME type (a data: URL may say image/png over a JPEG).
#include <cstring>
#include <string>

#include "seatrt/image/image.hpp"

namespace seatrt::image {

namespace {

bool starts_with(std::span<const uint8_t> bytes, const char* magic, std::size_t n, std::size_t at = 0) {
  return bytes.size() >= at + n && std::memcmp(bytes.data() + at, magic, n) == 0;
}

}  // namespace

ImageFormat sniff_format(std::span<const uint8_t> bytes) {
  if (starts_with(bytes, "\x89PNG\r\n\x1a\n", 8)) return ImageFormat::kPng;
  if (starts_with(bytes, "\xff\xd8\xff", 3)) return ImageFormat::kJpeg;
  if (starts_with(bytes, "RIFF", 4) && starts_with(bytes, "WEBP", 4, 8)) return ImageFormat::kWebp;
  if (starts_with(bytes, "GIF87a", 6) || starts_with(bytes, "GIF89a", 6)) return ImageFormat::kGif;
  return ImageFormat::kUnknown;
}

const char* format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kGif: return "GIF";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

void check_dimensions(int64_t width, int64_t height, const DecodeLimits& limits, const char* what) {
  if (width <= 0 || height <= 0)
    throw ImageError(ImageErrorKind::kMalformed,
                     std::string(what) + " image has an empty size " + std::to_string(width) + "x" +
                         std::to_string(height));
  // width and height each fit 32 bits in every format read here, so the
  // product cannot overflow 64.
  if (width * height > limits.max_pixels)
    throw ImageError(ImageErrorKind::kTooLarge, std::string(what) + " image of " + std::to_string(width) + "x" +
                                                    std::to_string(height) + " pixels is over the limit of " +
                                                    std::to_string(limits.max_pixels) + " pixels");
}

RgbImage decode_image(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  if (bytes.empty()) throw ImageError(ImageErrorKind::kMalformed, "image is empty (0 bytes)");
  if (bytes.size() > limits.max_bytes)
    throw ImageError(ImageErrorKind::kTooLarge, "image of " + std::to_string(bytes.size()) +
                                                    " bytes is over the limit of " +
                                                    std::to_string(limits.max_bytes) + " bytes");
  switch (sniff_format(bytes)) {
    case ImageFormat::kPng: return decode_png(bytes, limits);
    case ImageFormat::kJpeg: return decode_jpeg(bytes, limits);
    case ImageFormat::kWebp: return decode_webp(bytes, limits);
    case ImageFormat::kGif: return decode_gif(bytes, limits);
    case ImageFormat::kUnknown: break;
  }
  throw ImageError(ImageErrorKind::kUnsupported,
                   "image format not recognised (PNG, JPEG, WebP and GIF are supported)");
}

}  // namespace seatrt::image
