// WebP (lossy or lossless, still) through libwebp.  Alpha is dropped, not
// composited, as PIL's convert("RGB") does.  An animated WebP is refused:
// the simple decoding API reads still images only.
#include <webp/decode.h>

#include "seatrt/image/image.hpp"

namespace seatrt::image {

RgbImage decode_webp(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(bytes.data(), bytes.size(), &features);
  if (status == VP8_STATUS_NOT_ENOUGH_DATA)
    throw ImageError(ImageErrorKind::kMalformed, "WebP image is malformed: truncated header");
  if (status == VP8_STATUS_UNSUPPORTED_FEATURE)
    throw ImageError(ImageErrorKind::kUnsupported, "WebP image uses a feature libwebp does not support");
  if (status != VP8_STATUS_OK)
    throw ImageError(ImageErrorKind::kMalformed, "WebP image is malformed: its header cannot be read");
  if (features.has_animation)
    throw ImageError(ImageErrorKind::kUnsupported, "animated WebP images are not supported");
  check_dimensions(features.width, features.height, limits, "WebP");

  RgbImage img;
  img.width = features.width;
  img.height = features.height;
  img.rgb.resize(static_cast<std::size_t>(img.width) * img.height * 3);
  const int stride = img.width * 3;
  if (!WebPDecodeRGBInto(bytes.data(), bytes.size(), img.rgb.data(), img.rgb.size(), stride))
    throw ImageError(ImageErrorKind::kMalformed, "WebP image is malformed: truncated or corrupt image data");
  return img;
}

}  // namespace seatrt::image
