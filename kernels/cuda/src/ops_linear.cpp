// Linear and MoE: weight checks (formats and layouts this provider reads),
// the device tables of expert weights, and the launches.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "context.hpp"
#include "convert.hpp"
#include "ops.hpp"
#include "prefill.hpp"
#include "seatrt/cpp/plugin.hpp"
#include "views.hpp"

namespace seatrt::cuda {

WeightRef weight_ref(const std::string& op, const std::string& name, const seatrt_linear_weight& w) {
  if (w.struct_size < sizeof(uint32_t)) invalid(op, name + ".struct_size is 0");
  if (w.out_features < 1 || w.in_features < 1) invalid(op, name + " has no features");
  const seatrt_tensor& d = need(op, (name + ".data").c_str(), &w.data);
  if (d.ndim != 2 || d.shape[0] != w.out_features) invalid(op, name + ".data must be [out, ...]");
  if (d.shape[1] > 1 && d.strides[1] != 1) unsupported(op, name + ".data rows must be contiguous");
  WeightRef r;
  r.data = d.data;
  if (w.format == SEATRT_WFMT_DENSE) {
    if (w.layout != SEATRT_LAYOUT_DENSE_ROW_MAJOR) unsupported(op, name + ": dense weights must be row-major");
    if (d.shape[1] != w.in_features) invalid(op, name + ".data must be [out, in]");
    switch (d.dtype) {
      case SEATRT_DTYPE_BF16: r.kind = int32_t(WeightKind::DenseBf16); break;
      case SEATRT_DTYPE_F16: r.kind = int32_t(WeightKind::DenseF16); break;
      case SEATRT_DTYPE_F32: r.kind = int32_t(WeightKind::DenseF32); break;
      default: unsupported(op, name + ": dense dtype " + dtype_name(d.dtype));
    }
    r.data_row_bytes = d.strides[0] * static_cast<int64_t>(dtype_bytes(d.dtype));
    return r;
  }
  if (w.format != SEATRT_WFMT_NVFP4) unsupported(op, name + ": unknown weight format " + std::to_string(w.format));
  if (w.group_size != 16) invalid(op, name + ": NVFP4 group_size must be 16");
  if (w.in_features % 16 != 0) invalid(op, name + ": in_features must be a multiple of 16");
  if (d.dtype != SEATRT_DTYPE_E2M1X2 && d.dtype != SEATRT_DTYPE_U8) invalid(op, name + ".data must be E2M1X2");
  if (d.shape[1] != w.in_features / 2) invalid(op, name + ".data must be [out, in/2]");
  if (!std::isfinite(w.global_scale) || !(w.global_scale > 0.0f)) invalid(op, name + ": global_scale must be > 0");
  const seatrt_tensor& sc = need(op, (name + ".scales").c_str(), &w.scales);
  if (sc.ndim != 2 || sc.shape[0] != w.out_features || sc.shape[1] != w.in_features / 16)
    invalid(op, name + ".scales must be [out, in/16]");
  if (sc.shape[1] > 1 && sc.strides[1] != 1) unsupported(op, name + ".scales rows must be contiguous");
  if (w.layout == SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR) {
    if (sc.dtype != SEATRT_DTYPE_F8_E4M3 && sc.dtype != SEATRT_DTYPE_U8) invalid(op, name + ".scales must be F8_E4M3");
    r.kind = int32_t(WeightKind::Fp4E4m3Scales);
  } else if (w.layout == SEATRT_LAYOUT_NVFP4_SM90_TILED) {
    if (sc.dtype != SEATRT_DTYPE_BF16) invalid(op, name + ".scales must be BF16 in the SM90_TILED layout");
    r.kind = int32_t(WeightKind::Fp4Bf16Scales);
  } else {
    unsupported(op, name + ": NVFP4 layout " + std::to_string(w.layout) + " is not read by this provider");
  }
  r.scales = sc.data;
  r.global_divisor = w.global_scale;
  r.data_row_bytes = d.strides[0];
  r.scale_row_elems = sc.strides[0];
  return r;
}

namespace {

bool vec_ok(const WeightRef& w) {
  return reinterpret_cast<uintptr_t>(w.data) % 16 == 0 && w.data_row_bytes % 16 == 0;
}

bool same_refs(const std::vector<WeightRef>& a, const std::vector<WeightRef>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(WeightRef)) == 0;
}

}  // namespace

void weight_layouts(seatrt_kernel_context*, int32_t format, int32_t* layouts, int32_t capacity, int32_t* count) {
  if (!count || (capacity > 0 && !layouts)) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda weight_layouts: NULL output");
  std::vector<int32_t> ids;
  if (format == SEATRT_WFMT_DENSE) ids = {SEATRT_LAYOUT_DENSE_ROW_MAJOR};
  // CT row-major first: E4M3 scales cost 4.5 bits per weight, the SM90_TILED
  // BF16 scales 5 (README.md says why both exist).
  else if (format == SEATRT_WFMT_NVFP4) ids = {SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR, SEATRT_LAYOUT_NVFP4_SM90_TILED};
  else throw sdk::Error(SEATRT_ERR_UNSUPPORTED, "cuda weight_layouts: unknown format " + std::to_string(format));
  const int32_t n = static_cast<int32_t>(ids.size());
  for (int32_t i = 0; i < n && i < capacity; ++i) layouts[i] = ids[static_cast<size_t>(i)];
  *count = n;
}

void prepare_weight(seatrt_kernel_context* ctx, seatrt_linear_weight* weight) {
  use_device(ctx);
  if (!weight) throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda prepare_weight: weight is NULL");
  weight_ref("prepare_weight", "weight", *weight);  // checks only: the kernels read the layout as is
}

void release_weight(seatrt_kernel_context*, seatrt_linear_weight* weight) {
  if (weight) weight->provider_data = nullptr;
}

void linear(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_linear_args* args) {
  const std::string op = "linear";
  if (!args || !args->weight) invalid(op, "args or weight is NULL");
  use_device(ctx);
  const WeightRef w = weight_ref(op, "weight", *args->weight);
  const auto& x = need(op, "x", args->x);
  const auto& out = need(op, "out", args->out);
  need_activation_dtype(op, "x", x);
  need_activation_dtype(op, "out", out);
  GemvProblem p;
  p.n = args->weight->out_features;
  p.k = args->weight->in_features;
  p.x = as_mat(op, "x", x);
  p.out = as_mat(op, "out", out);
  if (p.x.cols != p.k) invalid(op, "x has " + std::to_string(p.x.cols) + " columns, the weight " + std::to_string(p.k));
  if (p.out.rows != p.x.rows || p.out.cols != p.n) invalid(op, "out must be [M, out_features]");
  if (p.x.rows > 65535LL * 1024) unsupported(op, "too many rows");
  // Tensor-core rows: the opt-in BF16 prefill takes F32 x as a BF16 copy, and
  // BF16 x may use a BF16 expansion of the weight; both in one scratch block
  // [copy | expansion].
  if (p.x.rows > kLinearTensorCoreRows) {
    const bool round_x = ctx->prefill_bf16 && p.x.dtype == SEATRT_DTYPE_F32;
    const size_t copy = round_x ? (bf16_copy_bytes(view3_of(p.x)) + 255) / 256 * 256 : 0;
    const size_t expand = (round_x || p.x.dtype == SEATRT_DTYPE_BF16) ? linear_tc_expand_bytes(w, p.n, p.k) : 0;
    char* block = copy + expand ? static_cast<char*>(scratch(ctx, s, copy + expand)) : nullptr;
    if (round_x) {
      check(launch_to_bf16(s, view3_of(p.x), block), "linear launch (F32 -> BF16)");
      p.x = Mat{block, SEATRT_DTYPE_BF16, p.x.rows, p.x.cols, p.x.cols};
    }
    if (expand) p.w_bf16 = block + copy;
  }
  // Decode-shaped F32 x: scratch for its one-time split into BF16 planes,
  // which launch_linear uses where the kernel does not stage x itself; with
  // lm_head_gemm, a dense weight's F32 partials after them.
  if (p.x.dtype == SEATRT_DTYPE_F32 && p.x.rows <= kLinearTensorCoreRows && p.k % 32 == 0) {
    const bool planes_gemm = ctx->lm_head_gemm && w.kind == int32_t(WeightKind::DenseBf16) && p.k % 64 == 0;
    const size_t planes = x_planes_bytes(p.x), partials = planes_gemm ? plane_out_bytes(p.x.rows, p.n) : 0;
    char* block = static_cast<char*>(scratch(ctx, s, planes + partials));
    p.x_planes = block;
    if (planes_gemm) p.plane_out = block + planes;
  }
  check(launch_linear(s, w, p), "linear launch");
}

void moe(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_moe_args* args) {
  const std::string op = "moe";
  if (!args) invalid(op, "args is NULL");
  use_device(ctx);
  const seatrt_moe_args& a = *args;
  if (a.num_experts < 1 || a.num_experts > 1024) unsupported(op, "num_experts must be in 1..1024");
  if (!a.gate || !a.up || !a.down) invalid(op, "expert weight arrays are missing");
  if (a.activation < SEATRT_ACT_GELU_TANH || a.activation > SEATRT_ACT_GELU_ERF) invalid(op, "unknown activation");
  const auto& x = need(op, "x", a.x);
  const auto& ids = need(op, "ids", a.ids);
  const auto& wts = need(op, "weights", a.weights);
  const auto& out = need(op, "out", a.out);
  need_activation_dtype(op, "x", x);
  need_activation_dtype(op, "out", out);
  need_dtype(op, "ids", ids, SEATRT_DTYPE_I32);
  need_dtype(op, "weights", wts, SEATRT_DTYPE_F32);
  need_contiguous(op, "ids", ids);
  need_contiguous(op, "weights", wts);
  MoeProblem p;
  p.activation = a.activation;
  p.num_experts = a.num_experts;
  p.x = as_mat(op, "x", x);
  p.out = as_mat(op, "out", out);
  p.tokens = p.x.rows;
  p.hidden = p.x.cols;
  if (ids.ndim != 2 || ids.shape[0] != p.tokens) invalid(op, "ids must be [T, k]");
  p.top_k = static_cast<int32_t>(ids.shape[1]);
  if (wts.ndim != 2 || wts.shape[0] != p.tokens || wts.shape[1] != p.top_k) invalid(op, "weights must be [T, k]");
  if (p.out.rows != p.tokens || p.out.cols != p.hidden) invalid(op, "out must be [T, H]");
  p.intermediate = a.gate[0].out_features;

  const size_t E = static_cast<size_t>(a.num_experts);
  std::vector<WeightRef> refs(3 * E);
  bool vec = true;
  for (size_t e = 0; e < E; ++e) {
    const std::string n = "expert " + std::to_string(e);
    const seatrt_linear_weight* ws[3] = {&a.gate[e], &a.up[e], &a.down[e]};
    const int64_t want_out[3] = {p.intermediate, p.intermediate, p.hidden};
    const int64_t want_in[3] = {p.hidden, p.hidden, p.intermediate};
    const char* part[3] = {" gate", " up", " down"};
    for (int j = 0; j < 3; ++j) {
      if (ws[j]->out_features != want_out[j] || ws[j]->in_features != want_in[j])
        invalid(op, n + part[j] + " has shape [" + std::to_string(ws[j]->out_features) + ", " +
                        std::to_string(ws[j]->in_features) + "], expected [" + std::to_string(want_out[j]) + ", " +
                        std::to_string(want_in[j]) + "]");
      refs[static_cast<size_t>(j) * E + e] = weight_ref(op, n + part[j], *ws[j]);
      vec = vec && vec_ok(refs[static_cast<size_t>(j) * E + e]);
    }
  }
  if (p.tokens == 0) return;

  WeightRef* table = nullptr;
  {
    std::lock_guard<std::mutex> lock(ctx->mutex);
    const std::vector<const void*> key = {a.gate, a.up, a.down, reinterpret_cast<const void*>(E)};
    auto& t = ctx->moe_tables[key];
    if (!same_refs(t.host, refs)) {
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      check(cudaStreamIsCapturing(static_cast<cudaStream_t>(s), &capture), "cudaStreamIsCapturing");
      if (capture != cudaStreamCaptureStatusNone)
        throw sdk::Error(SEATRT_ERR_UNAVAILABLE, "cuda moe: expert tables must be uploaded before graph capture; "
                                                 "run the layer once first");
      if (t.device) {
        check(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize (moe table)");
        cudaFree(t.device);
        t.device = nullptr;
        t.host.clear();
      }
      check(cudaMalloc(&t.device, refs.size() * sizeof(WeightRef)), "cudaMalloc (moe table)");
      check(cudaMemcpy(t.device, refs.data(), refs.size() * sizeof(WeightRef), cudaMemcpyHostToDevice),
            "cudaMemcpy (moe table)");
      t.host = refs;
      t.vec = vec;
    }
    table = t.device;
  }
  p.gate = table;
  p.up = table + E;
  p.down = table + 2 * E;
  p.vec = vec;
  p.ids = static_cast<const int32_t*>(ids.data);
  p.weights = static_cast<const float*>(wts.data);
  // Prefill (many BF16 tokens): grouped tensor-core GEMMs (k_moe_grouped.cu).
  // With the opt-in BF16 prefill, F32 tokens too, as a BF16 copy placed
  // before the grouped workspace in the stream's one scratch block.
  const bool round_x = ctx->prefill_bf16 && p.x.dtype == SEATRT_DTYPE_F32;
  if (p.tokens >= kMoeGroupedMinTokens && (p.x.dtype == SEATRT_DTYPE_BF16 || round_x)) {
    const View3 x32 = view3_of(p.x);
    const size_t copy_bytes = round_x ? bf16_copy_bytes(x32) : 0;
    char* block = static_cast<char*>(scratch(ctx, s, copy_bytes + moe_grouped_workspace_bytes(p)));
    if (round_x) {
      check(launch_to_bf16(s, x32, block), "moe launch (F32 -> BF16)");
      p.x = Mat{block, SEATRT_DTYPE_BF16, p.x.rows, p.x.cols, p.x.cols};
    }
    check(launch_moe_grouped(s, p, block + copy_bytes, moe_fast_weights(refs.data(), refs.size())),
          "moe launch (grouped)");
    return;
  }
  void* ws = scratch(ctx, s, moe_workspace_bytes(p));
  check(launch_moe(s, p, ws), "moe launch");
}

}  // namespace seatrt::cuda
