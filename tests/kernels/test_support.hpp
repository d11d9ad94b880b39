// Helpers for the CPU kernel tests: owning host tensors, random fills, the
// error check, and comparisons.  References live in the test files and are
// written independently of kernels/cpu (double precision, naive loops).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ops.hpp"
#include "seatrt/cpp/plugin.hpp"
#include "seatrt/seatrt.h"

namespace seatrt::test {

// Independent scalar codecs for references (not kernels/cpu's).
inline double bf16_value(uint16_t bits) {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
// Nearest bf16 by comparing the two neighbours' distances; ties to even.
inline uint16_t bf16_nearest(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t lo = static_cast<uint16_t>(x >> 16);
  const uint16_t hi = static_cast<uint16_t>(lo + 1);
  const double dl = std::fabs(static_cast<double>(f) - bf16_value(lo));
  const double dh = std::fabs(static_cast<double>(f) - bf16_value(hi));
  if (dl < dh) return lo;
  if (dh < dl) return hi;
  return (lo & 1) ? hi : lo;
}
// E4M3FN by its definition: bias 7, subnormals at exponent 0, 0x7F NaN.
inline double e4m3_value(uint8_t b) {
  const int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  const double mag = e == 0 ? m / 8.0 * std::pow(2.0, -6) : (1.0 + m / 8.0) * std::pow(2.0, e - 7);
  return s ? -mag : mag;
}
// E2M1 by its definition: bias 1, value = e==0 ? m*0.5 : 2^(e-1)*(1+m/2).
inline double e2m1_value(uint8_t code) {
  const int s = (code >> 3) & 1, e = (code >> 1) & 3, m = code & 1;
  const double mag = e == 0 ? m * 0.5 : std::pow(2.0, e - 1) * (1.0 + m / 2.0);
  return s ? -mag : mag;
}

// A contiguous host tensor that owns its bytes.
class Tensor {
 public:
  Tensor() = default;
  Tensor(int32_t dtype, std::vector<int64_t> shape);
  // Copies re-point the descriptor at their own bytes.
  Tensor(const Tensor& other) : desc_(other.desc_), bytes_(other.bytes_), numel_(other.numel_) {
    desc_.data = bytes_.data();
  }
  Tensor& operator=(const Tensor& other) {
    desc_ = other.desc_;
    bytes_ = other.bytes_;
    numel_ = other.numel_;
    desc_.data = bytes_.data();
    return *this;
  }
  Tensor(Tensor&&) = default;
  Tensor& operator=(Tensor&&) = default;
  seatrt_tensor* get() { return &desc_; }
  const seatrt_tensor* get() const { return &desc_; }
  seatrt_tensor desc() const { return desc_; }
  int64_t numel() const { return numel_; }
  int32_t dtype() const { return desc_.dtype; }
  double at(int64_t i) const;  // float dtypes
  void set(int64_t i, double v);
  std::vector<double> values() const;
  template <typename T>
  T* as() { return reinterpret_cast<T*>(bytes_.data()); }
  unsigned char* bytes() { return bytes_.data(); }

 private:
  seatrt_tensor desc_{};
  std::vector<unsigned char> bytes_;
  int64_t numel_ = 0;
};

// A strided view of part of a tensor (same dtype and memory).
seatrt_tensor view(const Tensor& base, std::vector<int64_t> shape, std::vector<int64_t> strides,
                   int64_t offset_elements);

Tensor random_tensor(std::mt19937& rng, int32_t dtype, std::vector<int64_t> shape, double lo = -1.0,
                     double hi = 1.0);
Tensor int_tensor(int32_t dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values);

// max |a - e| / max |e| (1 when e is all zero and a is not).
double max_rel_err(const std::vector<double>& actual, const std::vector<double>& expected);

// Equal element values (the dtype's values as doubles: a fused op against
// the single ops it stands for).
inline bool bitwise_equal(const Tensor& a, const Tensor& b) { return a.values() == b.values(); }

// y [m, n] = x [m, k] * w [n, k]^T in double (the Linear reference).
std::vector<double> matmul_t(const std::vector<double>& x, const std::vector<double>& w, int64_t m, int64_t n,
                             int64_t k);

// Runs `body`; returns the status code of the sdk::Error it threw (SEATRT_OK
// if none) and stores the message.
seatrt_status_code error_of(const std::function<void()>& body, std::string* message = nullptr);

// A NVFP4 weight with random packed values and scales, owning its tensors.
struct Nvfp4Weight {
  Tensor packed;  // E2M1X2 [out, in/2]
  Tensor scales;  // F8_E4M3 [out, in/16]
  seatrt_linear_weight weight{};
  // The weight decoded by the definitions above, in double.
  std::vector<double> dense() const;
};
Nvfp4Weight random_nvfp4(std::mt19937& rng, int64_t out, int64_t in, float global_scale);

struct DenseWeight {
  Tensor data;
  seatrt_linear_weight weight{};
};
DenseWeight random_dense(std::mt19937& rng, int32_t dtype, int64_t out, int64_t in, double range);

}  // namespace seatrt::test
