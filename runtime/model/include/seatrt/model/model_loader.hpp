// Loads a checkpoint directory into an architecture plugin:
//   1. open the checkpoint (safetensors, sharded) and read config.json;
//   2. pick the quantization plugin whose probe() scores quantization_config
//      highest (none needed when config.json has no quantization_config) and
//      create its scheme;
//   3. pick the architecture plugin whose probe() scores config.json highest;
//   4. run its inspect() (the checkpoint guard) before any weight is read;
//   5. create() the model against a kernel provider.
// Every refusal is a StatusError whose message names the problem.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seatrt/model.h"
#include "seatrt/model/checkpoint.hpp"
#include "seatrt/model/model_config.hpp"
#include "seatrt/model/model_source.hpp"

namespace seatrt::model {

// A plugin the loader may choose: its normalised descriptor and whatever
// keeps the library loaded (a host::LoadedPlugin).
struct PluginHandle {
  std::string name;
  const seatrt_plugin* descriptor = nullptr;
  std::shared_ptr<const void> keep_alive;
};

// The checkpoint opened and the plugins chosen; nothing on a device yet.
class PreparedModel {
 public:
  ~PreparedModel();
  PreparedModel(const PreparedModel&) = delete;
  PreparedModel& operator=(const PreparedModel&) = delete;

  const ModelConfig& config() const { return config_; }
  const Checkpoint& checkpoint() const { return *checkpoint_; }
  HostModelSource& source() { return *source_; }
  const std::string& arch_name() const { return arch_.name; }
  const std::string& quant_name() const { return quant_.name; }  // "" when not quantized
  const seatrt_arch_api& arch_api() const { return arch_api_; }

  // Runs the architecture's inspect(); each report line goes to `report`
  // (may be empty).  Throws StatusError with the guard's message when the
  // checkpoint may not be loaded.
  void inspect(const std::function<void(const std::string&)>& report) const;

  // The architecture's describe(): the model's shape and KV layer
  // specs from config.json, no tensor read.  std::nullopt when the plugin
  // does not provide it; throws StatusError when it refuses the config.
  struct Shape {
    seatrt_model_info info{};  // kv_layers NULL: the specs are `layers`
    std::vector<seatrt_kv_layer_spec> layers;
  };
  std::optional<Shape> describe() const;

 private:
  friend class ModelLoader;
  friend class LoadedModel;
  PreparedModel() = default;

  const seatrt_host_api* host_ = nullptr;
  ModelConfig config_;
  std::shared_ptr<const Checkpoint> checkpoint_;
  PluginHandle quant_;
  PluginHandle arch_;
  seatrt_quant_api quant_api_{};
  seatrt_arch_api arch_api_{};
  seatrt_quant_scheme* scheme_ = nullptr;
  std::unique_ptr<HostModelSource> source_;
};

// A created model: destroys the model before the weights and scheme go.
class LoadedModel {
 public:
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  seatrt_model* model() const { return model_; }
  const seatrt_arch_api& arch() const { return prepared_->arch_api_; }
  const seatrt_model_info& info() const { return info_; }
  const seatrt_kernel_api* kernels() const { return kernels_; }
  seatrt_kernel_context* kernel_context() const { return context_; }
  const seatrt_host_api* host() const { return prepared_->host_; }
  const PreparedModel& prepared() const { return *prepared_; }

 private:
  friend class ModelLoader;
  LoadedModel() = default;
  std::unique_ptr<PreparedModel> prepared_;
  seatrt_model* model_ = nullptr;
  seatrt_model_info info_{};
  const seatrt_kernel_api* kernels_ = nullptr;
  seatrt_kernel_context* context_ = nullptr;
};

class ModelLoader {
 public:
  // `plugins`: every loaded plugin the loader may choose from (kinds other
  // than architecture/quantization are ignored).
  ModelLoader(const seatrt_host_api* host, std::vector<PluginHandle> plugins);

  // Steps 1-3.  `quant_options_toml` goes to the scheme's create().
  std::unique_ptr<PreparedModel> prepare(const std::filesystem::path& model_dir,
                                         const std::string& quant_options_toml = "") const;

  // Steps 4-5: inspect() then create() with this provider (the dispatch
  // table and a context made from it; both must outlive the model).
  std::unique_ptr<LoadedModel> load(std::unique_ptr<PreparedModel> prepared, const seatrt_kernel_api* kernels,
                                    seatrt_kernel_context* context, int64_t max_batch_tokens,
                                    const std::string& model_options_toml = "") const;

 private:
  const seatrt_host_api* host_;
  std::vector<PluginHandle> plugins_;
};

}  // namespace seatrt::model
