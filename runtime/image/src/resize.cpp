// Bicubic resize with antialias, as torch computes it for uint8 images on
// the CPU (the int16-weight path derived from Pillow-SIMD that torchvision
// takes for uint8 input): per axis, Keys' cubic with a = -0.5 stretched by
// the downscale factor, weights normalised in double, then rounded to int16
// with the most fractional bits the largest weight allows; the horizontal
// pass runs first and rounds to uint8, then the vertical pass.  An axis
// whose size does not change is not filtered at all.
#include <algorithm>
#include <cmath>

#include "seatrt/image/preprocess.hpp"

namespace seatrt::image {

namespace {

double keys_cubic(double x) {
  constexpr double a = -0.5;
  x = std::abs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

// The taps of one axis: for each output index, the first input index, the
// number of taps and their fixed-point weights.
struct Taps {
  int32_t max_taps = 0;
  int32_t precision = 0;  // fractional bits of the weights
  std::vector<int32_t> first, count;
  std::vector<int16_t> weights;  // [out][max_taps]
};

Taps compute_taps(int32_t in_size, int32_t out_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double support = scale >= 1.0 ? 2.0 * scale : 2.0;
  const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  Taps t;
  t.max_taps = static_cast<int32_t>(std::ceil(support)) * 2 + 1;
  t.first.resize(out_size);
  t.count.resize(out_size);
  std::vector<double> w(static_cast<std::size_t>(out_size) * t.max_taps, 0.0);
  double w_max = 0.0;
  for (int32_t i = 0; i < out_size; ++i) {
    const double center = scale * (i + 0.5);
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in_size);
    const int64_t n = std::clamp<int64_t>(hi - lo, 0, t.max_taps);
    double* row = w.data() + static_cast<std::size_t>(i) * t.max_taps;
    double total = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      row[j] = keys_cubic((static_cast<double>(j + lo) - center + 0.5) * invscale);
      total += row[j];
    }
    if (total != 0.0)
      for (int64_t j = 0; j < n; ++j) {
        row[j] /= total;
        w_max = std::max(w_max, row[j]);
      }
    t.first[i] = static_cast<int32_t>(lo);
    t.count[i] = static_cast<int32_t>(n);
  }
  // As many fractional bits as keep the largest weight below 2^15.
  for (t.precision = 0; t.precision < 22; ++t.precision)
    if (static_cast<int>(0.5 + w_max * (1 << (t.precision + 1))) >= (1 << 15)) break;
  t.weights.resize(w.size());
  for (std::size_t k = 0; k < w.size(); ++k) {
    const double v = w[k] * (1 << t.precision);
    t.weights[k] = static_cast<int16_t>(v < 0 ? static_cast<int>(-0.5 + v) : static_cast<int>(0.5 + v));
  }
  return t;
}

uint8_t round_to_u8(int32_t acc, int32_t precision) {
  return static_cast<uint8_t>(std::clamp(acc >> precision, 0, 255));
}

// The two passes: each output value is the fixed-point sum of its taps,
// rounded half up and clamped to 0..255.
RgbImage horizontal(const RgbImage& in, int32_t out_width) {
  const Taps t = compute_taps(in.width, out_width);
  RgbImage out{out_width, in.height, std::vector<uint8_t>(static_cast<std::size_t>(out_width) * in.height * 3)};
  for (int32_t y = 0; y < in.height; ++y) {
    const uint8_t* src = in.rgb.data() + static_cast<std::size_t>(y) * in.width * 3;
    uint8_t* dst = out.rgb.data() + static_cast<std::size_t>(y) * out_width * 3;
    for (int32_t x = 0; x < out_width; ++x) {
      const int16_t* w = t.weights.data() + static_cast<std::size_t>(x) * t.max_taps;
      for (int c = 0; c < 3; ++c) {
        int32_t acc = 1 << (t.precision - 1);
        for (int32_t j = 0; j < t.count[x]; ++j) acc += src[(t.first[x] + j) * 3 + c] * w[j];
        dst[x * 3 + c] = round_to_u8(acc, t.precision);
      }
    }
  }
  return out;
}

RgbImage vertical(const RgbImage& in, int32_t out_height) {
  const Taps t = compute_taps(in.height, out_height);
  const std::size_t row = static_cast<std::size_t>(in.width) * 3;
  RgbImage out{in.width, out_height, std::vector<uint8_t>(row * out_height)};
  for (int32_t y = 0; y < out_height; ++y) {
    const int16_t* w = t.weights.data() + static_cast<std::size_t>(y) * t.max_taps;
    const uint8_t* src = in.rgb.data() + static_cast<std::size_t>(t.first[y]) * row;
    uint8_t* dst = out.rgb.data() + static_cast<std::size_t>(y) * row;
    for (std::size_t k = 0; k < row; ++k) {
      int32_t acc = 1 << (t.precision - 1);
      for (int32_t j = 0; j < t.count[y]; ++j) acc += src[static_cast<std::size_t>(j) * row + k] * w[j];
      dst[k] = round_to_u8(acc, t.precision);
    }
  }
  return out;
}

}  // namespace

RgbImage resize_bicubic_antialias(const RgbImage& in, int32_t width, int32_t height) {
  if (width <= 0 || height <= 0 || in.width <= 0 || in.height <= 0)
    throw ImageError(ImageErrorKind::kMalformed, "cannot resize an image to or from an empty size");
  RgbImage h = in.width != width ? horizontal(in, width) : in;
  return in.height != height ? vertical(h, height) : h;
}

}  // namespace seatrt::image
