#include "test_support.hpp"

#include <algorithm>

#include "dtype.hpp"

namespace seatrt::test {

Tensor::Tensor(int32_t dtype, std::vector<int64_t> shape) {
  desc_.struct_size = sizeof(seatrt_tensor);
  desc_.dtype = dtype;
  desc_.ndim = static_cast<int32_t>(shape.size());
  numel_ = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    desc_.shape[i] = shape[i];
    desc_.strides[i] = numel_;
    numel_ *= shape[i];
  }
  bytes_.assign(static_cast<size_t>(numel_) * cpu::dtype_size(dtype) + 1, 0);
  desc_.data = bytes_.data();
  desc_.device = {SEATRT_DEVICE_CPU, 0};
}

double Tensor::at(int64_t i) const {
  float f;
  cpu::load_f32(desc_.dtype, bytes_.data() + i * static_cast<int64_t>(cpu::dtype_size(desc_.dtype)), &f, 1);
  return f;
}

void Tensor::set(int64_t i, double v) {
  const float f = static_cast<float>(v);
  cpu::store_f32(desc_.dtype, &f, bytes_.data() + i * static_cast<int64_t>(cpu::dtype_size(desc_.dtype)), 1);
}

std::vector<double> Tensor::values() const {
  std::vector<double> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[static_cast<size_t>(i)] = at(i);
  return v;
}

seatrt_tensor view(const Tensor& base, std::vector<int64_t> shape, std::vector<int64_t> strides,
                   int64_t offset_elements) {
  seatrt_tensor t = base.desc();
  t.ndim = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    t.shape[i] = shape[i];
    t.strides[i] = strides[i];
  }
  t.data = static_cast<char*>(t.data) + offset_elements * static_cast<int64_t>(cpu::dtype_size(t.dtype));
  return t;
}

Tensor random_tensor(std::mt19937& rng, int32_t dtype, std::vector<int64_t> shape, double lo, double hi) {
  Tensor t(dtype, std::move(shape));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, dist(rng));
  return t;
}

Tensor int_tensor(int32_t dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == SEATRT_DTYPE_I32) t.as<int32_t>()[i] = static_cast<int32_t>(values[i]);
    else t.as<int64_t>()[i] = values[i];
  }
  return t;
}

std::vector<double> matmul_t(const std::vector<double>& x, const std::vector<double>& w, int64_t m, int64_t n,
                             int64_t k) {
  std::vector<double> y(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        y[static_cast<size_t>(i * n + j)] += x[static_cast<size_t>(i * k + p)] * w[static_cast<size_t>(j * k + p)];
  return y;
}

double max_rel_err(const std::vector<double>& actual, const std::vector<double>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double d = std::fabs(actual[i] - expected[i]);
    if (std::isnan(d)) return INFINITY;
    num = std::max(num, d);
    den = std::max(den, std::fabs(expected[i]));
  }
  if (den == 0.0) return num == 0.0 ? 0.0 : 1.0;
  return num / den;
}

seatrt_status_code error_of(const std::function<void()>& body, std::string* message) {
  try {
    body();
  } catch (const sdk::Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return SEATRT_OK;
}

std::vector<double> Nvfp4Weight::dense() const {
  const int64_t out = weight.out_features, in = weight.in_features;
  std::vector<double> w(static_cast<size_t>(out * in));
  const uint8_t* p = static_cast<const uint8_t*>(weight.data.data);
  const uint8_t* s = static_cast<const uint8_t*>(weight.scales.data);
  for (int64_t r = 0; r < out; ++r) {
    for (int64_t c = 0; c < in; ++c) {
      const uint8_t byte = p[r * (in / 2) + c / 2];
      const uint8_t code = (c % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
      // fp4 * (scale / global_scale), the scale quotient rounded to fp32 as the format's reference does.
      const float quotient = static_cast<float>(e4m3_value(s[r * (in / 16) + c / 16])) / weight.global_scale;
      w[static_cast<size_t>(r * in + c)] = e2m1_value(code) * static_cast<double>(quotient);
    }
  }
  return w;
}

Nvfp4Weight random_nvfp4(std::mt19937& rng, int64_t out, int64_t in, float global_scale) {
  Nvfp4Weight w;
  w.packed = Tensor(SEATRT_DTYPE_E2M1X2, {out, in / 2});
  w.scales = Tensor(SEATRT_DTYPE_F8_E4M3, {out, in / 16});
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> scale(0x20, 0x50);  // 2^-3 .. 2^3: keeps values moderate
  for (int64_t i = 0; i < w.packed.numel(); ++i) w.packed.as<uint8_t>()[i] = static_cast<uint8_t>(byte(rng));
  for (int64_t i = 0; i < w.scales.numel(); ++i) w.scales.as<uint8_t>()[i] = static_cast<uint8_t>(scale(rng));
  w.weight.struct_size = sizeof(seatrt_linear_weight);
  w.weight.format = SEATRT_WFMT_NVFP4;
  w.weight.layout = SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR;
  w.weight.group_size = 16;
  w.weight.out_features = out;
  w.weight.in_features = in;
  w.weight.data = w.packed.desc();
  w.weight.scales = w.scales.desc();
  w.weight.global_scale = global_scale;
  return w;
}

DenseWeight random_dense(std::mt19937& rng, int32_t dtype, int64_t out, int64_t in, double range) {
  DenseWeight w;
  w.data = random_tensor(rng, dtype, {out, in}, -range, range);
  w.weight.struct_size = sizeof(seatrt_linear_weight);
  w.weight.format = SEATRT_WFMT_DENSE;
  w.weight.layout = SEATRT_LAYOUT_DENSE_ROW_MAJOR;
  w.weight.out_features = out;
  w.weight.in_features = in;
  w.weight.data = w.data.desc();
  w.weight.scales.struct_size = sizeof(seatrt_tensor);
  w.weight.global_scale = 1.0f;
  return w;
}

}  // namespace seatrt::test
