// Gemma-4's image preprocessing, equal to transformers 5.17's
// Gemma4ImageProcessor (torchvision backend): an aspect-preserving resize
// of the 8-bit image (bicubic with antialias, torch's integer path) to
// sides that are multiples of patch_size x pooling_kernel_size and at most
// max_soft_tokens x pooling_kernel_size^2 patches, rescale, patches of
// patch_size^2 x 3 values in (row, col, channel) order, row-major over the
// patch grid, zero-padded to the budget, with (x, y) position ids (-1 for
// padding).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "seatrt/image/image.hpp"

namespace seatrt::image {

// The image processor's settings, from a checkpoint folder.
struct ProcessorConfig {
  int32_t patch_size = 16;
  int32_t max_soft_tokens = 280;
  int32_t pooling_kernel_size = 3;
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  std::string source;  // the file (and section) the settings came from

  int32_t max_patches() const { return max_soft_tokens * pooling_kernel_size * pooling_kernel_size; }
  int32_t patch_values() const { return patch_size * patch_size * 3; }
};

// Reads `dir`/processor_config.json's "image_processor" section, else
// `dir`/preprocessor_config.json (Hugging Face's order: the finetunes ship
// only the first).  Missing keys take Gemma4ImageProcessor's defaults; a
// setting seatrt does not reproduce (do_normalize, another resample, no
// resize, a max_soft_tokens HF refuses) is a kConfig ImageError naming it.
ProcessorConfig load_processor_config(const std::filesystem::path& dir);
// The same from the JSON text of an image processor section; `where`
// names it in errors.
ProcessorConfig parse_processor_config(const std::string& json_text, const std::string& where);

struct TargetSize {
  int32_t height = 0;
  int32_t width = 0;
};
// HF's get_aspect_ratio_preserving_size (same double arithmetic, same
// edge cases: a side rounding to zero becomes one pooled patch wide).
TargetSize target_size(int32_t height, int32_t width, const ProcessorConfig& config);

// Bicubic resize with antialias of 8-bit RGB, bit-exact with torch's CPU
// uint8 path (torch.nn.functional.interpolate(mode="bicubic",
// antialias=True) on AVX2 machines, which torchvision uses for uint8).
RgbImage resize_bicubic_antialias(const RgbImage& in, int32_t width, int32_t height);

struct PatchedImage {
  int32_t num_patches = 0;  // valid rows; the rest are padding
  int32_t max_patches = 0;
  int32_t grid_width = 0;   // patches per row
  int32_t grid_height = 0;
  int32_t num_soft_tokens = 0;        // num_patches / pooling_kernel_size^2
  std::vector<float> pixel_values;    // [max_patches, patch_values]
  std::vector<int32_t> positions;     // [max_patches, 2]: (x, y), (-1, -1) for padding
};

PatchedImage preprocess(const RgbImage& image, const ProcessorConfig& config);

}  // namespace seatrt::image
