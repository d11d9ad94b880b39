// What this provider runs: the kinds and fields of ops.h its kernels
// implement, and the dtypes they read.  One answer for supports() and for
// run() (which refuses the same ops with SEATRT_ERR_UNSUPPORTED, naming the
// field).  Shapes are checked by each operation when it runs.
#include <string>

#include "ops.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "views.hpp"

namespace seatrt::cuda {
namespace {

namespace sdk = seatrt::sdk;

// "" when t is absent or has an activation dtype.
std::string activation(const char* name, const seatrt_tensor* t) {
  if (!t || is_activation_dtype(t->dtype)) return "";
  return std::string(name) + " has dtype " + dtype_name(t->dtype) + " (this provider reads F32, BF16, F16)";
}

std::string exact(const char* name, const seatrt_tensor* t, int32_t dtype) {
  if (!t || t->dtype == dtype) return "";
  return std::string(name) + " has dtype " + dtype_name(t->dtype) + " (this provider reads " + dtype_name(dtype) + ")";
}

// The first non-empty reason.
std::string first(std::initializer_list<std::string> reasons) {
  for (const std::string& r : reasons)
    if (!r.empty()) return r;
  return "";
}

// A weight's format and layout as this provider reads them.
std::string weight(const char* name, const seatrt_linear_weight* w) {
  if (!w) return "";
  if (w->format == SEATRT_WFMT_DENSE) {
    if (w->layout != SEATRT_LAYOUT_DENSE_ROW_MAJOR) return std::string(name) + ": dense weights must be row-major";
    const int32_t d = w->data.dtype;
    if (d != SEATRT_DTYPE_BF16 && d != SEATRT_DTYPE_F16 && d != SEATRT_DTYPE_F32)
      return std::string(name) + ": dense dtype " + dtype_name(d);
    return "";
  }
  if (w->format != SEATRT_WFMT_NVFP4) return std::string(name) + ": weight format " + std::to_string(w->format);
  if (w->layout != SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR && w->layout != SEATRT_LAYOUT_NVFP4_SM90_TILED)
    return std::string(name) + ": NVFP4 layout " + std::to_string(w->layout);
  return "";
}

template <seatrt_op_kind K>
typename sdk::OpArgs<K>::type args_of(const seatrt_op& op) {
  typename sdk::OpArgs<K>::type a{};
  sdk::read_args<K>(&op, a, nullptr);
  return a;
}

std::string elementwise(const seatrt_elementwise_args& a) {
  if (a.op == SEATRT_EW_SIGMOID) return "op SIGMOID";
  if (a.op == SEATRT_EW_MUL_ROWS) return "op MUL_ROWS";
  const bool uses_b = a.op == SEATRT_EW_ADD || a.op == SEATRT_EW_MUL;
  return first({activation("a", a.a), uses_b ? activation("b", a.b) : "", activation("out", a.out)});
}

std::string rms_norm(const seatrt_rms_norm_args& a) {
  if (a.weight && a.weight_offset != 0.0f) return "weight_offset (only 0: plain gains)";
  return first({activation("x", a.x), activation("weight", a.weight), activation("out", a.out)});
}

std::string linear(const seatrt_linear_args& a) {
  if (a.bias) return "bias";
  return first({activation("x", a.x), activation("out", a.out), weight("weight", a.weight)});
}

std::string rope(const seatrt_rope_args& a) {
  if (a.num_sections > 1) return "num_sections > 1 (multi-section RoPE)";
  return first({activation("x", a.x), activation("out", a.out), exact("positions", a.positions, SEATRT_DTYPE_I32),
                exact("inv_freq", a.inv_freq, SEATRT_DTYPE_F32)});
}

std::string router_topk(const seatrt_router_topk_args& a) {
  if (a.scoring != SEATRT_ROUTER_SOFTMAX) return "scoring (only SOFTMAX)";
  if (a.num_groups > 1) return "num_groups (expert groups)";
  if (a.correction_bias) return "correction_bias";
  if (a.routed_scale != 0.0f) return "routed_scale";
  return first({activation("logits", a.logits), activation("per_expert_scale", a.per_expert_scale),
                exact("ids", a.ids, SEATRT_DTYPE_I32), exact("weights", a.weights, SEATRT_DTYPE_F32)});
}

std::string moe(const seatrt_moe_args& a) {
  std::string r = first({activation("x", a.x), activation("out", a.out), exact("ids", a.ids, SEATRT_DTYPE_I32),
                         exact("weights", a.weights, SEATRT_DTYPE_F32)});
  for (int32_t e = 0; r.empty() && e < a.num_experts && a.gate && a.up && a.down; ++e)
    r = first({weight("gate", &a.gate[e]), weight("up", &a.up[e]), weight("down", &a.down[e])});
  return r;
}

}  // namespace

std::string unsupported_reason(const seatrt_op& op) {
  switch (op.kind) {
    case SEATRT_OP_ELEMENTWISE: return elementwise(args_of<SEATRT_OP_ELEMENTWISE>(op));
    case SEATRT_OP_EMBEDDING: {
      const auto a = args_of<SEATRT_OP_EMBEDDING>(op);
      return first({exact("ids", a.ids, SEATRT_DTYPE_I32), activation("table", a.table), activation("out", a.out)});
    }
    case SEATRT_OP_RMS_NORM: return rms_norm(args_of<SEATRT_OP_RMS_NORM>(op));
    case SEATRT_OP_LINEAR: return linear(args_of<SEATRT_OP_LINEAR>(op));
    case SEATRT_OP_GLU: {
      const auto a = args_of<SEATRT_OP_GLU>(op);
      return first({activation("gate", a.gate), activation("up", a.up), activation("out", a.out)});
    }
    case SEATRT_OP_ROPE: return rope(args_of<SEATRT_OP_ROPE>(op));
    case SEATRT_OP_KV_STORE: {
      const auto a = args_of<SEATRT_OP_KV_STORE>(op);
      return first({activation("k", a.k), activation("v", a.v), exact("slot_mapping", a.slot_mapping, SEATRT_DTYPE_I64)});
    }
    case SEATRT_OP_ATTENTION: {
      const auto a = args_of<SEATRT_OP_ATTENTION>(op);
      return first({activation("q", a.q), activation("out", a.out)});
    }
    case SEATRT_OP_ROUTER_TOPK: return router_topk(args_of<SEATRT_OP_ROUTER_TOPK>(op));
    case SEATRT_OP_MOE: return moe(args_of<SEATRT_OP_MOE>(op));
    case SEATRT_OP_GATHER_ROWS: {
      const auto a = args_of<SEATRT_OP_GATHER_ROWS>(op);
      return first({activation("x", a.x), exact("index", a.index, SEATRT_DTYPE_I32), activation("out", a.out)});
    }
    case SEATRT_OP_SAMPLE: return exact("logits", args_of<SEATRT_OP_SAMPLE>(op).logits, SEATRT_DTYPE_F32);
    case SEATRT_OP_CONV1D_CAUSAL: return "no conv1d_causal kernel";
    case SEATRT_OP_DELTA_RULE: return "no delta_rule kernel";
    default: return "unknown op kind " + std::to_string(op.kind);
  }
}

}  // namespace seatrt::cuda
