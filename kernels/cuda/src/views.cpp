#include "views.hpp"

#include "seatrt/cpp/plugin.hpp"

namespace seatrt::cuda {

void invalid(const std::string& op, const std::string& what) {
  throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda " + op + ": " + what);
}
void unsupported(const std::string& op, const std::string& what) {
  throw sdk::Error(SEATRT_ERR_UNSUPPORTED, "cuda " + op + ": " + what);
}

const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case SEATRT_DTYPE_F32: return "F32";
    case SEATRT_DTYPE_F16: return "F16";
    case SEATRT_DTYPE_BF16: return "BF16";
    case SEATRT_DTYPE_F8_E4M3: return "F8_E4M3";
    case SEATRT_DTYPE_F8_E5M2: return "F8_E5M2";
    case SEATRT_DTYPE_U8: return "U8";
    case SEATRT_DTYPE_I8: return "I8";
    case SEATRT_DTYPE_I32: return "I32";
    case SEATRT_DTYPE_I64: return "I64";
    case SEATRT_DTYPE_U32: return "U32";
    case SEATRT_DTYPE_E2M1X2: return "E2M1X2";
    case SEATRT_DTYPE_F64: return "F64";
    case SEATRT_DTYPE_BOOL: return "BOOL";
    default: return "invalid dtype";
  }
}

size_t dtype_bytes(int32_t dtype) {
  switch (dtype) {
    case SEATRT_DTYPE_F32: case SEATRT_DTYPE_I32: case SEATRT_DTYPE_U32: return 4;
    case SEATRT_DTYPE_F16: case SEATRT_DTYPE_BF16: return 2;
    case SEATRT_DTYPE_F8_E4M3: case SEATRT_DTYPE_F8_E5M2: case SEATRT_DTYPE_U8: case SEATRT_DTYPE_I8:
    case SEATRT_DTYPE_E2M1X2: case SEATRT_DTYPE_BOOL: return 1;
    case SEATRT_DTYPE_I64: case SEATRT_DTYPE_F64: return 8;
    default: return 0;
  }
}

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

}  // namespace seatrt::cuda
