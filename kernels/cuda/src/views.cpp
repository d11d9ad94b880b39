#include "views.hpp"

#include "seatrt/cpp/dtype.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::cuda {

void invalid(const std::string& op, const std::string& what) {
  throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda " + op + ": " + what);
}
void unsupported(const std::string& op, const std::string& what) {
  throw sdk::Error(SEATRT_ERR_UNSUPPORTED, "cuda " + op + ": " + what);
}

const char* dtype_name(int32_t dtype) {
  const char* name = sdk::dtype_name(dtype);
  return name ? name : "invalid dtype";
}

size_t dtype_bytes(int32_t dtype) { return sdk::dtype_size(dtype); }

bool is_activation_dtype(int32_t dtype) {
  return dtype == SEATRT_DTYPE_F32 || dtype == SEATRT_DTYPE_BF16 || dtype == SEATRT_DTYPE_F16;
}

const seatrt_tensor& need(const std::string& op, const char* name, const seatrt_tensor* t) {
  if (!t) invalid(op, std::string(name) + " is missing");
  if (t->ndim < 1 || t->ndim > SEATRT_MAX_DIMS)
    invalid(op, std::string(name) + " has ndim " + std::to_string(t->ndim));
  for (int i = 0; i < t->ndim; ++i)
    if (t->shape[i] < 0) invalid(op, std::string(name) + " has a negative dimension");
  if (t->device.kind != SEATRT_DEVICE_CUDA)
    invalid(op, std::string(name) + " is not in CUDA device memory");
  if (!t->data && numel(*t) > 0) invalid(op, std::string(name) + " has no data");
  if (dtype_bytes(t->dtype) == 0) invalid(op, std::string(name) + " has an unknown dtype");
  return *t;
}

int64_t numel(const seatrt_tensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

Mat as_mat(const std::string& op, const char* name, const seatrt_tensor& t) {
  const int nd = t.ndim;
  if (t.shape[nd - 1] > 1 && t.strides[nd - 1] != 1)
    unsupported(op, std::string(name) + ": the last axis must be contiguous");
  Mat m;
  m.data = t.data;
  m.dtype = t.dtype;
  m.cols = t.shape[nd - 1];
  m.rows = 1;
  for (int i = 0; i < nd - 1; ++i) m.rows *= t.shape[i];
  m.row_stride = nd >= 2 ? t.strides[nd - 2] : m.cols;
  for (int i = 0; i + 2 < nd; ++i)
    if (t.shape[i] > 1 && t.strides[i] != t.strides[i + 1] * t.shape[i + 1])
      unsupported(op, std::string(name) + ": leading axes must collapse into one stride");
  return m;
}

View3 as_view3(const std::string& op, const char* name, const seatrt_tensor& t) {
  if (t.ndim != 3) invalid(op, std::string(name) + " must have 3 dims, has " + std::to_string(t.ndim));
  if (t.shape[2] > 1 && t.strides[2] != 1)
    unsupported(op, std::string(name) + ": the last axis must be contiguous");
  View3 v;
  v.data = t.data;
  v.dtype = t.dtype;
  v.d0 = t.shape[0];
  v.d1 = t.shape[1];
  v.d2 = t.shape[2];
  v.s0 = t.strides[0];
  v.s1 = t.strides[1];
  return v;
}

void need_activation_dtype(const std::string& op, const char* name, const seatrt_tensor& t) {
  if (!is_activation_dtype(t.dtype))
    unsupported(op, std::string(name) + " has dtype " + dtype_name(t.dtype) + " (F32, BF16 or F16 expected)");
}

void need_dtype(const std::string& op, const char* name, const seatrt_tensor& t, int32_t dtype) {
  if (t.dtype != dtype)
    invalid(op, std::string(name) + " has dtype " + dtype_name(t.dtype) + ", " + dtype_name(dtype) + " expected");
}

void need_contiguous(const std::string& op, const char* name, const seatrt_tensor& t) {
  int64_t expect = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] > 1 && t.strides[i] != expect)
      unsupported(op, std::string(name) + " must be contiguous");
    expect *= t.shape[i];
  }
}

// An optional [n] gain vector (NULL weight = none).
Gain optional_gain(const std::string& op, const char* name, const seatrt_tensor* weight, int64_t n) {
  if (!weight) return {};
  const auto& w = need(op, name, weight);
  need_activation_dtype(op, name, w);
  need_contiguous(op, name, w);
  if (numel(w) != n) invalid(op, std::string(name) + " must have N = " + std::to_string(n) + " entries");
  return Gain{w.data, w.dtype};
}

void need_eps(const std::string& op, float eps) {
  if (!(eps >= 0.0f) || !(eps <= 3.4e38f)) invalid(op, "eps must be finite and >= 0");
}

}  // namespace seatrt::cuda
