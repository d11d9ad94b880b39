// Thin C++ wrappers over the kernel table: each builds the op's args
// struct and throws (seatrt::sdk::Error) on a returned status.  The
// architecture touches no device API other than through these.
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "seatrt/cpp/plugin.hpp"
#include "seatrt/cpp/tensor.hpp"
#include "seatrt/seatrt.h"

namespace seatrt::gemma4 {

// A contiguous view of `data` with the given shape.
inline seatrt_tensor view(void* data, int32_t dtype, std::initializer_list<int64_t> shape, int32_t device_kind) {
  return sdk::contiguous_tensor(data, dtype, shape, device_kind);
}

class Ops {
 public:
  // SEATRT_GEMMA4_FUSED=0 (read per forward, a switch for tests and
  // benchmarks) runs the unfused sequences even where the provider has the
  // ABI 1.1-1.5 fused operations; SEATRT_GEMMA4_FUSED=1.4 leaves out route
  // (ABI 1.5), =1.3 qkv_norm_rope_store too.  add_rms_norm_pair is used by default for
  // forwards of more than kPairMinRows tokens (prefill), always with
  // SEATRT_GEMMA4_FUSED=pair, never with 1.4: at decode it was no faster than
  // its sequence (batch-1 step 3.856 against 3.816 ms, H200, 2026-12-01 12:27
  // UTC), whose first norm runs beside the experts on the dense branch's
  // stream; at 8,192 rows it moves ~0.37 GB less per layer (20.3 -> 16.1 ms
  // of norms in an 8k prefill, H200, 2026-12-04, kernels/cuda/NOTES-prefill.md
  // run 7).
  Ops(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, seatrt_stream stream)
      : Ops(k, ctx, stream, fused_setting()) {}

  void embedding(const seatrt_tensor& ids, const seatrt_tensor& table, float scale, seatrt_tensor& out) const {
    seatrt_embedding_args a{sizeof(a), &ids, &table, scale, &out};
    call(k_->embedding, a, "embedding");
  }
  void rms_norm(const seatrt_tensor& x, const seatrt_tensor* weight, float eps, seatrt_tensor& out) const {
    seatrt_rms_norm_args a{sizeof(a), &x, weight, eps, &out};
    call(k_->rms_norm, a, "rms_norm");
  }
  void linear(const seatrt_tensor& x, const seatrt_linear_weight* w, seatrt_tensor& out) const {
    seatrt_linear_args a{sizeof(a), &x, w, &out};
    call(k_->linear, a, "linear");
  }
  void elementwise(seatrt_elementwise_op op, const seatrt_tensor& x, const seatrt_tensor* b, float alpha,
                   seatrt_tensor& out) const {
    seatrt_elementwise_args a{sizeof(a), op, &x, b, alpha, &out};
    call(k_->elementwise, a, "elementwise");
  }
  void glu(const seatrt_tensor& gate, const seatrt_tensor& up, seatrt_tensor& out) const {
    seatrt_glu_args a{sizeof(a), SEATRT_ACT_GELU_TANH, &gate, &up, &out};
    call(k_->glu, a, "glu");
  }
  void rope(const seatrt_tensor& x, const seatrt_tensor& positions, const seatrt_tensor& inv_freq,
            seatrt_tensor& out) const {
    seatrt_rope_args a{sizeof(a), &x, &positions, &inv_freq, &out};
    call(k_->rope, a, "rope");
  }
  void kv_store(const seatrt_tensor& k, const seatrt_tensor& v, const seatrt_tensor& slots,
                seatrt_kv_layer* cache) const {
    seatrt_kv_store_args a{sizeof(a), &k, &v, &slots, cache};
    call(k_->kv_store, a, "kv_store");
  }
  void attention(const seatrt_attention_args& a) const { call(k_->attention, a, "attention"); }
  void router_topk(const seatrt_tensor& logits, int32_t top_k, const seatrt_tensor* per_expert_scale,
                   seatrt_tensor& ids, seatrt_tensor& weights) const {
    seatrt_router_topk_args a{sizeof(a), &logits, top_k, 1, per_expert_scale, &ids, &weights};
    call(k_->router_topk, a, "router_topk");
  }
  void moe(int32_t num_experts, const seatrt_tensor& x, const seatrt_tensor& ids, const seatrt_tensor& weights,
           const seatrt_linear_weight* gate, const seatrt_linear_weight* up, const seatrt_linear_weight* down,
           seatrt_tensor& out) const {
    seatrt_moe_args a{sizeof(a), SEATRT_ACT_GELU_TANH, num_experts, &x, &ids, &weights, gate, up, down, &out};
    call(k_->moe, a, "moe");
  }
  void gather_rows(const seatrt_tensor& x, const seatrt_tensor& index, seatrt_tensor& out) const {
    seatrt_gather_rows_args a{sizeof(a), &x, &index, &out};
    call(k_->gather_rows, a, "gather_rows");
  }
  // residual <- (residual + rmsnorm(x) * x_weight) * scale; then, if out,
  // out <- rmsnorm(residual) * out_weight.  One call when the provider has
  // the ABI 1.1 fused op, else the unfused sequence (which normalises x in
  // place: callers treat x as scratch either way).
  void add_rms_norm(seatrt_tensor& x, const seatrt_tensor* x_weight, seatrt_tensor& residual, float eps,
                    float scale, const seatrt_tensor* out_weight, seatrt_tensor* out) const {
    if (has_fused()) {
      seatrt_add_rms_norm_args a{sizeof(a), &x, x_weight, &residual, eps, scale, out_weight, out};
      call(k_->add_rms_norm, a, "add_rms_norm");
      return;
    }
    rms_norm(x, x_weight, eps, x);
    elementwise(SEATRT_EW_ADD, residual, &x, 0.0f, residual);
    if (scale != 1.0f) elementwise(SEATRT_EW_SCALE, residual, nullptr, scale, residual);
    if (out) rms_norm(residual, out_weight, eps, *out);
  }
  // x [T, heads, D] <- rope(rmsnorm(x) * weight) in place: one call with the
  // fused op, else rms_norm then rope.
  void rms_norm_rope(seatrt_tensor& x, const seatrt_tensor* weight, float eps, const seatrt_tensor& positions,
                     const seatrt_tensor& inv_freq) const {
    if (has_fused()) {
      seatrt_rms_norm_rope_args a{sizeof(a), &x, weight, eps, 0, &positions, &inv_freq, &x};
      call(k_->rms_norm_rope, a, "rms_norm_rope");
      return;
    }
    rms_norm(x, weight, eps, x);
    rope(x, positions, inv_freq, x);
  }
  // Whether the table carries both ABI 1.1 fused ops (a 1.0 table is shorter).
  bool has_fused() const {
    return fused_allowed_ && SEATRT_HAS_FIELD(k_, seatrt_kernel_api, rms_norm_rope) && k_->add_rms_norm &&
           k_->rms_norm_rope;
  }
  // outs[i] = x * weights[i]^T for i < count (<= SEATRT_FUSED_MAX): one call
  // when the provider has the ABI 1.2 linear_multi, else a linear each.
  void linear_multi(const seatrt_tensor& x, int32_t count, const seatrt_linear_weight* const* weights,
                    seatrt_tensor* const* outs) const {
    if (fused_allowed_ && SEATRT_HAS_FIELD(k_, seatrt_kernel_api, linear_multi) && k_->linear_multi) {
      seatrt_linear_multi_args a{};
      a.struct_size = sizeof(a);
      a.count = count;
      a.x = &x;
      for (int32_t i = 0; i < count; ++i) {
        a.weights[i] = weights[i];
        a.outs[i] = outs[i];
      }
      call(k_->linear_multi, a, "linear_multi");
      return;
    }
    for (int32_t i = 0; i < count; ++i) linear(x, weights[i], *outs[i]);
  }
  // out = gelu_tanh(x * gate_w^T) * (x * up_w^T): one call with the ABI 1.2
  // linear_glu, else linear into `gate`, linear into `up`, glu (gate and up
  // are scratch either way).
  void linear_glu(const seatrt_tensor& x, const seatrt_linear_weight* gate_w, const seatrt_linear_weight* up_w,
                  seatrt_tensor& gate, seatrt_tensor& up, seatrt_tensor& out) const {
    if (fused_allowed_ && SEATRT_HAS_FIELD(k_, seatrt_kernel_api, linear_glu) && k_->linear_glu) {
      seatrt_linear_glu_args a{sizeof(a), SEATRT_ACT_GELU_TANH, &x, gate_w, up_w, &out};
      call(k_->linear_glu, a, "linear_glu");
      return;
    }
    linear(x, gate_w, gate);
    linear(x, up_w, up);
    glu(gate, up, out);
  }
  // outs[i] = rmsnorm(x) * weights[i] (NULL: no gain) for i < count: one
  // call with the ABI 1.2 rms_norm_multi, else an rms_norm each.
  void rms_norm_multi(const seatrt_tensor& x, float eps, int32_t count, const seatrt_tensor* const* weights,
                      seatrt_tensor* const* outs) const {
    if (fused_allowed_ && SEATRT_HAS_FIELD(k_, seatrt_kernel_api, rms_norm_multi) && k_->rms_norm_multi) {
      seatrt_rms_norm_multi_args a{};
      a.struct_size = sizeof(a);
      a.count = count;
      a.x = &x;
      a.eps = eps;
      for (int32_t i = 0; i < count; ++i) {
        a.weights[i] = weights[i];
        a.outs[i] = outs[i];
      }
      call(k_->rms_norm_multi, a, "rms_norm_multi");
      return;
    }
    for (int32_t i = 0; i < count; ++i) rms_norm(x, weights[i], eps, *outs[i]);
  }
  // ABI 1.4 qkv_norm_rope_store: q <- rope(rmsnorm(q) * q_w) in place; the
  // cache at slots <- rope(rmsnorm(k) * k_w) and rmsnorm(v, or the raw k
  // when v is NULL) * v_w.  Only when has_qkv_norm_rope_store(); the caller
  // runs the sequence otherwise (it needs k and v as scratch).
  bool has_qkv_norm_rope_store() const {
    return qkv_allowed_ && SEATRT_HAS_FIELD(k_, seatrt_kernel_api, qkv_norm_rope_store) && k_->qkv_norm_rope_store;
  }
  void qkv_norm_rope_store(seatrt_tensor& q, const seatrt_tensor& k, const seatrt_tensor* v, const seatrt_tensor* q_w,
                           const seatrt_tensor* k_w, const seatrt_tensor* v_w, float eps, const seatrt_tensor& positions,
                           const seatrt_tensor& inv_freq, const seatrt_tensor& slots, seatrt_kv_layer* cache) const {
    seatrt_qkv_norm_rope_store_args a{sizeof(a), eps, &q, &k, v, q_w, k_w, v_w, &positions, &inv_freq, &slots, cache};
    call(k_->qkv_norm_rope_store, a, "qkv_norm_rope_store");
  }
  // ABI 1.4 add_rms_norm_pair: residual <- (residual + rmsnorm(rmsnorm(a) *
  // a_w + rmsnorm(b) * b_w) * s_w) * scale; then, if out, out <-
  // rmsnorm(residual) * out_w.  Only when has_add_rms_norm_pair(); the
  // caller runs rms_norm and two add_rms_norm otherwise.
  static constexpr int64_t kPairMinRows = 64;
  bool has_add_rms_norm_pair(int64_t rows) const {
    const bool wanted = pair_ == Pair::Always || (pair_ == Pair::Prefill && rows > kPairMinRows);
    return wanted && SEATRT_HAS_FIELD(k_, seatrt_kernel_api, add_rms_norm_pair) && k_->add_rms_norm_pair;
  }
  void add_rms_norm_pair(const seatrt_tensor& a, const seatrt_tensor* a_w, const seatrt_tensor& b,
                         const seatrt_tensor* b_w, const seatrt_tensor* s_w, seatrt_tensor& residual, float eps,
                         float scale, const seatrt_tensor* out_w, seatrt_tensor* out) const {
    seatrt_add_rms_norm_pair_args args{sizeof(args), eps, &a, a_w, &b, b_w, s_w, &residual, scale, 0, out_w, out};
    call(k_->add_rms_norm_pair, args, "add_rms_norm_pair");
  }
  // ABI 1.5 route: ids / weights = top-k of (rmsnorm(x) * router_w) .
  // router^T (softmax, renormalised, times per_expert_scale) and expert_in =
  // rmsnorm(x) * expert_w, from one read of x.  Only when has_route(); the
  // caller runs rms_norm_multi, linear and router_topk otherwise.
  bool has_route() const { return route_allowed_ && SEATRT_HAS_FIELD(k_, seatrt_kernel_api, route) && k_->route; }
  void route(const seatrt_tensor& x, float eps, const seatrt_tensor* router_w, const seatrt_linear_weight* router,
             int32_t top_k, const seatrt_tensor* per_expert_scale, const seatrt_tensor* expert_w,
             seatrt_tensor* expert_in, seatrt_tensor& ids, seatrt_tensor& weights) const {
    seatrt_route_args a{};
    a.struct_size = sizeof(a);
    a.eps = eps;
    a.x = &x;
    a.router_norm_weight = router_w;
    a.router = router;
    a.top_k = top_k;
    a.renormalize = 1;
    a.per_expert_scale = per_expert_scale;
    a.expert_norm_weight = expert_w;
    a.expert_in = expert_in;
    a.ids = &ids;
    a.weights = &weights;
    call(k_->route, a, "route");
  }
  // ABI 1.6: a hint that `weights` (NULL entries skipped) come next.
  bool has_prefetch() const {
    return SEATRT_HAS_FIELD(k_, seatrt_kernel_api, prefetch_weights) && k_->prefetch_weights;
  }
  void prefetch(std::initializer_list<const seatrt_linear_weight*> weights) const {
    std::vector<const seatrt_linear_weight*> list;
    for (const auto* w : weights)
      if (w) list.push_back(w);
    seatrt_prefetch_weights_args a{};
    a.struct_size = sizeof(a);
    a.count = static_cast<int32_t>(list.size());
    a.weights = list.data();
    call(k_->prefetch_weights, a, "prefetch_weights");
  }
  void sync() const {
    if (k_->stream_sync) sdk::throw_if_error(k_->stream_sync(ctx_, s_));
  }

 private:
  // The switches, from one reading of SEATRT_GEMMA4_FUSED.
  Ops(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, seatrt_stream stream, const std::string& fused)
      : k_(k), ctx_(ctx), s_(stream), fused_allowed_(fused != "0"), qkv_allowed_(fused != "0" && fused != "1.3"),
        route_allowed_(qkv_allowed_ && fused != "1.4"),
        pair_(fused == "pair"                                     ? Pair::Always
              : fused == "0" || fused == "1.3" || fused == "1.4" ? Pair::Never
                                                                  : Pair::Prefill) {}
  static std::string fused_setting() {
    const char* v = std::getenv("SEATRT_GEMMA4_FUSED");
    return v ? v : "";
  }
  template <typename Fn, typename Args>
  void call(Fn fn, const Args& args, const char* name) const {
    if (!fn) throw sdk::Error(SEATRT_ERR_UNSUPPORTED, std::string("the kernel provider has no '") + name + "' operation");
    seatrt_status* st = fn(ctx_, s_, &args);
    if (!st) return;
    const auto* h = sdk::host();
    sdk::Error e(h->status_code(st), std::string(name) + ": " + h->status_message(st));
    h->status_free(st);
    throw e;
  }

  const seatrt_kernel_api* k_;
  seatrt_kernel_context* ctx_;
  seatrt_stream s_;
  bool fused_allowed_;
  bool qkv_allowed_;   // qkv_norm_rope_store (not with "0" or "1.3")
  bool route_allowed_; // route (not with "0", "1.3" or "1.4")
  enum class Pair { Never, Prefill, Always };
  Pair pair_;  // when add_rms_norm_pair is used (see the constructor's comment)
};

}  // namespace seatrt::gemma4
