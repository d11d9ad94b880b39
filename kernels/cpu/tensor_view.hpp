// Argument checking and row access for the CPU provider's operations.
// Every check throws seatrt::sdk::Error with a message "<op>: <what>", which
// the provider table turns into a status; an operation never touches memory
// before its arguments have passed.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "seatrt/cpp/plugin.hpp"
#include "seatrt/seatrt.h"

namespace seatrt::cpu {

[[noreturn]] void invalid(const char* op, const std::string& what);
[[noreturn]] void unsupported(const char* op, const std::string& what);

// "[2, 3, 4]".
std::string shape_string(const seatrt_tensor& t);
int64_t numel(const seatrt_tensor& t);

// Checks a tensor descriptor: non-NULL, struct_size, ndim in 1..SEATRT_MAX_DIMS,
// non-negative shape, known dtype, CPU device, data non-NULL unless empty,
// last axis contiguous (stride 1, unless it has extent 1).
const seatrt_tensor& need_tensor(const seatrt_tensor* t, const char* op, const char* name);
void need_ndim(const seatrt_tensor& t, const char* op, const char* name, int32_t ndim);
void need_dtype(const seatrt_tensor& t, const char* op, const char* name,
                std::initializer_list<int32_t> allowed);
void need_dim(const seatrt_tensor& t, const char* op, const char* name, int32_t axis,
              int64_t extent);
void need_same_shape(const seatrt_tensor& a, const char* a_name, const seatrt_tensor& b,
                     const char* b_name, const char* op);

// The activation dtypes every op accepts.
inline constexpr std::initializer_list<int32_t> kActivationDtypes = {
    SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F16};

// A tensor seen as rows over its last axis; leading axes may be strided.
class Rows {
 public:
  Rows() = default;
  explicit Rows(const seatrt_tensor& t);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int32_t dtype() const { return dtype_; }
  // Address of the first element of row r.
  char* row_ptr(int64_t r) const;
  void load(int64_t r, float* dst) const;         // cols() floats
  void store(int64_t r, const float* src) const;  // cols() floats

 private:
  int32_t dtype_ = SEATRT_DTYPE_INVALID;
  char* base_ = nullptr;
  size_t esize_ = 0;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  int32_t nlead_ = 0;
  int64_t lead_shape_[SEATRT_MAX_DIMS] = {};
  int64_t lead_stride_[SEATRT_MAX_DIMS] = {};
};

// Reads a small integer tensor (I32 or I64, 1-D or 2-D contiguous) into a vector.
std::vector<int64_t> read_indices(const seatrt_tensor& t, const char* op, const char* name);

}  // namespace seatrt::cpu
