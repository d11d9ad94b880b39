#include "op_dispatch.hpp"

#include <cstring>
#include <initializer_list>
#include <string>

#include "activation.hpp"
#include "dtype.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

template <seatrt_op_kind K>
typename sdk::OpArgs<K>::type read_or_throw(const seatrt_op* op) {
  typename sdk::OpArgs<K>::type args;
  std::string why;
  if (!sdk::read_args<K>(op, args, &why)) {
    throw sdk::Error(sdk::refusal_code(op), why);
  }
  return args;
}

template <seatrt_op_kind K>
using OpFn = void (*)(Context&, const typename sdk::OpArgs<K>::type&);

template <seatrt_op_kind K>
void run_kind(Context& ctx, const seatrt_op* op, OpFn<K> fn) {
  fn(ctx, read_or_throw<K>(op));
}

// ---- supports: capabilities only (kinds, enum values, dtypes, devices).

bool dtype_in(const seatrt_tensor* t, std::initializer_list<int32_t> allowed) {
  if (!t) return true;  // optional field absent
  for (int32_t d : allowed)
    if (t->dtype == d) return true;
  return false;
}
bool activation_dtype(const seatrt_tensor* t) { return dtype_in(t, kActivationDtypes); }

bool weight_readable(const seatrt_linear_weight& w) {
  return (w.format == SEATRT_WFMT_DENSE && w.layout == SEATRT_LAYOUT_DENSE_ROW_MAJOR) ||
         (w.format == SEATRT_WFMT_NVFP4 && w.layout == SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR);
}

bool cache_readable(const seatrt_kv_layer* cache) {
  return cache && dtype_in(&cache->k_cache, {SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32, SEATRT_DTYPE_F16, SEATRT_DTYPE_F8_E4M3});
}

constexpr std::initializer_list<int32_t> kI32 = {SEATRT_DTYPE_I32};
constexpr std::initializer_list<int32_t> kF32 = {SEATRT_DTYPE_F32};

bool kind_supported(const seatrt_op* op) {
  switch (op->kind) {
    case SEATRT_OP_ELEMENTWISE: {
      const auto a = read_or_throw<SEATRT_OP_ELEMENTWISE>(op);
      if (a.op < SEATRT_EW_ADD || a.op > SEATRT_EW_MUL_ROWS) return false;
      if (a.op == SEATRT_EW_COPY) {
        const std::initializer_list<int32_t> copyable = {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F16, SEATRT_DTYPE_F8_E4M3};
        return dtype_in(a.a, copyable) && dtype_in(a.out, copyable);
      }
      return activation_dtype(a.a) && activation_dtype(a.b) && activation_dtype(a.out);
    }
    case SEATRT_OP_EMBEDDING: {
      const auto a = read_or_throw<SEATRT_OP_EMBEDDING>(op);
      return dtype_in(a.ids, kI32) && activation_dtype(a.table) && activation_dtype(a.out);
    }
    case SEATRT_OP_RMS_NORM: {
      const auto a = read_or_throw<SEATRT_OP_RMS_NORM>(op);
      return activation_dtype(a.x) && activation_dtype(a.weight) && activation_dtype(a.out);
    }
    case SEATRT_OP_LINEAR: {
      const auto a = read_or_throw<SEATRT_OP_LINEAR>(op);
      return activation_dtype(a.x) && activation_dtype(a.out) && activation_dtype(a.bias) && weight_readable(*a.weight);
    }
    case SEATRT_OP_GLU: {
      const auto a = read_or_throw<SEATRT_OP_GLU>(op);
      return is_known_activation(a.activation) && activation_dtype(a.gate) && activation_dtype(a.up) &&
             activation_dtype(a.out);
    }
    case SEATRT_OP_ROPE: {
      const auto a = read_or_throw<SEATRT_OP_ROPE>(op);
      return a.num_sections >= 0 && a.num_sections <= SEATRT_ROPE_MAX_SECTIONS && activation_dtype(a.x) &&
             activation_dtype(a.out) && dtype_in(a.positions, kI32) && dtype_in(a.inv_freq, kF32);
    }
    case SEATRT_OP_KV_STORE: {
      const auto a = read_or_throw<SEATRT_OP_KV_STORE>(op);
      return activation_dtype(a.k) && activation_dtype(a.v) && cache_readable(a.cache);
    }
    case SEATRT_OP_ATTENTION: {
      const auto a = read_or_throw<SEATRT_OP_ATTENTION>(op);
      return activation_dtype(a.q) && activation_dtype(a.out) && cache_readable(a.cache);
    }
    case SEATRT_OP_ROUTER_TOPK: {
      const auto a = read_or_throw<SEATRT_OP_ROUTER_TOPK>(op);
      return (a.scoring == SEATRT_ROUTER_SOFTMAX || a.scoring == SEATRT_ROUTER_SIGMOID) && activation_dtype(a.logits) &&
             activation_dtype(a.per_expert_scale) && dtype_in(a.correction_bias, kF32) && dtype_in(a.ids, kI32) &&
             dtype_in(a.weights, kF32);
    }
    case SEATRT_OP_MOE: {
      const auto a = read_or_throw<SEATRT_OP_MOE>(op);
      if (!is_known_activation(a.activation) || !activation_dtype(a.x) || !activation_dtype(a.out)) return false;
      for (int32_t e = 0; e < a.num_experts; ++e) {
        if (!weight_readable(a.gate[e]) || !weight_readable(a.up[e]) || !weight_readable(a.down[e])) return false;
      }
      return true;
    }
    case SEATRT_OP_GATHER_ROWS: {
      const auto a = read_or_throw<SEATRT_OP_GATHER_ROWS>(op);
      return dtype_in(a.index, kI32);
    }
    case SEATRT_OP_SAMPLE: {
      // Every row field is honoured, logit bias included.
      const auto a = read_or_throw<SEATRT_OP_SAMPLE>(op);
      return activation_dtype(a.logits);
    }
    case SEATRT_OP_CONV1D_CAUSAL: {
      const auto a = read_or_throw<SEATRT_OP_CONV1D_CAUSAL>(op);
      return (a.activation == SEATRT_CONV_ACT_NONE || a.activation == SEATRT_ACT_SILU) && activation_dtype(a.x) &&
             activation_dtype(a.weight) && activation_dtype(a.bias) && activation_dtype(a.out) &&
             dtype_in(a.state, kF32);
    }
    case SEATRT_OP_DELTA_RULE: {
      const auto a = read_or_throw<SEATRT_OP_DELTA_RULE>(op);
      return activation_dtype(a.q) && activation_dtype(a.k) && activation_dtype(a.v) && activation_dtype(a.out) &&
             dtype_in(a.g, kF32) && dtype_in(a.beta, kF32) && dtype_in(a.state, kF32);
    }
    default:
      return false;
  }
}

}  // namespace

void run_op(Context& ctx, const seatrt_op* op) {
  if (!op) invalid("run", "op is NULL");
  switch (op->kind) {
    case SEATRT_OP_ELEMENTWISE: return run_kind<SEATRT_OP_ELEMENTWISE>(ctx, op, elementwise);
    case SEATRT_OP_EMBEDDING: return run_kind<SEATRT_OP_EMBEDDING>(ctx, op, embedding);
    case SEATRT_OP_RMS_NORM: return run_kind<SEATRT_OP_RMS_NORM>(ctx, op, rms_norm);
    case SEATRT_OP_LINEAR: return run_kind<SEATRT_OP_LINEAR>(ctx, op, linear);
    case SEATRT_OP_GLU: return run_kind<SEATRT_OP_GLU>(ctx, op, glu);
    case SEATRT_OP_ROPE: return run_kind<SEATRT_OP_ROPE>(ctx, op, rope);
    case SEATRT_OP_KV_STORE: return run_kind<SEATRT_OP_KV_STORE>(ctx, op, kv_store);
    case SEATRT_OP_ATTENTION: return run_kind<SEATRT_OP_ATTENTION>(ctx, op, attention);
    case SEATRT_OP_ROUTER_TOPK: return run_kind<SEATRT_OP_ROUTER_TOPK>(ctx, op, router_topk);
    case SEATRT_OP_MOE: return run_kind<SEATRT_OP_MOE>(ctx, op, moe);
    case SEATRT_OP_GATHER_ROWS: return run_kind<SEATRT_OP_GATHER_ROWS>(ctx, op, gather_rows);
    case SEATRT_OP_SAMPLE: return run_kind<SEATRT_OP_SAMPLE>(ctx, op, sample);
    case SEATRT_OP_CONV1D_CAUSAL: return run_kind<SEATRT_OP_CONV1D_CAUSAL>(ctx, op, conv1d_causal);
    case SEATRT_OP_DELTA_RULE: return run_kind<SEATRT_OP_DELTA_RULE>(ctx, op, delta_rule);
    default: unsupported("run", sdk::op_name(op->kind) + " is not an operation this provider runs");
  }
}

bool supports_op(const seatrt_op* op) {
  if (!op || op->struct_size < sizeof(seatrt_op) || !sdk::op_info(op->kind)) return false;
  try {
    if (!kind_supported(op)) return false;
    // Every device tensor must be host memory: the CPU provider reads it in place.
    bool host = true;
    sdk::for_each_access(*op, [&](const sdk::OpAccess& a) {
      host = host && a.tensor->device.kind == SEATRT_DEVICE_CPU && dtype_size(a.tensor->dtype) != 0;
    });
    return host;
  } catch (...) {
    return false;  // read_args refused the op: run would too
  }
}

}  // namespace seatrt::cpu
