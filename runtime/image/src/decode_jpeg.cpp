// JPEG through libjpeg-turbo, with the decoder's defaults (islow IDCT,
// fancy upsampling) as PIL uses them.  libjpeg reports errors by calling
// error_exit, which must not return: it longjmps back into jpeg_stage, a
// function that owns no C++ object.  A warning (libjpeg's "premature end of
// data", after which it would invent grey rows) is an error here, as PIL
// refuses a truncated file.
// jpeglib.h needs size_t and FILE declared before it.
#include <csetjmp>
#include <cstddef>
#include <cstdio>

#include <jpeglib.h>

#include "seatrt/image/image.hpp"

namespace seatrt::image {

namespace {

struct JpegErrors {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_error_exit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

void on_message(j_common_ptr cinfo, int level) {
  if (level < 0) on_error_exit(cinfo);  // a warning: corrupt or truncated data
}

enum class Stage { kOk, kError, kTooLarge, kColorSpace };

Stage jpeg_stage(std::span<const uint8_t> bytes, JpegErrors& errors, const DecodeLimits& limits,
                 JDIMENSION& width, JDIMENSION& height, std::vector<uint8_t>& out) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = on_error_exit;
  errors.mgr.emit_message = on_message;
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return Stage::kError;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  width = cinfo.image_width;
  height = cinfo.image_height;
  if (static_cast<int64_t>(width) * static_cast<int64_t>(height) > limits.max_pixels) {
    jpeg_destroy_decompress(&cinfo);
    return Stage::kTooLarge;
  }
  // PIL inverts Adobe CMYK its own way; rather than guess, refuse it.
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&cinfo);
    return Stage::kColorSpace;
  }
  cinfo.out_color_space = JCS_RGB;  // grey is replicated, as convert("RGB") does
  jpeg_start_decompress(&cinfo);
  if (cinfo.output_components != 3 || cinfo.output_width != width || cinfo.output_height != height)
    on_error_exit(reinterpret_cast<j_common_ptr>(&cinfo));
  out.resize(static_cast<std::size_t>(width) * height * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out.data() + static_cast<std::size_t>(cinfo.output_scanline) * width * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return Stage::kOk;
}

}  // namespace

RgbImage decode_jpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  JpegErrors errors{};
  JDIMENSION width = 0, height = 0;
  RgbImage img;
  switch (jpeg_stage(bytes, errors, limits, width, height, img.rgb)) {
    case Stage::kError:
      throw ImageError(ImageErrorKind::kMalformed, std::string("JPEG image is malformed: ") + errors.message);
    case Stage::kColorSpace:
      throw ImageError(ImageErrorKind::kUnsupported, "JPEG image in CMYK/YCCK colour is not supported");
    case Stage::kTooLarge:
    case Stage::kOk: break;
  }
  check_dimensions(width, height, limits, "JPEG");
  img.width = static_cast<int32_t>(width);
  img.height = static_cast<int32_t>(height);
  return img;
}

}  // namespace seatrt::image
