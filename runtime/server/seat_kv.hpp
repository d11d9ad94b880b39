// The seat's context length and KV pool plan, as `seatrt serve` makes them
// at load and `seatrt check` makes them before (from the architecture's
// describe(), without loading a weight): one code path, so a seat that
// passes check does not fail serve's KV planning.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "engine/kv_plan.hpp"
#include "seatrt/host/seat_config.hpp"
#include "seatrt/host/seat_plugins.hpp"

namespace seatrt::server {

// [model] max_model_len, else the model's max_position; throws naming the
// key when neither is set or it exceeds max_position.
int64_t seat_max_model_len(const host::SeatConfig& seat, int64_t max_position);

// The KV planning input for the seat's [cache] and [scheduler] and the
// model's layers; kv_cache_dtype "auto" is fp8 on CUDA, else bf16.
engine::KvPlanInput seat_kv_input(const host::SeatConfig& seat, const std::vector<engine::KvLayerSpec>& layers,
                                  int64_t max_model_len, int32_t device_kind);

// The pool's bytes: [cache] kv_cache_memory, else kv_cache_max_context_multiple
// (default 2) times max_model_len's bytes.
uint64_t seat_kv_bytes(const host::SeatConfig& seat, const engine::KvPlanInput& input);

// The pool plan (engine::plan_kv_pool) for the seat; its refusal says which
// key sized the pool (kv_cache_memory, or kv_cache_max_context_multiple).
engine::KvPlan plan_seat_kv(const host::SeatConfig& seat, const engine::KvPlanInput& input);

// `seatrt check`'s KV step: the plan from the architecture's describe(),
// printed as serve logs it.  Throws (one line) where serve would refuse the
// seat (a pool too small for one max_model_len sequence, a bad
// max_model_len); prints that the plan was skipped when the architecture
// plugin predates describe().
void check_seat_kv(const host::SeatConfig& seat, host::SeatPlugins& plugins, std::ostream& out);

}  // namespace seatrt::server
