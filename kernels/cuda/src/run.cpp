// supports() and run() of the 2.0 table: every operation goes through the
// SDK's shared argument checker (seatrt/cpp/op_registry.hpp), then this
// provider's answer for its kind and fields (supports.cpp), then its
// function (ops.hpp), timed when the profiler is on.
#include <algorithm>
#include <cstring>
#include <string>

#include "ops.hpp"
#include "profile.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::cuda {
namespace {

namespace sdk = seatrt::sdk;

// Room for any kind's args struct as this SDK defines it.
constexpr std::size_t kArgsBytes = [] {
  std::size_t m = 0;
  for (const sdk::OpInfo& i : sdk::detail::kOps) m = std::max(m, i.args_size);
  return m;
}();

}  // namespace

void check_op(const seatrt_op* op) {
  alignas(16) unsigned char buffer[kArgsBytes];
  std::string why;
  const int32_t kind = op ? op->kind : SEATRT_OP_INVALID;
  const sdk::OpInfo* info = sdk::op_info(kind);
  if (!info) throw sdk::Error(op ? SEATRT_ERR_UNSUPPORTED : SEATRT_ERR_INVALID_ARG, "cuda: " + sdk::op_name(kind));
  if (!sdk::read_args_raw(op, kind, buffer, info->args_size, &why))
    throw sdk::Error(sdk::refusal_code(op), "cuda: " + why);
}

namespace {

template <seatrt_op_kind K>
typename sdk::OpArgs<K>::type args_of(const seatrt_op* op) {
  typename sdk::OpArgs<K>::type a{};
  sdk::read_args<K>(op, a, nullptr);
  return a;
}

template <seatrt_op_kind K, typename Fn>
void timed(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_op* op, Fn fn) {
  const auto a = args_of<K>(op);
  const OpTimer timer(profiler_of(ctx), s, sdk::op_info(K)->name, &a);
  fn(ctx, s, &a);
}

}  // namespace

bool supports_op(const seatrt_op* op) {
  try {
    check_op(op);
    return unsupported_reason(*op).empty();
  } catch (const sdk::Error&) {
    return false;
  }
}

void run_op(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_op* op) {
  check_op(op);
  const std::string why = unsupported_reason(*op);
  if (!why.empty()) throw sdk::Error(SEATRT_ERR_UNSUPPORTED, "cuda: " + sdk::op_name(op->kind) + ": " + why);
  switch (op->kind) {
    case SEATRT_OP_ELEMENTWISE: return timed<SEATRT_OP_ELEMENTWISE>(ctx, s, op, elementwise);
    case SEATRT_OP_EMBEDDING: return timed<SEATRT_OP_EMBEDDING>(ctx, s, op, embedding);
    case SEATRT_OP_RMS_NORM: return timed<SEATRT_OP_RMS_NORM>(ctx, s, op, rms_norm);
    case SEATRT_OP_LINEAR: return timed<SEATRT_OP_LINEAR>(ctx, s, op, linear);
    case SEATRT_OP_GLU: return timed<SEATRT_OP_GLU>(ctx, s, op, glu);
    case SEATRT_OP_ROPE: return timed<SEATRT_OP_ROPE>(ctx, s, op, rope);
    case SEATRT_OP_KV_STORE: return timed<SEATRT_OP_KV_STORE>(ctx, s, op, kv_store);
    case SEATRT_OP_ATTENTION: return timed<SEATRT_OP_ATTENTION>(ctx, s, op, attention);
    case SEATRT_OP_ROUTER_TOPK: return timed<SEATRT_OP_ROUTER_TOPK>(ctx, s, op, router_topk);
    case SEATRT_OP_MOE: return timed<SEATRT_OP_MOE>(ctx, s, op, moe);
    case SEATRT_OP_GATHER_ROWS: return timed<SEATRT_OP_GATHER_ROWS>(ctx, s, op, gather_rows);
    case SEATRT_OP_SAMPLE: return timed<SEATRT_OP_SAMPLE>(ctx, s, op, sample);
    default: throw sdk::Error(SEATRT_ERR_UNSUPPORTED, "cuda: " + sdk::op_name(op->kind));
  }
}

}  // namespace seatrt::cuda
