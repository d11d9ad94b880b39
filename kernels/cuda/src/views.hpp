// Argument checking for the op slots: turns ABI tensors into the kernels'
// plain views, throwing seatrt::sdk::Error (INVALID_ARG / UNSUPPORTED) with a
// message naming the op and the argument at fault.
#pragma once

#include <cstdint>
#include <string>

#include "launch.hpp"
#include "seatrt/seatrt.h"

namespace seatrt::cuda {

[[noreturn]] void invalid(const std::string& op, const std::string& what);
[[noreturn]] void unsupported(const std::string& op, const std::string& what);

const char* dtype_name(int32_t dtype);
size_t dtype_bytes(int32_t dtype);  // 0 for unknown
bool is_activation_dtype(int32_t dtype);  // F32, BF16, F16

// Checks that `t` is present, on the CUDA device and has data.
const seatrt_tensor& need(const std::string& op, const char* name, const seatrt_tensor* t);

// A tensor of ndim >= 1 as [prod(leading dims), last dim] (leading dims must
// collapse into one stride; the last axis must be contiguous).
Mat as_mat(const std::string& op, const char* name, const seatrt_tensor& t);
// A tensor of exactly 3 dims.
View3 as_view3(const std::string& op, const char* name, const seatrt_tensor& t);

// Element count of a tensor.
int64_t numel(const seatrt_tensor& t);

// Requires dtype to be one of the activation dtypes.
void need_activation_dtype(const std::string& op, const char* name, const seatrt_tensor& t);
void need_dtype(const std::string& op, const char* name, const seatrt_tensor& t, int32_t dtype);
void need_contiguous(const std::string& op, const char* name, const seatrt_tensor& t);

// An optional [n] gain vector (NULL weight = none): present, an activation
// dtype, contiguous, n entries.
Gain optional_gain(const std::string& op, const char* name, const seatrt_tensor* weight, int64_t n);
// eps of a norm: finite and >= 0.
void need_eps(const std::string& op, float eps);

// Checks one Linear weight (formats and layouts this provider reads) and
// says how the kernels read it (ops_linear.cpp).
WeightRef weight_ref(const std::string& op, const std::string& name, const seatrt_linear_weight& w);

}  // namespace seatrt::cuda
