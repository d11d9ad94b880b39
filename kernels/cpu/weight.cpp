#include "weight.hpp"

#include <array>
#include <cmath>
#include <string>

#include "dtype.hpp"
#include "ops.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

const std::array<float, 256>& e4m3_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = e4m3_to_f32(static_cast<uint8_t>(i));
    return t;
  }();
  return table;
}

// Both E2M1 values of a packed byte: [0] = low nibble (even column), [1] = high.
struct NibblePair {
  float low, high;
};
const std::array<NibblePair, 256>& e2m1_pair_table() {
  static const std::array<NibblePair, 256> table = [] {
    std::array<NibblePair, 256> t{};
    for (int b = 0; b < 256; ++b) {
      t[static_cast<size_t>(b)] = {e2m1_to_f32(static_cast<uint8_t>(b & 0x0F)), e2m1_to_f32(static_cast<uint8_t>(b >> 4))};
    }
    return t;
  }();
  return table;
}

void check_matrix(const seatrt_tensor& t, const char* op, const std::string& name, int64_t rows,
                  int64_t cols) {
  need_ndim(t, op, name.c_str(), 2);
  if (t.shape[0] != rows || t.shape[1] != cols) {
    invalid(op, name + " has shape " + shape_string(t) + ", expected [" + std::to_string(rows) +
                    ", " + std::to_string(cols) + "]");
  }
}

}  // namespace

int32_t weight_layouts(int32_t format, int32_t* layouts, int32_t capacity) {
  int32_t layout;
  if (format == SEATRT_WFMT_DENSE) {
    layout = SEATRT_LAYOUT_DENSE_ROW_MAJOR;
  } else if (format == SEATRT_WFMT_NVFP4) {
    layout = SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR;
  } else {
    unsupported("weight_layouts", "unknown weight format " + std::to_string(format));
  }
  if (capacity < 1) return 0;
  if (!layouts) invalid("weight_layouts", "layouts is NULL");
  layouts[0] = layout;
  return 1;
}

void validate_weight(const seatrt_linear_weight* w, const char* op, const char* name_in) {
  const std::string name(name_in);
  if (!w) invalid(op, name + " is NULL");
  if (w->struct_size < sizeof(seatrt_linear_weight)) invalid(op, name + ".struct_size is too small");
  if (w->out_features < 0 || w->in_features < 0) invalid(op, name + " has negative features");
  const int64_t out = w->out_features;
  const int64_t in = w->in_features;
  if (w->format == SEATRT_WFMT_DENSE) {
    if (w->layout != SEATRT_LAYOUT_DENSE_ROW_MAJOR) {
      unsupported(op, name + ": DENSE layout " + std::to_string(w->layout) +
                          " is not read by the CPU provider (it reads DENSE_ROW_MAJOR)");
    }
    const seatrt_tensor& data = need_tensor(&w->data, op, (name + ".data").c_str());
    need_dtype(data, op, (name + ".data").c_str(), kActivationDtypes);
    check_matrix(data, op, name + ".data", out, in);
    return;
  }
  if (w->format != SEATRT_WFMT_NVFP4) {
    unsupported(op, name + " has unknown format " + std::to_string(w->format));
  }
  if (w->layout != SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR) {
    unsupported(op, name + ": NVFP4 layout " + std::to_string(w->layout) +
                        " is not read by the CPU provider (it reads NVFP4_CT_ROW_MAJOR)");
  }
  if (w->group_size != 16) {
    unsupported(op, name + ": NVFP4 group_size " + std::to_string(w->group_size) + " (only 16)");
  }
  if (in % 16 != 0) invalid(op, name + ": in_features " + std::to_string(in) + " is not a multiple of 16");
  if (!(std::isfinite(w->global_scale) && w->global_scale > 0.0f)) {
    invalid(op, name + ": global_scale " + std::to_string(w->global_scale) + " is not finite and > 0");
  }
  const seatrt_tensor& data = need_tensor(&w->data, op, (name + ".data").c_str());
  need_dtype(data, op, (name + ".data").c_str(), {SEATRT_DTYPE_E2M1X2, SEATRT_DTYPE_U8});
  check_matrix(data, op, name + ".data", out, in / 2);
  const seatrt_tensor& scales = need_tensor(&w->scales, op, (name + ".scales").c_str());
  need_dtype(scales, op, (name + ".scales").c_str(), {SEATRT_DTYPE_F8_E4M3});
  check_matrix(scales, op, name + ".scales", out, in / 16);
}

void decode_weight_row(const seatrt_linear_weight& w, int64_t row, float* dst) {
  const int64_t in = w.in_features;
  if (w.format == SEATRT_WFMT_DENSE) {
    const char* base = static_cast<const char*>(w.data.data);
    load_f32(w.data.dtype, base + row * w.data.strides[0] * static_cast<int64_t>(dtype_size(w.data.dtype)),
             dst, in);
    return;
  }
  const uint8_t* packed = static_cast<const uint8_t*>(w.data.data) + row * w.data.strides[0];
  const uint8_t* scales = static_cast<const uint8_t*>(w.scales.data) + row * w.scales.strides[0];
  const std::array<float, 256>& scale_table = e4m3_table();
  const std::array<NibblePair, 256>& pairs = e2m1_pair_table();
  for (int64_t g = 0; g < in / 16; ++g) {
    const float scale = scale_table[scales[g]] / w.global_scale;  // rounded to fp32 before the multiply, as compressed-tensors does
    const uint8_t* bytes = packed + g * 8;
    float* out = dst + g * 16;
    for (int i = 0; i < 8; ++i) {
      const NibblePair& pair = pairs[bytes[i]];
      out[2 * i] = pair.low * scale;  // low nibble: even column
      out[2 * i + 1] = pair.high * scale;
    }
  }
}

float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  for (; i < n; ++i) acc[i % 8] += a[i] * b[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

void linear_block(const seatrt_linear_weight& w, const float* x, int64_t rows, int64_t n_begin,
                  int64_t n_end, float* y, int64_t y_stride, float* wrow) {
  const int64_t k = w.in_features;
  for (int64_t n = n_begin; n < n_end; ++n) {
    decode_weight_row(w, n, wrow);
    for (int64_t m = 0; m < rows; ++m) y[m * y_stride + (n - n_begin)] = dot(x + m * k, wrow, k);
  }
}

}  // namespace seatrt::cpu
