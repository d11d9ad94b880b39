// The host's implementation of seatrt_model_source (model.h): the
// checkpoint's tensors, the quantization state of each Linear, and loading
// Linears/tensors onto the kernel provider's device.
//
// load_linear: ask the provider which layouts it reads for the module's
// format, ask the quantization plugin which it writes, convert into the
// first layout both support (provider's preference order), allocate with the
// provider, copy, prepare_weight.  Everything loaded is released when the
// source is destroyed (after the model that used it).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "seatrt/model.h"
#include "seatrt/model/checkpoint.hpp"
#include "seatrt/model/model_config.hpp"

namespace seatrt::model {

struct QuantBinding {
  const seatrt_quant_api* api = nullptr;  // nullptr: the checkpoint is not quantized
  seatrt_quant_scheme* scheme = nullptr;
  std::string name;
};

class HostModelSource {
 public:
  HostModelSource(const seatrt_host_api* host, std::shared_ptr<const Checkpoint> checkpoint,
                  const ModelConfig& config, QuantBinding quant);
  ~HostModelSource();
  HostModelSource(const HostModelSource&) = delete;
  HostModelSource& operator=(const HostModelSource&) = delete;

  // Enables load_linear / load_tensor on this provider.
  void attach_kernels(const seatrt_kernel_api* kernels, seatrt_kernel_context* context,
                      int64_t max_batch_tokens);

  // The view for inspect(): create-only fields NULL.
  const seatrt_model_source* inspect_view() const { return &inspect_view_; }
  // The view for create(): everything filled (after attach_kernels).
  const seatrt_model_source* create_view() const { return &create_view_; }

  const Checkpoint& checkpoint() const { return *checkpoint_; }
  const seatrt_host_api* host() const { return host_; }
  uint64_t device_bytes() const { return device_bytes_; }

  // The same operations as the C callbacks, throwing StatusError.
  int32_t linear_state(const std::string& module) const;
  const seatrt_linear_weight* load_linear(const std::string& module);
  seatrt_tensor load_tensor(const std::string& name, int32_t dtype);

 private:
  void* upload(const void* host_data, std::size_t bytes);
  seatrt_tensor upload_tensor(const seatrt_tensor& host_tensor);
  void fill_views();
  seatrt_linear_weight load_dense_without_scheme(const std::string& module);
  const seatrt_linear_weight* store_weight(const std::string& module, const seatrt_linear_weight& device_weight);

  const seatrt_host_api* host_;
  std::shared_ptr<const Checkpoint> checkpoint_;
  std::string model_dir_;
  std::string config_json_;
  std::string generation_config_json_;
  QuantBinding quant_;
  const seatrt_kernel_api* kernels_ = nullptr;
  seatrt_kernel_context* context_ = nullptr;
  seatrt_model_source inspect_view_{};
  seatrt_model_source create_view_{};

  std::mutex mutex_;  // load_* may be called from any thread
  std::deque<seatrt_linear_weight> weights_;  // stable addresses
  std::vector<bool> prepared_;
  std::unordered_map<std::string, const seatrt_linear_weight*> weight_by_module_;
  std::vector<void*> allocations_;
  uint64_t device_bytes_ = 0;
};

}  // namespace seatrt::model
