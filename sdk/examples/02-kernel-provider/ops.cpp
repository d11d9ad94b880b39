// Example 2: two operations, F32 only, on contiguous rows.  supports() and
// run() share one check per kind: the SDK's read_args (the args struct as
// this build knows it, required pointers present), then what this provider
// handles.  Anything else it declines, and the host sends the op to the
// seat's fallback provider.
#include <cmath>
#include <string>

#include "example_kernels.hpp"
#include "seatrt/cpp/op_registry.hpp"

namespace example_kernels {
namespace {

using seatrt::sdk::Error;

int64_t element_count(const seatrt_tensor& t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

// Why this example cannot read `t` ("" when it can): dense row-major F32
// host tensors only.
std::string f32_contiguous_problem(const seatrt_tensor* t, const char* what) {
  if (t == nullptr) return std::string(what) + " is NULL";
  if (t->dtype != SEATRT_DTYPE_F32) return std::string(what) + " is not F32";
  if (t->device.kind != SEATRT_DEVICE_CPU) return std::string(what) + " is not in host memory";
  if (t->ndim < 1 || t->ndim > SEATRT_MAX_DIMS) return std::string(what) + " has a bad ndim";
  int64_t stride = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] > 1 && t->strides[d] != stride) return std::string(what) + " is not contiguous";
    stride *= t->shape[d];
  }
  return "";
}

bool uses_b(int32_t op) { return op == SEATRT_EW_ADD || op == SEATRT_EW_MUL; }

std::string elementwise_problem(const seatrt_elementwise_args& a) {
  if (a.op < SEATRT_EW_ADD || a.op > SEATRT_EW_COPY) return "elementwise op " + std::to_string(a.op) + " not handled";
  for (const auto& p : {f32_contiguous_problem(a.a, "a"), f32_contiguous_problem(a.out, "out"),
                        uses_b(a.op) ? f32_contiguous_problem(a.b, "b") : std::string()})
    if (!p.empty()) return p;
  const int64_t n = element_count(*a.a);
  if (element_count(*a.out) != n) return "out differs from a in size";
  if (uses_b(a.op)) {
    const int64_t b_n = element_count(*a.b);  // broadcast over leading dims
    if (b_n == 0 || n % b_n != 0) return "b does not broadcast to a";
  }
  return "";
}

std::string rms_norm_problem(const seatrt_rms_norm_args& a) {
  for (const auto& p : {f32_contiguous_problem(a.x, "x"), f32_contiguous_problem(a.out, "out"),
                        a.weight ? f32_contiguous_problem(a.weight, "weight") : std::string()})
    if (!p.empty()) return p;
  const int64_t cols = a.x->shape[a.x->ndim - 1];
  if (cols <= 0 || element_count(*a.out) != element_count(*a.x)) return "out differs from x in size";
  if (a.weight && element_count(*a.weight) != cols) return "weight length differs from x's last axis";
  return "";
}

void run_elementwise(const seatrt_elementwise_args& args) {
  const int64_t n = element_count(*args.a);
  const float* a = static_cast<const float*>(args.a->data);
  float* out = static_cast<float*>(args.out->data);
  const float* b = uses_b(args.op) ? static_cast<const float*>(args.b->data) : nullptr;
  const int64_t b_n = uses_b(args.op) ? element_count(*args.b) : 1;
  const float alpha = args.alpha;
  for (int64_t i = 0; i < n; ++i) {
    switch (args.op) {
      case SEATRT_EW_ADD: out[i] = a[i] + b[i % b_n]; break;
      case SEATRT_EW_MUL: out[i] = a[i] * b[i % b_n]; break;
      case SEATRT_EW_SCALE: out[i] = a[i] * alpha; break;
      case SEATRT_EW_SOFTCAP: out[i] = alpha * std::tanh(a[i] / alpha); break;
      default: out[i] = a[i]; break;  // SEATRT_EW_COPY (F32 to F32)
    }
  }
}

void run_rms_norm(const seatrt_rms_norm_args& args) {
  const int64_t cols = args.x->shape[args.x->ndim - 1];
  const int64_t n = element_count(*args.x);
  const float* w = args.weight ? static_cast<const float*>(args.weight->data) : nullptr;
  const float* x = static_cast<const float*>(args.x->data);
  float* out = static_cast<float*>(args.out->data);
  for (int64_t row = 0; row < n / cols; ++row) {
    double sum_squares = 0;  // double: a long row of fp32 squares loses bits
    for (int64_t c = 0; c < cols; ++c) sum_squares += double(x[row * cols + c]) * x[row * cols + c];
    const float inv = static_cast<float>(1.0 / std::sqrt(sum_squares / double(cols) + args.eps));
    for (int64_t c = 0; c < cols; ++c)
      out[row * cols + c] = x[row * cols + c] * inv * (w ? w[c] + args.weight_offset : 1.0f);
  }
}

// The one check of both entries: "" when this provider runs `op`, else why
// not.  `malformed` tells a broken op (INVALID_ARG) from one declined.
template <typename Fn>
std::string check(const seatrt_op* op, bool* malformed, Fn&& run_it) {
  std::string why;
  *malformed = false;
  const int32_t kind = op ? op->kind : SEATRT_OP_INVALID;
  if (kind == SEATRT_OP_ELEMENTWISE) {
    seatrt_elementwise_args a;
    if (!seatrt::sdk::read_args<SEATRT_OP_ELEMENTWISE>(op, a, &why)) {
      *malformed = true;
      return why;
    }
    why = elementwise_problem(a);
    if (why.empty()) run_it([&] { run_elementwise(a); });
    return why;
  }
  if (kind == SEATRT_OP_RMS_NORM) {
    seatrt_rms_norm_args a;
    if (!seatrt::sdk::read_args<SEATRT_OP_RMS_NORM>(op, a, &why)) {
      *malformed = true;
      return why;
    }
    why = rms_norm_problem(a);
    if (why.empty()) run_it([&] { run_rms_norm(a); });
    return why;
  }
  return "example-cpu does not run '" + seatrt::sdk::op_name(kind) + "'";
}

}  // namespace

int32_t supports(seatrt_kernel_context*, const seatrt_op* op) {
  bool malformed = false;
  return check(op, &malformed, [](auto&&) {}).empty() ? 1 : 0;
}

seatrt_status* run(seatrt_kernel_context*, seatrt_stream, const seatrt_op* op) {
  return seatrt::sdk::guard([&] {
    bool malformed = false;
    const std::string why = check(op, &malformed, [](auto&& work) { work(); });
    if (!why.empty()) throw Error(malformed ? SEATRT_ERR_INVALID_ARG : SEATRT_ERR_UNSUPPORTED, "example-cpu: " + why);
  });
}

}  // namespace example_kernels
