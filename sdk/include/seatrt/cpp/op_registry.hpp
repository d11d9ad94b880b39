// The operation registry: for every seatrt_op_kind, its name, its args
// struct and where that struct points at tensors.  One table drives the
// providers' dispatch and argument checks, the host's fallback and graph
// runner, the planners' dependency analysis and the conformance tool, so a
// new kind is added in one place (docs/architecture.md, "Adding an
// operation").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "seatrt/ops.h"

namespace seatrt::sdk {

// How an operation uses memory a field points at.
enum class Access { read, write, read_write };

// What a field is.
enum class FieldType {
  tensor,        // const seatrt_tensor* / seatrt_tensor*
  weight,        // const seatrt_linear_weight*  (data and scales are read)
  expert_array,  // const seatrt_linear_weight*, num_experts entries (MoE)
  kv_layer,      // seatrt_kv_layer* (k_cache, v_cache)
  host           // host memory (SAMPLE's rows and outputs): not a device tensor
};

struct OpField {
  const char* name;
  std::size_t offset;  // of the pointer in the args struct
  FieldType type;
  Access access;
  bool optional;       // may be NULL
};

struct OpInfo {
  seatrt_op_kind kind;
  const char* name;           // "rms_norm"
  std::size_t args_size;      // sizeof the args struct in this SDK
  bool synchronous;           // host outputs; never in a graph (SAMPLE)
  std::span<const OpField> fields;
};

// The registry entry for `kind`, or nullptr for an unknown kind.
inline const OpInfo* op_info(int32_t kind);
// "rms_norm", or "unknown op kind 42".
inline std::string op_name(int32_t kind);

// The args struct of each kind, at compile time.
template <seatrt_op_kind K> struct OpArgs;
#define SEATRT_OP_ARGS(K, T) \
  template <> struct OpArgs<K> { using type = T; }
SEATRT_OP_ARGS(SEATRT_OP_ELEMENTWISE, seatrt_elementwise_args);
SEATRT_OP_ARGS(SEATRT_OP_EMBEDDING, seatrt_embedding_args);
SEATRT_OP_ARGS(SEATRT_OP_RMS_NORM, seatrt_rms_norm_args);
SEATRT_OP_ARGS(SEATRT_OP_LINEAR, seatrt_linear_args);
SEATRT_OP_ARGS(SEATRT_OP_GLU, seatrt_glu_args);
SEATRT_OP_ARGS(SEATRT_OP_ROPE, seatrt_rope_args);
SEATRT_OP_ARGS(SEATRT_OP_KV_STORE, seatrt_kv_store_args);
SEATRT_OP_ARGS(SEATRT_OP_ATTENTION, seatrt_attention_args);
SEATRT_OP_ARGS(SEATRT_OP_ROUTER_TOPK, seatrt_router_topk_args);
SEATRT_OP_ARGS(SEATRT_OP_MOE, seatrt_moe_args);
SEATRT_OP_ARGS(SEATRT_OP_GATHER_ROWS, seatrt_gather_rows_args);
SEATRT_OP_ARGS(SEATRT_OP_SAMPLE, seatrt_sample_args);
SEATRT_OP_ARGS(SEATRT_OP_CONV1D_CAUSAL, seatrt_conv1d_causal_args);
SEATRT_OP_ARGS(SEATRT_OP_DELTA_RULE, seatrt_delta_rule_args);
#undef SEATRT_OP_ARGS

// The shared argument check (ops.h's struct_size rule): a copy of the
// caller's args in this SDK's layout, fields the caller's shorter struct
// lacks read as zero.  Fails (returns false, *why says what) when the op or
// its args are NULL, the kind is not K, struct_size is smaller than the
// first field, a longer struct sets bytes this SDK does not know, or a
// required pointer field is NULL.  Providers call it first in run() and
// supports(); after it, the pointers of required fields are non-NULL.
inline bool read_args_raw(const seatrt_op* op, int32_t kind, void* out, std::size_t out_size, std::string* why);

template <seatrt_op_kind K>
bool read_args(const seatrt_op* op, typename OpArgs<K>::type& out, std::string* why) {
  return read_args_raw(op, K, &out, sizeof(out), why);
}

// The status a provider returns for an op read_args refused:
// SEATRT_ERR_UNSUPPORTED when the kind is unknown or a newer caller set
// fields this SDK does not know (another provider may run it), else
// SEATRT_ERR_INVALID_ARG (the caller's args are wrong).
inline seatrt_status_code refusal_code(const seatrt_op* op);

// An op of kind K over `args` (which must outlive the op).
template <seatrt_op_kind K>
seatrt_op make_op(const typename OpArgs<K>::type& args) {
  return seatrt_op{sizeof(seatrt_op), K, &args};
}

// One memory range an operation reads or writes (for dependencies and for
// staging between devices).  `tensor` is the descriptor; NULL data is
// skipped by the enumerator.
struct OpAccess {
  const char* field;
  const seatrt_tensor* tensor;
  Access access;
};

// Calls fn(OpAccess) for every device tensor the op touches: tensor fields,
// the data and scales of weights (expert arrays: every expert), the caches
// of a kv_layer.  Host fields are skipped.  The op must have passed
// read_args_raw (fields of a shorter struct are not visited).
template <typename Fn>
void for_each_access(const seatrt_op& op, Fn&& fn);

// The [first, last) byte range a tensor view spans (strides honoured).
struct ByteRange {
  const char* first;
  const char* last;
  bool overlaps(const ByteRange& o) const { return first < o.last && o.first < last; }
};
inline ByteRange byte_range(const seatrt_tensor& t);

// ----------------------------------------------------------------- details

namespace detail {
inline const void* field_pointer(const void* args, const OpField& f) {
  const void* p;
  std::memcpy(&p, static_cast<const char*>(args) + f.offset, sizeof(p));
  return p;
}
inline int32_t expert_count(const seatrt_op& op) {
  if (op.kind != SEATRT_OP_MOE) return 1;
  uint32_t size;
  std::memcpy(&size, op.args, sizeof(size));
  if (size < offsetof(seatrt_moe_args, num_experts) + sizeof(int32_t)) return 0;
  int32_t n;
  std::memcpy(&n, static_cast<const char*>(op.args) + offsetof(seatrt_moe_args, num_experts), sizeof(n));
  return n > 0 ? n : 0;
}

#define SEATRT_F(S, f, type, access, optional) \
  OpField { #f, offsetof(S, f), FieldType::type, Access::access, optional }
inline constexpr OpField kElementwise[] = {
    SEATRT_F(seatrt_elementwise_args, a, tensor, read, false),
    SEATRT_F(seatrt_elementwise_args, b, tensor, read, true),
    SEATRT_F(seatrt_elementwise_args, out, tensor, write, false)};
inline constexpr OpField kEmbedding[] = {
    SEATRT_F(seatrt_embedding_args, ids, tensor, read, false),
    SEATRT_F(seatrt_embedding_args, table, tensor, read, false),
    SEATRT_F(seatrt_embedding_args, out, tensor, write, false)};
inline constexpr OpField kRmsNorm[] = {
    SEATRT_F(seatrt_rms_norm_args, x, tensor, read, false),
    SEATRT_F(seatrt_rms_norm_args, weight, tensor, read, true),
    SEATRT_F(seatrt_rms_norm_args, out, tensor, write, false)};
inline constexpr OpField kLinear[] = {
    SEATRT_F(seatrt_linear_args, x, tensor, read, false),
    SEATRT_F(seatrt_linear_args, weight, weight, read, false),
    SEATRT_F(seatrt_linear_args, out, tensor, write, false),
    SEATRT_F(seatrt_linear_args, bias, tensor, read, true)};
inline constexpr OpField kGlu[] = {
    SEATRT_F(seatrt_glu_args, gate, tensor, read, false),
    SEATRT_F(seatrt_glu_args, up, tensor, read, false),
    SEATRT_F(seatrt_glu_args, out, tensor, write, false)};
inline constexpr OpField kRope[] = {
    SEATRT_F(seatrt_rope_args, x, tensor, read, false),
    SEATRT_F(seatrt_rope_args, positions, tensor, read, false),
    SEATRT_F(seatrt_rope_args, inv_freq, tensor, read, false),
    SEATRT_F(seatrt_rope_args, out, tensor, write, false)};
inline constexpr OpField kKvStore[] = {
    SEATRT_F(seatrt_kv_store_args, k, tensor, read, false),
    SEATRT_F(seatrt_kv_store_args, v, tensor, read, true),
    SEATRT_F(seatrt_kv_store_args, slot_mapping, tensor, read, false),
    SEATRT_F(seatrt_kv_store_args, cache, kv_layer, write, false)};
inline constexpr OpField kAttention[] = {
    SEATRT_F(seatrt_attention_args, q, tensor, read, false),
    SEATRT_F(seatrt_attention_args, cache, kv_layer, read, false),
    SEATRT_F(seatrt_attention_args, query_start, tensor, read, false),
    SEATRT_F(seatrt_attention_args, seq_lens, tensor, read, false),
    SEATRT_F(seatrt_attention_args, block_tables, tensor, read, false),
    SEATRT_F(seatrt_attention_args, out, tensor, write, false)};
inline constexpr OpField kRouterTopk[] = {
    SEATRT_F(seatrt_router_topk_args, logits, tensor, read, false),
    SEATRT_F(seatrt_router_topk_args, per_expert_scale, tensor, read, true),
    SEATRT_F(seatrt_router_topk_args, ids, tensor, write, false),
    SEATRT_F(seatrt_router_topk_args, weights, tensor, write, false),
    SEATRT_F(seatrt_router_topk_args, correction_bias, tensor, read, true)};
inline constexpr OpField kMoe[] = {
    SEATRT_F(seatrt_moe_args, x, tensor, read, false),
    SEATRT_F(seatrt_moe_args, ids, tensor, read, false),
    SEATRT_F(seatrt_moe_args, weights, tensor, read, false),
    SEATRT_F(seatrt_moe_args, gate, expert_array, read, false),
    SEATRT_F(seatrt_moe_args, up, expert_array, read, false),
    SEATRT_F(seatrt_moe_args, down, expert_array, read, false),
    SEATRT_F(seatrt_moe_args, out, tensor, write, false)};
inline constexpr OpField kGatherRows[] = {
    SEATRT_F(seatrt_gather_rows_args, x, tensor, read, false),
    SEATRT_F(seatrt_gather_rows_args, index, tensor, read, false),
    SEATRT_F(seatrt_gather_rows_args, out, tensor, write, false)};
inline constexpr OpField kSample[] = {
    SEATRT_F(seatrt_sample_args, logits, tensor, read, false),
    SEATRT_F(seatrt_sample_args, rows, host, read, false),
    SEATRT_F(seatrt_sample_args, token, host, write, false),
    SEATRT_F(seatrt_sample_args, logprob, host, write, true),
    SEATRT_F(seatrt_sample_args, top_ids, host, write, true),
    SEATRT_F(seatrt_sample_args, top_logprobs, host, write, true),
    SEATRT_F(seatrt_sample_args, non_finite, host, write, true)};
inline constexpr OpField kConv1d[] = {
    SEATRT_F(seatrt_conv1d_causal_args, x, tensor, read, false),
    SEATRT_F(seatrt_conv1d_causal_args, weight, tensor, read, false),
    SEATRT_F(seatrt_conv1d_causal_args, bias, tensor, read, true),
    SEATRT_F(seatrt_conv1d_causal_args, state, tensor, read_write, false),
    SEATRT_F(seatrt_conv1d_causal_args, state_index, tensor, read, false),
    SEATRT_F(seatrt_conv1d_causal_args, reset, tensor, read, true),
    SEATRT_F(seatrt_conv1d_causal_args, query_start, tensor, read, false),
    SEATRT_F(seatrt_conv1d_causal_args, out, tensor, write, false)};
inline constexpr OpField kDeltaRule[] = {
    SEATRT_F(seatrt_delta_rule_args, q, tensor, read, false),
    SEATRT_F(seatrt_delta_rule_args, k, tensor, read, false),
    SEATRT_F(seatrt_delta_rule_args, v, tensor, read, false),
    SEATRT_F(seatrt_delta_rule_args, g, tensor, read, false),
    SEATRT_F(seatrt_delta_rule_args, beta, tensor, read, false),
    SEATRT_F(seatrt_delta_rule_args, state, tensor, read_write, false),
    SEATRT_F(seatrt_delta_rule_args, state_index, tensor, read, false),
    SEATRT_F(seatrt_delta_rule_args, reset, tensor, read, true),
    SEATRT_F(seatrt_delta_rule_args, query_start, tensor, read, false),
    SEATRT_F(seatrt_delta_rule_args, out, tensor, write, false)};
#undef SEATRT_F

inline constexpr OpInfo kOps[] = {
    {SEATRT_OP_ELEMENTWISE, "elementwise", sizeof(seatrt_elementwise_args), false, kElementwise},
    {SEATRT_OP_EMBEDDING, "embedding", sizeof(seatrt_embedding_args), false, kEmbedding},
    {SEATRT_OP_RMS_NORM, "rms_norm", sizeof(seatrt_rms_norm_args), false, kRmsNorm},
    {SEATRT_OP_LINEAR, "linear", sizeof(seatrt_linear_args), false, kLinear},
    {SEATRT_OP_GLU, "glu", sizeof(seatrt_glu_args), false, kGlu},
    {SEATRT_OP_ROPE, "rope", sizeof(seatrt_rope_args), false, kRope},
    {SEATRT_OP_KV_STORE, "kv_store", sizeof(seatrt_kv_store_args), false, kKvStore},
    {SEATRT_OP_ATTENTION, "attention", sizeof(seatrt_attention_args), false, kAttention},
    {SEATRT_OP_ROUTER_TOPK, "router_topk", sizeof(seatrt_router_topk_args), false, kRouterTopk},
    {SEATRT_OP_MOE, "moe", sizeof(seatrt_moe_args), false, kMoe},
    {SEATRT_OP_GATHER_ROWS, "gather_rows", sizeof(seatrt_gather_rows_args), false, kGatherRows},
    {SEATRT_OP_SAMPLE, "sample", sizeof(seatrt_sample_args), true, kSample},
    {SEATRT_OP_CONV1D_CAUSAL, "conv1d_causal", sizeof(seatrt_conv1d_causal_args), false, kConv1d},
    {SEATRT_OP_DELTA_RULE, "delta_rule", sizeof(seatrt_delta_rule_args), false, kDeltaRule},
};
}  // namespace detail

inline const OpInfo* op_info(int32_t kind) {
  for (const OpInfo& i : detail::kOps)
    if (i.kind == kind) return &i;
  return nullptr;
}

inline std::string op_name(int32_t kind) {
  const OpInfo* i = op_info(kind);
  return i ? i->name : "unknown op kind " + std::to_string(kind);
}

inline bool read_args_raw(const seatrt_op* op, int32_t kind, void* out, std::size_t out_size, std::string* why) {
  const auto fail = [&](std::string m) {
    if (why) *why = std::move(m);
    return false;
  };
  std::memset(out, 0, out_size);
  const std::string name = op_name(kind);
  if (!op) return fail(name + ": no operation (NULL)");
  if (op->struct_size < sizeof(seatrt_op)) return fail(name + ": seatrt_op.struct_size " + std::to_string(op->struct_size) + " is too small");
  if (op->kind != kind) return fail(name + ": the operation is a '" + op_name(op->kind) + "'");
  if (!op->args) return fail(name + ": no args (NULL)");
  uint32_t size;
  std::memcpy(&size, op->args, sizeof(size));
  if (size < sizeof(uint32_t) * 2) return fail(name + ": args.struct_size " + std::to_string(size) + " is too small");
  const auto* bytes = static_cast<const unsigned char*>(op->args);
  for (std::size_t i = out_size; i < size; ++i)
    if (bytes[i] != 0)
      return fail(name + ": args.struct_size " + std::to_string(size) + " carries fields this provider does not know (it knows " +
                  std::to_string(out_size) + " bytes)");
  std::memcpy(out, op->args, size < out_size ? size : out_size);
  std::memcpy(out, &size, sizeof(size));  // keep the caller's size visible
  const OpInfo* info = op_info(kind);
  if (!info) return fail(name + ": not in this SDK's registry");
  for (const OpField& f : info->fields) {
    if (f.optional) continue;
    if (!detail::field_pointer(out, f)) return fail(name + ": '" + f.name + "' is required (NULL)");
  }
  return true;
}

inline seatrt_status_code refusal_code(const seatrt_op* op) {
  if (!op || op->struct_size < sizeof(seatrt_op) || !op->args) return SEATRT_ERR_INVALID_ARG;
  const OpInfo* info = op_info(op->kind);
  if (!info) return SEATRT_ERR_UNSUPPORTED;
  uint32_t size;
  std::memcpy(&size, op->args, sizeof(size));
  const auto* bytes = static_cast<const unsigned char*>(op->args);
  for (std::size_t i = info->args_size; i < size; ++i)
    if (bytes[i] != 0) return SEATRT_ERR_UNSUPPORTED;
  return SEATRT_ERR_INVALID_ARG;
}

inline ByteRange byte_range(const seatrt_tensor& t) {
  const auto* base = static_cast<const char*>(t.data);
  std::size_t elem = 1;
  switch (t.dtype) {
    case SEATRT_DTYPE_F32: case SEATRT_DTYPE_I32: case SEATRT_DTYPE_U32: elem = 4; break;
    case SEATRT_DTYPE_F16: case SEATRT_DTYPE_BF16: elem = 2; break;
    case SEATRT_DTYPE_I64: case SEATRT_DTYPE_F64: elem = 8; break;
    default: elem = 1; break;
  }
  int64_t last = 0;
  for (int32_t i = 0; i < t.ndim && i < SEATRT_MAX_DIMS; ++i) {
    if (t.shape[i] <= 0) return {base, base};
    last += (t.shape[i] - 1) * t.strides[i];
  }
  return {base, base + (last + 1) * static_cast<int64_t>(elem)};
}

template <typename Fn>
void for_each_access(const seatrt_op& op, Fn&& fn) {
  const OpInfo* info = op_info(op.kind);
  if (!info || !op.args) return;
  uint32_t size;
  std::memcpy(&size, op.args, sizeof(size));
  for (const OpField& f : info->fields) {
    if (f.offset + sizeof(void*) > size) continue;
    const void* p = detail::field_pointer(op.args, f);
    if (!p) continue;
    switch (f.type) {
      case FieldType::tensor: {
        const auto* t = static_cast<const seatrt_tensor*>(p);
        if (t->data) fn(OpAccess{f.name, t, f.access});
        break;
      }
      case FieldType::weight:
      case FieldType::expert_array: {
        const int32_t n = f.type == FieldType::weight ? 1 : detail::expert_count(op);
        const auto* w = static_cast<const seatrt_linear_weight*>(p);
        for (int32_t i = 0; i < n; ++i) {
          if (w[i].data.data) fn(OpAccess{f.name, &w[i].data, Access::read});
          if (w[i].scales.data) fn(OpAccess{f.name, &w[i].scales, Access::read});
        }
        break;
      }
      case FieldType::kv_layer: {
        const auto* kv = static_cast<const seatrt_kv_layer*>(p);
        if (kv->k_cache.data) fn(OpAccess{f.name, &kv->k_cache, f.access});
        if (kv->v_cache.data) fn(OpAccess{f.name, &kv->v_cache, f.access});
        break;
      }
      case FieldType::host: break;
    }
  }
}

}  // namespace seatrt::sdk
