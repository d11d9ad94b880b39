// Example 2: two operations, F32 only, on contiguous rows.  Argument errors
// are statuses naming the problem, never crashes.
#include <cmath>
#include <string>

#include "example_kernels.hpp"

namespace example_kernels {
namespace {

using seatrt::sdk::Error;

int64_t element_count(const seatrt_tensor& t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

// This example handles dense row-major F32 host tensors only.
void require_f32_contiguous(const seatrt_tensor* t, const char* what) {
  if (t == nullptr) throw Error(SEATRT_ERR_INVALID_ARG, std::string(what) + " is NULL");
  if (t->dtype != SEATRT_DTYPE_F32)
    throw Error(SEATRT_ERR_UNSUPPORTED, std::string("example-cpu: ") + what + " must be F32");
  if (t->device.kind != SEATRT_DEVICE_CPU)
    throw Error(SEATRT_ERR_INVALID_ARG, std::string(what) + " is not in host memory");
  if (t->ndim < 1 || t->ndim > SEATRT_MAX_DIMS)
    throw Error(SEATRT_ERR_INVALID_ARG, std::string(what) + " has a bad ndim");
  int64_t stride = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] > 1 && t->strides[d] != stride)
      throw Error(SEATRT_ERR_UNSUPPORTED, std::string("example-cpu: ") + what + " must be contiguous");
    stride *= t->shape[d];
  }
}

}  // namespace

seatrt_status* elementwise(seatrt_kernel_context*, seatrt_stream,
                           const seatrt_elementwise_args* args) {
  return seatrt::sdk::guard([&] {
    require_f32_contiguous(args->a, "a");
    require_f32_contiguous(args->out, "out");
    const int64_t n = element_count(*args->a);
    if (element_count(*args->out) != n) throw Error(SEATRT_ERR_INVALID_ARG, "out differs from a in size");
    const float* a = static_cast<const float*>(args->a->data);
    float* out = static_cast<float*>(args->out->data);
    const float alpha = args->alpha;
    const float* b = nullptr;
    int64_t b_n = 0;
    if (args->op == SEATRT_EW_ADD || args->op == SEATRT_EW_MUL) {
      require_f32_contiguous(args->b, "b");
      b = static_cast<const float*>(args->b->data);
      b_n = element_count(*args->b);  // broadcast over leading dims
      if (b_n == 0 || n % b_n != 0) throw Error(SEATRT_ERR_INVALID_ARG, "b does not broadcast to a");
    }
    for (int64_t i = 0; i < n; ++i) {
      switch (args->op) {
        case SEATRT_EW_ADD: out[i] = a[i] + b[i % b_n]; break;
        case SEATRT_EW_MUL: out[i] = a[i] * b[i % b_n]; break;
        case SEATRT_EW_SCALE: out[i] = a[i] * alpha; break;
        case SEATRT_EW_SOFTCAP: out[i] = alpha * std::tanh(a[i] / alpha); break;
        case SEATRT_EW_COPY: out[i] = a[i]; break;
        default: throw Error(SEATRT_ERR_UNSUPPORTED, "unknown elementwise op " + std::to_string(args->op));
      }
    }
  });
}

seatrt_status* rms_norm(seatrt_kernel_context*, seatrt_stream, const seatrt_rms_norm_args* args) {
  return seatrt::sdk::guard([&] {
    require_f32_contiguous(args->x, "x");
    require_f32_contiguous(args->out, "out");
    const int64_t cols = args->x->shape[args->x->ndim - 1];
    const int64_t n = element_count(*args->x);
    if (cols <= 0 || element_count(*args->out) != n)
      throw Error(SEATRT_ERR_INVALID_ARG, "out differs from x in size");
    const float* w = nullptr;
    if (args->weight) {
      require_f32_contiguous(args->weight, "weight");
      if (element_count(*args->weight) != cols)
        throw Error(SEATRT_ERR_INVALID_ARG, "weight length differs from x's last axis");
      w = static_cast<const float*>(args->weight->data);
    }
    const float* x = static_cast<const float*>(args->x->data);
    float* out = static_cast<float*>(args->out->data);
    for (int64_t row = 0; row < n / cols; ++row) {
      double sum_squares = 0;  // double: a long row of fp32 squares loses bits
      for (int64_t c = 0; c < cols; ++c) sum_squares += double(x[row * cols + c]) * x[row * cols + c];
      const float inv = static_cast<float>(1.0 / std::sqrt(sum_squares / double(cols) + args->eps));
      for (int64_t c = 0; c < cols; ++c)
        out[row * cols + c] = x[row * cols + c] * inv * (w ? w[c] : 1.0f);
    }
  });
}

}  // namespace example_kernels
