// GIF's first frame through giflib, rendered as PIL renders frame 0 before
// convert("RGB"): a canvas of the logical screen's size filled with the
// frame's transparent index (or index 0), the frame's indices pasted at its
// offset (clipped to the screen), then each index looked up in the frame's
// colour table (local, else global; black past its end; grey levels when
// the file has neither).  Transparency does not change the colours.
#include <gif_lib.h>

#include <array>
#include <cstring>
#include <memory>

#include "seatrt/image/image.hpp"

namespace seatrt::image {

namespace {

struct GifSource {
  std::span<const uint8_t> bytes;
  std::size_t pos = 0;
};

int read_bytes(GifFileType* gif, GifByteType* out, int n) {
  auto* s = static_cast<GifSource*>(gif->UserData);
  const std::size_t take = std::min(static_cast<std::size_t>(n), s->bytes.size() - s->pos);
  std::memcpy(out, s->bytes.data() + s->pos, take);
  s->pos += take;
  return static_cast<int>(take);
}

struct GifCloser {
  void operator()(GifFileType* gif) const {
    int error = 0;
    DGifCloseFile(gif, &error);
  }
};
using GifPtr = std::unique_ptr<GifFileType, GifCloser>;

[[noreturn]] void fail(int error) {
  const char* why = GifErrorString(error);
  throw ImageError(ImageErrorKind::kMalformed,
                   std::string("GIF image is malformed: ") + (why ? why : "unknown giflib error"));
}

// Stage 1: the extensions before the first image; returns the transparent
// index its graphic control extension names, or -1.
int read_until_first_image(GifFileType* gif) {
  int transparent = -1;
  for (;;) {
    GifRecordType type;
    if (DGifGetRecordType(gif, &type) == GIF_ERROR) fail(gif->Error);
    if (type == IMAGE_DESC_RECORD_TYPE) return transparent;
    if (type == TERMINATE_RECORD_TYPE)
      throw ImageError(ImageErrorKind::kMalformed, "GIF image is malformed: it holds no frame");
    if (type != EXTENSION_RECORD_TYPE) continue;
    int code = 0;
    GifByteType* block = nullptr;
    if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) fail(gif->Error);
    if (code == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) transparent = (block[1] & 1) ? block[4] : -1;
    while (block) {
      if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) fail(gif->Error);
    }
  }
}

// Stage 2: the frame's indices, de-interlaced, [height][width].
std::vector<uint8_t> read_frame(GifFileType* gif, int width, int height) {
  std::vector<uint8_t> indices(static_cast<std::size_t>(width) * height);
  const bool interlaced = gif->Image.Interlace;
  static constexpr std::array<int, 4> kStart{0, 4, 2, 1}, kStep{8, 8, 4, 2};
  for (int pass = 0; pass < (interlaced ? 4 : 1); ++pass) {
    const int start = interlaced ? kStart[pass] : 0;
    const int step = interlaced ? kStep[pass] : 1;
    for (int y = start; y < height; y += step)
      if (DGifGetLine(gif, indices.data() + static_cast<std::size_t>(y) * width, width) == GIF_ERROR)
        fail(gif->Error);
  }
  return indices;
}

}  // namespace

RgbImage decode_gif(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  GifSource source{bytes};
  int error = 0;
  GifPtr gif(DGifOpen(&source, read_bytes, &error));
  if (!gif) fail(error);
  check_dimensions(gif->SWidth, gif->SHeight, limits, "GIF");
  const int transparent = read_until_first_image(gif.get());
  if (DGifGetImageDesc(gif.get()) == GIF_ERROR) fail(gif->Error);
  const GifImageDesc& desc = gif->Image;
  check_dimensions(desc.Width, desc.Height, limits, "GIF frame");
  const std::vector<uint8_t> frame = read_frame(gif.get(), desc.Width, desc.Height);

  // Stage 3: paste onto the screen-sized canvas, then look the colours up.
  RgbImage img;
  img.width = gif->SWidth;
  img.height = gif->SHeight;
  std::vector<uint8_t> canvas(static_cast<std::size_t>(img.width) * img.height,
                              static_cast<uint8_t>(transparent >= 0 ? transparent : 0));
  for (int y = 0; y < desc.Height; ++y) {
    const int cy = desc.Top + y;
    if (cy >= img.height) break;
    for (int x = 0; x < desc.Width; ++x) {
      const int cx = desc.Left + x;
      if (cx >= img.width) break;
      canvas[static_cast<std::size_t>(cy) * img.width + cx] = frame[static_cast<std::size_t>(y) * desc.Width + x];
    }
  }
  const ColorMapObject* map = desc.ColorMap ? desc.ColorMap : gif->SColorMap;
  img.rgb.resize(canvas.size() * 3);
  for (std::size_t i = 0; i < canvas.size(); ++i) {
    const int index = canvas[i];
    uint8_t* px = img.rgb.data() + i * 3;
    if (!map) {
      px[0] = px[1] = px[2] = static_cast<uint8_t>(index);
    } else if (index < map->ColorCount) {
      px[0] = map->Colors[index].Red;
      px[1] = map->Colors[index].Green;
      px[2] = map->Colors[index].Blue;
    } else {
      px[0] = px[1] = px[2] = 0;
    }
  }
  return img;
}

}  // namespace seatrt::image
