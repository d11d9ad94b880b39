#include "seat_kv.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "seatrt/host/status.hpp"
#include "seatrt/model/model_loader.hpp"
#include "seatrt/model/model_session.hpp"
#include "seatrt/model/status.hpp"

namespace seatrt::server {

int64_t seat_max_model_len(const host::SeatConfig& seat, int64_t max_position) {
  const int64_t len = seat.model.max_model_len > 0 ? seat.model.max_model_len : max_position;
  if (len <= 0)
    throw std::runtime_error(seat.file.string() +
                             ": [model] max_model_len is not set and the model reports no max_position");
  if (max_position > 0 && len > max_position)
    throw std::runtime_error(seat.file.string() + ": [model] max_model_len " + std::to_string(len) +
                             " exceeds the model's max_position_embeddings " + std::to_string(max_position));
  return len;
}

engine::KvPlanInput seat_kv_input(const host::SeatConfig& seat, const std::vector<engine::KvLayerSpec>& layers,
                                  int64_t max_model_len, int32_t device_kind) {
  engine::KvPlanInput in;
  in.layers = layers;
  const std::string dtype_name = seat.cache.kv_cache_dtype == "auto"
                                     ? (device_kind == SEATRT_DEVICE_CUDA ? "fp8" : "bf16")
                                     : seat.cache.kv_cache_dtype;
  in.dtype = engine::parse_kv_dtype(dtype_name);
  in.block_size = seat.cache.block_size;
  in.max_model_len = max_model_len;
  in.max_num_seqs = seat.scheduler.max_num_seqs;
  in.max_num_batched_tokens = seat.scheduler.max_num_batched_tokens;
  return in;
}

uint64_t seat_kv_bytes(const host::SeatConfig& seat, const engine::KvPlanInput& input) {
  return seat.cache.kv_cache_memory
             ? static_cast<uint64_t>(*seat.cache.kv_cache_memory)
             : engine::kv_bytes_for_context_multiple(input, seat.cache.kv_cache_max_context_multiple.value_or(2.0));
}

engine::KvPlan plan_seat_kv(const host::SeatConfig& seat, const engine::KvPlanInput& input) {
  try {
    return engine::plan_kv_pool(input, seat_kv_bytes(seat, input));
  } catch (const std::invalid_argument& e) {
    if (seat.cache.kv_cache_memory) throw;
    char multiple[32];
    std::snprintf(multiple, sizeof multiple, "%g", seat.cache.kv_cache_max_context_multiple.value_or(2.0));
    throw std::invalid_argument(std::string(e.what()) + " (the pool's bytes came from kv_cache_max_context_multiple = " +
                                multiple + " times max_model_len: raise it, or set kv_cache_memory)");
  }
}

void check_seat_kv(const host::SeatConfig& seat, host::SeatPlugins& plugins, std::ostream& out) {
  std::optional<model::PreparedModel::Shape> shape;
  try {
    model::ModelLoader loader(host::host_api(), model::model_plugin_candidates(seat, plugins));
    shape = loader.prepare(seat.model.path)->describe();
  } catch (const model::StatusError& e) {
    throw host::Error(e.code(), std::string("model: ") + e.what());
  }
  if (!shape) {
    out << "KV pool: not planned (the architecture plugin has no describe()); serve plans it at load\n";
    return;
  }
  const int64_t max_model_len = seat_max_model_len(seat, shape->info.max_position);
  std::vector<engine::KvLayerSpec> layers;
  for (const auto& s : shape->layers) layers.push_back({s.kv_heads, s.head_dim, s.window, s.single_tensor != 0});
  const engine::KvPlanInput input = seat_kv_input(seat, layers, max_model_len, plugins.dispatch->table()->device_kind);
  try {
    out << "max_model_len: " << max_model_len << "\n";
    out << engine::describe(plan_seat_kv(seat, input)) << "\n";
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(seat.file.string() + ": [cache] " + e.what());
  }
}

}  // namespace seatrt::server
