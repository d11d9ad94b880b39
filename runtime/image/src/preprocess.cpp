// The stages of Gemma4ImageProcessor._preprocess for one image: target
// size, resize, rescale, patchify, position ids, padding.
#include <cmath>
#include <string>

#include "seatrt/image/preprocess.hpp"

namespace seatrt::image {

TargetSize target_size(int32_t height, int32_t width, const ProcessorConfig& config) {
  // Python's float arithmetic, step for step: sqrt(target_px / total_px).
  const int64_t total_px = static_cast<int64_t>(height) * width;
  const int64_t target_px = static_cast<int64_t>(config.max_patches()) * config.patch_size * config.patch_size;
  const double factor = std::sqrt(static_cast<double>(target_px) / static_cast<double>(total_px));
  const double ideal_height = factor * height;
  const double ideal_width = factor * width;
  const int64_t side = static_cast<int64_t>(config.pooling_kernel_size) * config.patch_size;
  int64_t th = static_cast<int64_t>(std::floor(ideal_height / static_cast<double>(side))) * side;
  int64_t tw = static_cast<int64_t>(std::floor(ideal_width / static_cast<double>(side))) * side;
  if (th == 0 && tw == 0)
    throw ImageError(ImageErrorKind::kMalformed, "image of " + std::to_string(width) + "x" + std::to_string(height) +
                                                     " pixels would be resized to 0x0");
  // A very thin image: the short side becomes one pooled patch, the long
  // side keeps the aspect ratio's integer part, capped.
  const int64_t max_side = (config.max_patches() / (config.pooling_kernel_size * config.pooling_kernel_size)) * side;
  if (th == 0) {
    th = side;
    tw = std::min(static_cast<int64_t>(std::floor(static_cast<double>(width) / height)) * side, max_side);
  } else if (tw == 0) {
    tw = side;
    th = std::min(static_cast<int64_t>(std::floor(static_cast<double>(height) / width)) * side, max_side);
  }
  if (th * tw > target_px)
    throw ImageError(ImageErrorKind::kMalformed, "image of " + std::to_string(width) + "x" + std::to_string(height) +
                                                     " pixels cannot fit the patch budget");
  return {static_cast<int32_t>(th), static_cast<int32_t>(tw)};
}

PatchedImage preprocess(const RgbImage& image, const ProcessorConfig& config) {
  // Stage 1: resize (skipped when the size is already the target).
  const TargetSize size = target_size(image.height, image.width, config);
  const RgbImage resized = (size.width == image.width && size.height == image.height)
                               ? image
                               : resize_bicubic_antialias(image, size.width, size.height);

  // Stage 2: the patch grid and the output, zero-padded to the budget.
  const int32_t ps = config.patch_size;
  PatchedImage out;
  out.grid_width = resized.width / ps;
  out.grid_height = resized.height / ps;
  out.num_patches = out.grid_width * out.grid_height;
  out.max_patches = config.max_patches();
  const int32_t k2 = config.pooling_kernel_size * config.pooling_kernel_size;
  out.num_soft_tokens = out.num_patches / k2;
  const std::size_t values = static_cast<std::size_t>(config.patch_values());
  out.pixel_values.assign(static_cast<std::size_t>(out.max_patches) * values, 0.0f);
  out.positions.assign(static_cast<std::size_t>(out.max_patches) * 2, -1);

  // Stage 3: rescale and patchify.  HF multiplies the uint8 tensor by a
  // Python float, which torch computes in float32 with the factor rounded
  // to float32.
  const float scale = config.do_rescale ? static_cast<float>(config.rescale_factor) : 1.0f;
  for (int32_t py = 0; py < out.grid_height; ++py)
    for (int32_t px = 0; px < out.grid_width; ++px) {
      const std::size_t patch = static_cast<std::size_t>(py) * out.grid_width + px;
      float* dst = out.pixel_values.data() + patch * values;
      for (int32_t r = 0; r < ps; ++r) {
        const uint8_t* src =
            resized.rgb.data() + (static_cast<std::size_t>(py * ps + r) * resized.width + px * ps) * 3;
        for (int32_t v = 0; v < ps * 3; ++v) *dst++ = static_cast<float>(src[v]) * scale;
      }
      out.positions[patch * 2] = px;
      out.positions[patch * 2 + 1] = py;
    }
  return out;
}

}  // namespace seatrt::image
