// The "gemma4" architecture plugin: the seatrt_arch_api table.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "checkpoint_guard.hpp"
#include "gemma4_config.hpp"
#include "gemma4_model.hpp"
#include "seatrt/cpp/plugin.hpp"
#include "seatrt/seatrt.h"

using seatrt::sdk::Error;

struct seatrt_model {
  std::unique_ptr<seatrt::gemma4::Model> impl;
};

namespace {

seatrt::gemma4::Config parse_config(const char* json) {
  try {
    return seatrt::gemma4::Config::parse(json ? json : "");
  } catch (const std::invalid_argument& e) {
    throw Error(SEATRT_ERR_INVALID_ARG, e.what());
  }
}

seatrt_status* probe(const char* config_json, int32_t* score) {
  return seatrt::sdk::guard([&] { *score = seatrt::gemma4::probe_score(config_json ? config_json : ""); });
}

seatrt_status* inspect(const seatrt_model_source* src, seatrt_report_fn report, void* user) {
  return seatrt::sdk::guard([&] {
    const auto config = parse_config(src->config_json);
    seatrt::gemma4::inspect_checkpoint(config, src, [&](const std::string& line) {
      if (report) report(user, line.c_str());
    });
  });
}

// [model.options] is ignored: the model has no tuning of its own (how a
// step's nodes are fused and overlapped is the provider's planner's).
seatrt_status* create(const seatrt_model_source* src, const char* /*options*/, seatrt_model** out) {
  return seatrt::sdk::guard([&] {
    auto model = std::make_unique<seatrt_model>();
    model->impl = std::make_unique<seatrt::gemma4::Model>(src, parse_config(src->config_json));
    *out = model.release();
  });
}

void destroy(seatrt_model* model) { delete model; }

seatrt_status* info(const seatrt_model* model, seatrt_model_info* out) {
  return seatrt::sdk::guard([&] {
    if (!out) throw Error(SEATRT_ERR_INVALID_ARG, "info: out is NULL");
    // Fill only as far as the caller's struct reaches (ABI size rule).
    const uint32_t size = out->struct_size;
    seatrt_model_info full = model->impl->info();
    std::memcpy(out, &full, std::min<std::size_t>(size, sizeof(full)));
    out->struct_size = size;
  });
}

seatrt_status* forward(seatrt_model* model, seatrt_stream stream, const seatrt_forward_batch* batch) {
  return seatrt::sdk::guard([&] {
    if (!batch) throw Error(SEATRT_ERR_INVALID_ARG, "forward: batch is NULL");
    model->impl->forward(stream, *batch);
  });
}

seatrt_status* set_trace(seatrt_model* model, seatrt_trace_fn fn, void* user) {
  return seatrt::sdk::guard([&] { model->impl->set_trace(fn, user); });
}

// What create()'s info() reports, from config.json alone: the host plans the KV pool with it before loading (`seatrt check`).
seatrt_status* describe(const seatrt_model_source* src, seatrt_model_info* out, seatrt_kv_layer_spec* layers,
                        int32_t capacity) {
  return seatrt::sdk::guard([&] {
    if (!src || !out) throw Error(SEATRT_ERR_INVALID_ARG, "describe: src or out is NULL");
    const auto c = parse_config(src->config_json);
    seatrt_model_info full = seatrt::gemma4::Model::shape_info(c);
    const uint32_t size = out->struct_size;
    const auto specs = seatrt::gemma4::Model::kv_specs(c);
    const auto n = static_cast<int32_t>(specs.size());
    if (n > capacity || (n > 0 && !layers)) {
      if (SEATRT_HAS_FIELD(out, seatrt_model_info, num_layers)) out->num_layers = n;
      throw Error(SEATRT_ERR_INVALID_ARG, "describe: room for " + std::to_string(capacity) + " layers, the model has " +
                                              std::to_string(n));
    }
    std::copy(specs.begin(), specs.end(), layers);
    full.kv_layers = layers;
    std::memcpy(out, &full, std::min<std::size_t>(size, sizeof(full)));
    out->struct_size = size;
  });
}

seatrt_status* describe_steps(seatrt_model* model, int32_t max_seqs, seatrt_report_fn report, void* user) {
  return seatrt::sdk::guard([&] {
    model->impl->describe_steps(max_seqs, [&](const std::string& line) {
      if (report) report(user, line.c_str());
    });
  });
}

seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
}

constexpr seatrt_arch_api kArchApi = {
    sizeof(seatrt_arch_api), 0, probe, inspect, create, destroy, info, forward, set_trace, describe, describe_steps,
};

const seatrt_plugin kPlugin = [] {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_ARCHITECTURE, "gemma4", "0.1.0",
                                          "Gemma-4 text decoder (26B-A4B MoE and dense variants)");
  p.initialize = initialize;
  p.architecture = &kArchApi;
  return p;
}();

}  // namespace

SEATRT_DEFINE_PLUGIN(kPlugin)
