// The CPU provider's operations, callable directly (tests link the static
// library) or through the kernel table's run() (provider_table.cpp), which
// first normalises the args with the SDK's read_args (struct_size rule,
// required fields non-NULL).  Each throws seatrt::sdk::Error on bad
// arguments, before writing any output.
#pragma once

#include <cstdint>
#include <memory>

#include "seatrt/seatrt.h"
#include "thread_pool.hpp"

namespace seatrt::cpu {

struct Context {
  explicit Context(int32_t threads) : pool(threads) {}
  ThreadPool pool;
};

void elementwise(Context& ctx, const seatrt_elementwise_args& args);
void embedding(Context& ctx, const seatrt_embedding_args& args);
void gather_rows(Context& ctx, const seatrt_gather_rows_args& args);
void rms_norm(Context& ctx, const seatrt_rms_norm_args& args);
void linear(Context& ctx, const seatrt_linear_args& args);
void glu(Context& ctx, const seatrt_glu_args& args);
void rope(Context& ctx, const seatrt_rope_args& args);
void kv_store(Context& ctx, const seatrt_kv_store_args& args);
void attention(Context& ctx, const seatrt_attention_args& args);
void router_topk(Context& ctx, const seatrt_router_topk_args& args);
void moe(Context& ctx, const seatrt_moe_args& args);
void sample(Context& ctx, const seatrt_sample_args& args);
void conv1d_causal(Context& ctx, const seatrt_conv1d_causal_args& args);
void delta_rule(Context& ctx, const seatrt_delta_rule_args& args);

// The weight layouts this provider reads for `format`, most preferred first.
// Unknown format: UNSUPPORTED.
int32_t weight_layouts(int32_t format, int32_t* layouts, int32_t capacity);
// Checks a Linear weight completely (format, layout, dtypes, shapes).
void validate_weight(const seatrt_linear_weight* weight, const char* op, const char* name);

}  // namespace seatrt::cpu
