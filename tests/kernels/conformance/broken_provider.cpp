// A deliberately wrong kernel provider that proves the conformance tool can
// fail: linear adds an error of 50% of the first row's largest magnitude to
// one element, rms_norm writes a NaN, add_rms_norm ignores residual_scale,
// and the attention and rms_norm_rope slots are NULL (must be reported as
// SKIP).  The other fused slots are the CPU provider's, which do not go
// through the broken linear / rms_norm.  Test-only; never installed.
//
// Built three times (SEATRT_BROKEN_TABLE_MINOR):
// - 1, "cpu-broken": its table is of ABI 1.1 (struct_size ends before
//   linear_multi), so the 1.2, 1.4 and 1.5 fused operations must be SKIP too;
// - 4, "cpu-broken-14": a table of ABI 1.4 (ending before route, which must
//   be SKIP) whose qkv_norm_rope_store, when v is NULL, norms v from the k
//   it has already normed and rotated instead of the raw k (only a case with
//   v NULL and a v_cache sees it), and whose add_rms_norm_pair slot is NULL;
// - 5, "cpu-broken-15": the same with a whole table, whose route norms the
//   router's input without the router's gain.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "dtype.hpp"
#include "provider_table.hpp"
#include "seatrt/cpp/plugin.hpp"

#ifndef SEATRT_BROKEN_TABLE_MINOR
#error "SEATRT_BROKEN_TABLE_MINOR (1, 4 or 5) picks the table this provider is built with"
#endif

namespace {

// Both ops write host memory (the provider is the CPU one underneath).
float* first_f32(seatrt_tensor* out) { return out->dtype == SEATRT_DTYPE_F32 ? static_cast<float*>(out->data) : nullptr; }

seatrt_status* broken_linear(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_linear_args* args) {
  seatrt_status* status = seatrt::cpu::kernel_api().linear(ctx, stream, args);
  if (status) return status;
  const seatrt_tensor* out = args->out;
  const int64_t n = out->shape[out->ndim - 1];
  std::vector<float> row(static_cast<size_t>(n));
  seatrt::cpu::load_f32(out->dtype, out->data, row.data(), n);
  float largest = 0.0f;
  for (float v : row) largest = std::max(largest, std::fabs(v));
  row[0] += 0.5f * largest + 1e-3f;
  seatrt::cpu::store_f32(out->dtype, row.data(), out->data, n);
  return nullptr;
}

seatrt_status* broken_rms_norm(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_rms_norm_args* args) {
  seatrt_status* status = seatrt::cpu::kernel_api().rms_norm(ctx, stream, args);
  if (status) return status;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (float* f = first_f32(args->out)) {
    f[0] = nan;
  } else {
    seatrt::cpu::store_f32(args->out->dtype, &nan, args->out->data, 1);
  }
  return nullptr;
}

// A plausible fused-kernel bug that only a case with a scale != 1 can see.
seatrt_status* broken_add_rms_norm(seatrt_kernel_context* ctx, seatrt_stream stream,
                                   const seatrt_add_rms_norm_args* args) {
  if (!args) return seatrt::cpu::kernel_api().add_rms_norm(ctx, stream, args);
  seatrt_add_rms_norm_args unscaled = *args;
  unscaled.residual_scale = 1.0f;
  return seatrt::cpu::kernel_api().add_rms_norm(ctx, stream, &unscaled);
}

// A plausible fused-kernel bug: v read from k after k's norm and rope
// (the raw k is the contract).  The provider is the CPU one underneath, so
// the normed k can be made in host memory and handed over as v.  A layer
// that stores one tensor has no v to get wrong (and takes no v).
seatrt_status* broken_qkv_norm_rope_store(seatrt_kernel_context* ctx, seatrt_stream stream,
                                          const seatrt_qkv_norm_rope_store_args* args) {
  const seatrt_kernel_api& cpu = seatrt::cpu::kernel_api();
  if (!args || args->v || !args->k || !args->k->data || !args->cache || !args->cache->v_cache.data) {
    return cpu.qkv_norm_rope_store(ctx, stream, args);
  }
  seatrt_tensor normed = *args->k;  // same shape and dtype, contiguous
  int64_t n = 1;
  for (int32_t d = normed.ndim - 1; d >= 0; --d) {
    normed.strides[d] = n;
    n *= normed.shape[d];
  }
  std::vector<unsigned char> bytes(static_cast<size_t>(n) * seatrt::cpu::dtype_size(normed.dtype));
  normed.data = bytes.data();
  const seatrt_rms_norm_rope_args rope{sizeof rope,     args->k,         args->k_weight, args->eps, 0,
                                       args->positions, args->inv_freq, &normed};
  if (seatrt_status* status = cpu.rms_norm_rope(ctx, stream, &rope)) return status;
  seatrt_qkv_norm_rope_store_args wrong = *args;
  wrong.v = &normed;
  return cpu.qkv_norm_rope_store(ctx, stream, &wrong);
}

// A plausible fused-kernel bug: the router's input normed without the
// router's gain (the experts' input, normed from the same rms, keeps its
// own), so every logit and the routing built on them is off.
seatrt_status* broken_route(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_route_args* args) {
  if (!args) return seatrt::cpu::kernel_api().route(ctx, stream, args);
  seatrt_route_args gainless = *args;
  gainless.router_norm_weight = nullptr;
  return seatrt::cpu::kernel_api().route(ctx, stream, &gainless);
}

// Score 0: never chosen by `auto`, even if someone points a seat at it.
seatrt_status* broken_probe(seatrt_kernel_probe* out) {
  seatrt_status* status = seatrt::cpu::kernel_api().probe(out);
  if (!status && out) {
    out->score = 0;
    out->detail = "test-only broken provider";
  }
  return status;
}

const seatrt_plugin& descriptor() {
  static const seatrt_kernel_api api = [] {
    seatrt_kernel_api a = seatrt::cpu::kernel_api();
    a.linear = broken_linear;
    a.rms_norm = broken_rms_norm;
    a.attention = nullptr;
    a.probe = broken_probe;
    a.add_rms_norm = broken_add_rms_norm;
    a.rms_norm_rope = nullptr;
    if constexpr (SEATRT_BROKEN_TABLE_MINOR < 2) {
      // A provider built for ABI 1.1.  The slots past struct_size keep the
      // CPU provider's working operations: a tool that read them anyway
      // would report PASS instead of SKIP, which the CTest checks would catch.
      a.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, linear_multi));
    } else {
      a.qkv_norm_rope_store = broken_qkv_norm_rope_store;
      a.add_rms_norm_pair = nullptr;
      a.route = broken_route;
      // A provider built for ABI 1.4 ends before route, with the broken one
      // in the slot's memory: a tool that read it anyway would see FAIL
      // instead of SKIP.
      if constexpr (SEATRT_BROKEN_TABLE_MINOR < 5)
        a.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, route));
    }
    return a;
  }();
  static const seatrt_plugin plugin = [] {
    seatrt_plugin p = seatrt::cpu::plugin_descriptor();
    p.name = SEATRT_BROKEN_TABLE_MINOR < 2   ? "cpu-broken"
             : SEATRT_BROKEN_TABLE_MINOR < 5 ? "cpu-broken-14"
                                             : "cpu-broken-15";
    p.description = "test-only: a wrong provider for the conformance tool's own tests";
    p.kernels = &api;
    p.abi_minor = SEATRT_BROKEN_TABLE_MINOR;  // as its table
    return p;
  }();
  return plugin;
}

const seatrt_plugin& kPlugin = descriptor();

}  // namespace

SEATRT_DEFINE_PLUGIN(kPlugin)
