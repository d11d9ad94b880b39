// The "tinydense" architecture plugin: the seatrt_arch_api table.  Every
// entry converts exceptions to statuses (guard), as none may cross the ABI.
#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "checkpoint.hpp"
#include "config.hpp"
#include "model.hpp"
#include "seatrt/cpp/plugin.hpp"

using seatrt::sdk::Error;

struct seatrt_model {
  std::unique_ptr<tinydense::Model> impl;
};

namespace {

tinydense::Config parse_config(const char* json) {
  try {
    return tinydense::Config::parse(json ? json : "");
  } catch (const std::invalid_argument& e) {
    throw Error(SEATRT_ERR_INVALID_ARG, e.what());
  }
}

// Copies `full` into the caller's struct only as far as it reaches.
void fill(seatrt_model_info* out, const seatrt_model_info& full) {
  const uint32_t size = out->struct_size;
  std::memcpy(out, &full, std::min<std::size_t>(size, sizeof(full)));
  out->struct_size = size;
}

seatrt_status* probe(const char* config_json, int32_t* score) {
  return seatrt::sdk::guard([&] { *score = tinydense::probe_score(config_json ? config_json : ""); });
}

seatrt_status* inspect(const seatrt_model_source* src, seatrt_report_fn report, void* user) {
  return seatrt::sdk::guard([&] {
    tinydense::inspect_checkpoint(parse_config(src->config_json), src, [&](const std::string& line) {
      if (report) report(user, line.c_str());
    });
  });
}

seatrt_status* create(const seatrt_model_source* src, const char* /*options*/, seatrt_model** out) {
  return seatrt::sdk::guard([&] {
    const auto config = parse_config(src->config_json);
    tinydense::inspect_checkpoint(config, src, [](const std::string&) {});
    auto model = std::make_unique<seatrt_model>();
    model->impl = std::make_unique<tinydense::Model>(src, config);
    *out = model.release();
  });
}

void destroy(seatrt_model* model) { delete model; }

seatrt_status* info(const seatrt_model* model, seatrt_model_info* out) {
  return seatrt::sdk::guard([&] {
    if (!out) throw Error(SEATRT_ERR_INVALID_ARG, "info: out is NULL");
    fill(out, model->impl->info());
  });
}

seatrt_status* forward(seatrt_model* model, seatrt_stream stream, const seatrt_forward_batch* batch) {
  return seatrt::sdk::guard([&] {
    if (!batch) throw Error(SEATRT_ERR_INVALID_ARG, "forward: batch is NULL");
    model->impl->forward(stream, *batch);
  });
}

seatrt_status* describe(const seatrt_model_source* src, seatrt_model_info* out, seatrt_kv_layer_spec* layers,
                        int32_t capacity) {
  return seatrt::sdk::guard([&] {
    if (!src || !out) throw Error(SEATRT_ERR_INVALID_ARG, "describe: src or out is NULL");
    const auto c = parse_config(src->config_json);
    if (c.num_layers > capacity || !layers) {
      if (SEATRT_HAS_FIELD(out, seatrt_model_info, num_layers)) out->num_layers = c.num_layers;
      throw Error(SEATRT_ERR_INVALID_ARG, "describe: room for " + std::to_string(capacity) +
                                              " layers, the model has " + std::to_string(c.num_layers));
    }
    std::fill(layers, layers + c.num_layers, tinydense::Model::kv_spec(c));
    seatrt_model_info full = tinydense::Model::shape_info(c);
    full.kv_layers = layers;
    fill(out, full);
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

// set_trace is optional (NULL): this example reports no intermediate tensors.
constexpr seatrt_arch_api kArchApi = {
    sizeof(seatrt_arch_api), 0, probe, inspect, create, destroy, info, forward, nullptr, describe, describe_steps,
};

const seatrt_plugin kPlugin = [] {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_ARCHITECTURE, "tinydense", "0.1.0",
                                          "SDK example 4: a small dense decoder (Llama/Qwen2 style) as graphs");
  p.initialize = initialize;
  p.architecture = &kArchApi;
  return p;
}();

}  // namespace

SEATRT_DEFINE_PLUGIN(kPlugin)
