#include "tensor_view.hpp"

#include <cstring>

#include "dtype.hpp"

namespace seatrt::cpu {

void invalid(const char* op, const std::string& what) {
  throw sdk::Error(SEATRT_ERR_INVALID_ARG, std::string(op) + ": " + what);
}

void unsupported(const char* op, const std::string& what) {
  throw sdk::Error(SEATRT_ERR_UNSUPPORTED, std::string(op) + ": " + what);
}

std::string shape_string(const seatrt_tensor& t) {
  std::string s = "[";
  for (int32_t i = 0; i < t.ndim && i < SEATRT_MAX_DIMS; ++i) {
    if (i) s += ", ";
    s += std::to_string(t.shape[i]);
  }
  return s + "]";
}

int64_t numel(const seatrt_tensor& t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

const seatrt_tensor& need_tensor(const seatrt_tensor* t, const char* op, const char* name) {
  const std::string n(name);
  if (!t) invalid(op, n + " is NULL");
  if (t->struct_size < sizeof(seatrt_tensor)) {
    invalid(op, n + ".struct_size " + std::to_string(t->struct_size) + " is too small");
  }
  if (t->ndim < 1 || t->ndim > SEATRT_MAX_DIMS) {
    invalid(op, n + ".ndim " + std::to_string(t->ndim) + " is outside 1.." +
                    std::to_string(SEATRT_MAX_DIMS));
  }
  int64_t elements = 1;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0) invalid(op, n + " has a negative extent: shape " + shape_string(*t));
    if (t->strides[i] < 0) invalid(op, n + " has a negative stride on axis " + std::to_string(i));
    // Shapes past 2^48 elements are not memory anyone has; refusing them
    // keeps every later index computation free of overflow.
    if (__builtin_mul_overflow(elements, t->shape[i], &elements) || elements > (int64_t{1} << 48)) {
      invalid(op, n + " has an impossible shape " + shape_string(*t));
    }
  }
  if (dtype_size(t->dtype) == 0) invalid(op, n + " has unknown dtype " + dtype_name(t->dtype));
  if (t->device.kind != SEATRT_DEVICE_CPU) {
    invalid(op, n + " is not in host memory (device kind " + std::to_string(t->device.kind) + ")");
  }
  if (!t->data && numel(*t) > 0) invalid(op, n + ".data is NULL");
  if (t->shape[t->ndim - 1] > 1 && t->strides[t->ndim - 1] != 1) {
    invalid(op, n + "'s last axis is not contiguous (stride " +
                    std::to_string(t->strides[t->ndim - 1]) + ")");
  }
  return *t;
}

void need_ndim(const seatrt_tensor& t, const char* op, const char* name, int32_t ndim) {
  if (t.ndim != ndim) {
    invalid(op, std::string(name) + " must have " + std::to_string(ndim) + " axes, has shape " +
                    shape_string(t));
  }
}

void need_dtype(const seatrt_tensor& t, const char* op, const char* name,
                std::initializer_list<int32_t> allowed) {
  std::string list;
  for (int32_t d : allowed) {
    if (d == t.dtype) return;
    list += (list.empty() ? "" : ", ") + dtype_name(d);
  }
  unsupported(op, std::string(name) + " has dtype " + dtype_name(t.dtype) + " (accepted: " + list +
                      ")");
}

void need_dim(const seatrt_tensor& t, const char* op, const char* name, int32_t axis,
              int64_t extent) {
  if (axis >= t.ndim || t.shape[axis] != extent) {
    invalid(op, std::string(name) + " has shape " + shape_string(t) + ", expected extent " +
                    std::to_string(extent) + " on axis " + std::to_string(axis));
  }
}

void need_same_shape(const seatrt_tensor& a, const char* a_name, const seatrt_tensor& b,
                     const char* b_name, const char* op) {
  bool same = a.ndim == b.ndim;
  for (int32_t i = 0; same && i < a.ndim; ++i) same = a.shape[i] == b.shape[i];
  if (!same) {
    invalid(op, std::string(b_name) + " has shape " + shape_string(b) + " but " + a_name +
                    " has shape " + shape_string(a));
  }
}

Rows::Rows(const seatrt_tensor& t)
    : dtype_(t.dtype),
      base_(static_cast<char*>(t.data)),
      esize_(dtype_size(t.dtype)),
      cols_(t.shape[t.ndim - 1]),
      nlead_(t.ndim - 1) {
  rows_ = 1;
  for (int32_t i = 0; i < nlead_; ++i) {
    lead_shape_[i] = t.shape[i];
    lead_stride_[i] = t.strides[i];
    rows_ *= t.shape[i];
  }
}

char* Rows::row_ptr(int64_t r) const {
  if (!base_) return nullptr;  // only for empty tensors, whose rows are never read
  int64_t offset = 0;
  for (int32_t i = nlead_ - 1; i >= 0; --i) {
    offset += (r % lead_shape_[i]) * lead_stride_[i];
    r /= lead_shape_[i];
  }
  return base_ + offset * static_cast<int64_t>(esize_);
}

void Rows::load(int64_t r, float* dst) const { load_f32(dtype_, row_ptr(r), dst, cols_); }

void Rows::store(int64_t r, const float* src) const { store_f32(dtype_, src, row_ptr(r), cols_); }

std::vector<int64_t> read_indices(const seatrt_tensor& t, const char* op, const char* name) {
  need_dtype(t, op, name, {SEATRT_DTYPE_I32, SEATRT_DTYPE_I64});
  const Rows rows(t);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(rows.rows() * rows.cols()));
  for (int64_t r = 0; r < rows.rows(); ++r) {
    const char* p = rows.row_ptr(r);
    for (int64_t c = 0; c < rows.cols(); ++c) {
      if (t.dtype == SEATRT_DTYPE_I32) {
        int32_t v;
        std::memcpy(&v, p + c * 4, 4);
        out.push_back(v);
      } else {
        int64_t v;
        std::memcpy(&v, p + c * 8, 8);
        out.push_back(v);
      }
    }
  }
  return out;
}

}  // namespace seatrt::cpu
