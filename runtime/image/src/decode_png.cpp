// PNG through libpng.  libpng reports errors by longjmp, so the decoding
// runs in a function that owns no C++ object (png_stage); the caller turns
// its result into an ImageError.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "seatrt/image/image.hpp"

namespace seatrt::image {

namespace {

struct PngReader {
  const uint8_t* data;
  std::size_t size;
  std::size_t pos;
  char message[200];
};

[[noreturn]] void on_error(png_structp png, png_const_charp msg) {
  auto* r = static_cast<PngReader*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof(r->message), "%s", msg);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // libpng warns on ancillary oddities PIL ignores too

void on_read(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<PngReader*>(png_get_io_ptr(png));
  if (n > r->size - r->pos) png_error(png, "truncated: the file ends inside the image data");
  std::memcpy(out, r->data + r->pos, n);
  r->pos += n;
}

enum class Stage { kOk, kError, kTooLarge };

// Reads the header, asks `fits` whether the size is acceptable, sizes
// `out` and reads the pixels as 8-bit RGB.  No C++ object lives here:
// a longjmp out of libpng skips no destructor.
Stage png_stage(PngReader& r, png_uint_32& width, png_uint_32& height, const DecodeLimits& limits,
                std::vector<uint8_t>& out, std::vector<png_bytep>& rows) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, on_error, on_warning);
  if (!png) {
    std::snprintf(r.message, sizeof(r.message), "out of memory");
    return Stage::kError;
  }
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return Stage::kError;
  }
  png_set_read_fn(png, &r, on_read);
  png_read_info(png, info);
  width = png_get_image_width(png, info);
  height = png_get_image_height(png, info);
  if (static_cast<int64_t>(width) * static_cast<int64_t>(height) > limits.max_pixels) {
    png_destroy_read_struct(&png, &info, nullptr);
    return Stage::kTooLarge;
  }
  // To 8-bit RGB as PIL's convert("RGB"): palette looked up, tRNS and
  // alpha ignored, grey replicated, 16-bit cut to its high byte.
  const int color_type = png_get_color_type(png, info);
  const int bit_depth = png_get_bit_depth(png, info);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (bit_depth == 16) png_set_strip_16(png);
  if (color_type & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
  if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != static_cast<png_size_t>(width) * 3) png_error(png, "unexpected row layout");
  out.resize(static_cast<std::size_t>(width) * height * 3);
  rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y) rows[y] = out.data() + static_cast<std::size_t>(y) * width * 3;
  png_read_image(png, rows.data());
  png_destroy_read_struct(&png, &info, nullptr);
  return Stage::kOk;
}

}  // namespace

RgbImage decode_png(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  PngReader r{bytes.data(), bytes.size(), 0, {}};
  png_uint_32 width = 0, height = 0;
  RgbImage img;
  std::vector<png_bytep> rows;
  const Stage stage = png_stage(r, width, height, limits, img.rgb, rows);
  if (stage == Stage::kError) throw ImageError(ImageErrorKind::kMalformed, std::string("PNG image is malformed: ") + r.message);
  check_dimensions(width, height, limits, "PNG");
  img.width = static_cast<int32_t>(width);
  img.height = static_cast<int32_t>(height);
  return img;
}

}  // namespace seatrt::image
