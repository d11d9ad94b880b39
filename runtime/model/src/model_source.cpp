#include "seatrt/model/model_source.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>

#include "seatrt/model/dtype.hpp"
#include "seatrt/model/status.hpp"

namespace seatrt::model {

namespace {

HostModelSource* self(const seatrt_model_source* src) {
  return static_cast<HostModelSource*>(src->host_state);
}

// Runs `body` and turns any exception into a status made by the host.
template <typename Body>
seatrt_status* as_status(const seatrt_host_api* host, Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const StatusError& e) {
    return host->status_create(e.code(), e.what());
  } catch (const CheckpointError& e) {
    return host->status_create(SEATRT_ERR_INVALID_ARG, e.what());
  } catch (const std::bad_alloc&) {
    return host->status_create(SEATRT_ERR_OUT_OF_MEMORY, "out of memory loading the model");
  } catch (const std::exception& e) {
    return host->status_create(SEATRT_ERR_INTERNAL, e.what());
  } catch (...) {
    return host->status_create(SEATRT_ERR_INTERNAL, "unknown failure in the model source");
  }
}

void fill_checkpoint_tensor(const TensorEntry& t, seatrt_checkpoint_tensor* out) {
  if (!out) throw StatusError(SEATRT_ERR_INVALID_ARG, "seatrt_checkpoint_tensor: out is NULL");
  seatrt_checkpoint_tensor full{};
  full.struct_size = out->struct_size;
  full.dtype = t.dtype;
  full.name = t.name.c_str();
  full.data = t.data;
  full.nbytes = t.nbytes;
  full.ndim = static_cast<int32_t>(t.shape.size());
  for (int i = 0; i < full.ndim; ++i) full.shape[i] = t.shape[static_cast<std::size_t>(i)];
  // Write only as far as the plugin's struct reaches (ABI size rule).
  std::memcpy(out, &full, std::min<std::size_t>(out->struct_size, sizeof(full)));
}

std::size_t element_count(const seatrt_tensor& t) {
  std::size_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= static_cast<std::size_t>(t.shape[i]);
  return n;
}

void require_contiguous(const seatrt_tensor& t, const std::string& what) {
  int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] > 1 && t.strides[i] != expected)
      throw StatusError(SEATRT_ERR_INTERNAL, what + ": the quantization plugin returned a non-contiguous tensor");
    expected *= t.shape[i];
  }
}

void set_contiguous_strides(seatrt_tensor& t) {
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.strides[i] = stride;
    stride *= t.shape[i];
  }
}

// --- C callbacks -----------------------------------------------------------

int64_t cb_tensor_count(const seatrt_model_source* src) {
  return static_cast<int64_t>(self(src)->checkpoint().tensors().size());
}

seatrt_status* cb_tensor_at(const seatrt_model_source* src, int64_t index, seatrt_checkpoint_tensor* out) {
  return as_status(self(src)->host(), [&] {
    const auto& all = self(src)->checkpoint().tensors();
    if (index < 0 || static_cast<std::size_t>(index) >= all.size())
      throw StatusError(SEATRT_ERR_INVALID_ARG, "tensor_at: index " + std::to_string(index) + " out of range");
    fill_checkpoint_tensor(*all[static_cast<std::size_t>(index)], out);
  });
}

seatrt_status* cb_find_tensor(const seatrt_model_source* src, const char* name, seatrt_checkpoint_tensor* out) {
  return as_status(self(src)->host(), [&] {
    if (!name) throw StatusError(SEATRT_ERR_INVALID_ARG, "find_tensor: name is NULL");
    const TensorEntry* t = self(src)->checkpoint().find(name);
    if (!t) throw StatusError(SEATRT_ERR_NOT_FOUND, std::string("tensor '") + name + "' is not in the checkpoint");
    fill_checkpoint_tensor(*t, out);
  });
}

seatrt_status* cb_linear_state(const seatrt_model_source* src, const char* module, int32_t* state) {
  return as_status(self(src)->host(), [&] {
    if (!module || !state) throw StatusError(SEATRT_ERR_INVALID_ARG, "linear_state: NULL argument");
    *state = self(src)->linear_state(module);
  });
}

seatrt_status* cb_load_linear(const seatrt_model_source* src, const char* module, const seatrt_linear_weight** out) {
  return as_status(self(src)->host(), [&] {
    if (!module || !out) throw StatusError(SEATRT_ERR_INVALID_ARG, "load_linear: NULL argument");
    *out = self(src)->load_linear(module);
  });
}

seatrt_status* cb_load_tensor(const seatrt_model_source* src, const char* name, int32_t dtype, seatrt_tensor* out) {
  return as_status(self(src)->host(), [&] {
    if (!name || !out) throw StatusError(SEATRT_ERR_INVALID_ARG, "load_tensor: NULL argument");
    *out = self(src)->load_tensor(name, dtype);
  });
}

}  // namespace

HostModelSource::HostModelSource(const seatrt_host_api* host, std::shared_ptr<const Checkpoint> checkpoint,
                                 const ModelConfig& config, QuantBinding quant)
    : host_(host),
      checkpoint_(std::move(checkpoint)),
      model_dir_(std::filesystem::absolute(checkpoint_->dir()).lexically_normal().string()),
      config_json_(config.config_json),
      generation_config_json_(config.generation_config_json),
      quant_(std::move(quant)) {
  fill_views();
}

HostModelSource::~HostModelSource() {
  if (kernels_) {
    for (std::size_t i = 0; i < weights_.size(); ++i)
      if (prepared_[i] && kernels_->release_weight) kernels_->release_weight(context_, &weights_[i]);
    for (void* p : allocations_) kernels_->free_memory(context_, p);
  }
}

void HostModelSource::fill_views() {
  seatrt_model_source v{};
  v.struct_size = sizeof(seatrt_model_source);
  v.model_dir = model_dir_.c_str();
  v.config_json = config_json_.c_str();
  v.generation_config_json = generation_config_json_.c_str();
  v.quant_scheme = quant_.name.c_str();
  v.host_state = this;
  v.tensor_count = cb_tensor_count;
  v.tensor_at = cb_tensor_at;
  v.find_tensor = cb_find_tensor;
  v.linear_state = cb_linear_state;
  inspect_view_ = v;
  v.kernels = kernels_;
  v.kernel_context = context_;
  v.load_linear = cb_load_linear;
  v.load_tensor = cb_load_tensor;
  create_view_ = v;
}

void HostModelSource::attach_kernels(const seatrt_kernel_api* kernels, seatrt_kernel_context* context,
                                     int64_t max_batch_tokens) {
  kernels_ = kernels;
  context_ = context;
  fill_views();
  create_view_.max_batch_tokens = max_batch_tokens;
}

int32_t HostModelSource::linear_state(const std::string& module) const {
  if (quant_.api) {
    int32_t state = SEATRT_LINEAR_ABSENT;
    check_status(host_, quant_.api->linear_state(quant_.scheme, &inspect_view_, module.c_str(), &state), "");
    return state;
  }
  if (checkpoint_->find(module + ".weight")) return SEATRT_LINEAR_DENSE;
  if (checkpoint_->find(module + ".weight_packed"))
    throw StatusError(SEATRT_ERR_INVALID_ARG, "Linear '" + module +
                                                  "' is stored quantized (weight_packed) but config.json has no "
                                                  "quantization_config");
  return SEATRT_LINEAR_ABSENT;
}

void* HostModelSource::upload(const void* host_data, std::size_t bytes) {
  void* device = nullptr;
  check_status(host_, kernels_->alloc(context_, std::max<std::size_t>(bytes, 1), &device), "allocating weights");
  allocations_.push_back(device);
  if (bytes) {
    check_status(host_, kernels_->copy(context_, nullptr, device, kernels_->device_kind, host_data,
                                       SEATRT_DEVICE_CPU, bytes),
                 "copying weights to the device");
    // Host memory may be released right after: wait for the copy.
    if (kernels_->stream_sync) check_status(host_, kernels_->stream_sync(context_, nullptr), "copying weights");
  }
  device_bytes_ += bytes;
  return device;
}

seatrt_tensor HostModelSource::upload_tensor(const seatrt_tensor& host_tensor) {
  seatrt_tensor t = host_tensor;
  if (!host_tensor.data) return t;
  t.data = upload(host_tensor.data, element_count(host_tensor) * dtype_size(host_tensor.dtype));
  t.device = seatrt_device{kernels_->device_kind, 0};
  return t;
}

const seatrt_linear_weight* HostModelSource::load_linear(const std::string& module) {
  if (!kernels_) throw StatusError(SEATRT_ERR_UNAVAILABLE, "load_linear: no kernel provider attached");
  std::lock_guard lock(mutex_);
  if (const auto it = weight_by_module_.find(module); it != weight_by_module_.end()) return it->second;
  const int32_t state = linear_state(module);
  if (state == SEATRT_LINEAR_ABSENT)
    throw StatusError(SEATRT_ERR_NOT_FOUND, "Linear '" + module + "' is not in the checkpoint");
  const int32_t format = state == SEATRT_LINEAR_QUANTIZED ? SEATRT_WFMT_NVFP4 : SEATRT_WFMT_DENSE;

  int32_t provider_layouts[16];
  int32_t provider_count = 0;
  check_status(host_, kernels_->weight_layouts(context_, format, provider_layouts, 16, &provider_count),
               "kernel provider weight_layouts");
  int32_t quant_layouts[16] = {SEATRT_LAYOUT_DENSE_ROW_MAJOR};
  int32_t quant_count = 1;  // without a scheme the host itself writes dense row-major F32
  if (quant_.api)
    check_status(host_, quant_.api->layouts(quant_.scheme, format, quant_layouts, 16, &quant_count),
                 "quantization plugin '" + quant_.name + "' layouts");
  provider_count = std::clamp(provider_count, 0, 16);
  quant_count = std::clamp(quant_count, 0, 16);
  int32_t layout = 0;
  for (int i = 0; i < provider_count && !layout; ++i)
    for (int j = 0; j < quant_count; ++j)
      if (provider_layouts[i] == quant_layouts[j]) {
        layout = provider_layouts[i];
        break;
      }
  if (!layout)
    throw StatusError(SEATRT_ERR_UNSUPPORTED,
                      "Linear '" + module + "': the kernel provider reads no layout that quantization plugin '" +
                          quant_.name + "' can write for this format");

  seatrt_linear_weight host_weight{};
  host_weight.struct_size = sizeof(seatrt_linear_weight);
  if (!quant_.api) return store_weight(module, load_dense_without_scheme(module));
  void* token = nullptr;
  check_status(host_, quant_.api->convert_linear(quant_.scheme, &inspect_view_, module.c_str(), layout, &host_weight,
                                                  &token),
               "converting Linear '" + module + "'");
  seatrt_linear_weight device_weight = host_weight;
  try {
    require_contiguous(host_weight.data, module);
    if (host_weight.scales.data) require_contiguous(host_weight.scales, module);
    device_weight.data = upload_tensor(host_weight.data);
    device_weight.scales = upload_tensor(host_weight.scales);
    device_weight.provider_data = nullptr;
  } catch (...) {
    quant_.api->release_host(quant_.scheme, token);
    throw;
  }
  quant_.api->release_host(quant_.scheme, token);
  return store_weight(module, device_weight);
}

seatrt_linear_weight HostModelSource::load_dense_without_scheme(const std::string& module) {
  const TensorEntry* t = checkpoint_->find(module + ".weight");
  if (!t || t->shape.size() != 2)
    throw StatusError(SEATRT_ERR_INVALID_ARG, "Linear '" + module + "': weight must be a 2-D tensor");
  seatrt_linear_weight w{};
  w.struct_size = sizeof(seatrt_linear_weight);
  w.format = SEATRT_WFMT_DENSE;
  w.layout = SEATRT_LAYOUT_DENSE_ROW_MAJOR;
  w.out_features = t->shape[0];
  w.in_features = t->shape[1];
  w.global_scale = 1.0f;
  const std::size_t count = static_cast<std::size_t>(t->shape[0] * t->shape[1]);
  std::vector<float> values(count);
  try {
    convert_to_f32(t->dtype, t->data, count, values.data());
  } catch (const std::invalid_argument& e) {
    throw StatusError(SEATRT_ERR_UNSUPPORTED, "Linear '" + module + "': " + e.what());
  }
  w.data.struct_size = sizeof(seatrt_tensor);
  w.data.dtype = SEATRT_DTYPE_F32;
  w.data.ndim = 2;
  w.data.shape[0] = w.out_features;
  w.data.shape[1] = w.in_features;
  set_contiguous_strides(w.data);
  w.data.device = seatrt_device{kernels_->device_kind, 0};
  w.data.data = upload(values.data(), count * sizeof(float));
  w.scales.struct_size = sizeof(seatrt_tensor);
  return w;
}

const seatrt_linear_weight* HostModelSource::store_weight(const std::string& module,
                                                          const seatrt_linear_weight& device_weight) {
  weights_.push_back(device_weight);
  prepared_.push_back(false);
  seatrt_linear_weight* stored = &weights_.back();
  if (kernels_->prepare_weight) {
    check_status(host_, kernels_->prepare_weight(context_, stored), "preparing Linear '" + module + "'");
    prepared_.back() = true;
  }
  weight_by_module_[module] = stored;
  return stored;
}

seatrt_tensor HostModelSource::load_tensor(const std::string& name, int32_t dtype) {
  if (!kernels_) throw StatusError(SEATRT_ERR_UNAVAILABLE, "load_tensor: no kernel provider attached");
  std::lock_guard lock(mutex_);
  const TensorEntry* t = checkpoint_->find(name);
  if (!t) throw StatusError(SEATRT_ERR_NOT_FOUND, "tensor '" + name + "' is not in the checkpoint");
  seatrt_tensor out{};
  out.struct_size = sizeof(seatrt_tensor);
  out.dtype = dtype;
  out.ndim = static_cast<int32_t>(t->shape.size());
  for (int i = 0; i < out.ndim; ++i) out.shape[i] = t->shape[static_cast<std::size_t>(i)];
  set_contiguous_strides(out);
  out.device = seatrt_device{kernels_->device_kind, 0};
  const std::size_t count = element_count(out);
  if (dtype == t->dtype) {
    out.data = upload(t->data, t->nbytes);
  } else if (dtype == SEATRT_DTYPE_F32) {
    std::vector<float> converted(count);
    try {
      convert_to_f32(t->dtype, t->data, count, converted.data());
    } catch (const std::invalid_argument& e) {
      throw StatusError(SEATRT_ERR_UNSUPPORTED, "tensor '" + name + "': " + e.what());
    }
    out.data = upload(converted.data(), count * sizeof(float));
  } else if (dtype == SEATRT_DTYPE_BF16 && t->dtype != SEATRT_DTYPE_INVALID) {
    std::vector<float> wide(count);
    try {
      convert_to_f32(t->dtype, t->data, count, wide.data());
    } catch (const std::invalid_argument& e) {
      throw StatusError(SEATRT_ERR_UNSUPPORTED, "tensor '" + name + "': " + e.what());
    }
    std::vector<uint16_t> narrow(count);
    for (std::size_t i = 0; i < count; ++i) narrow[i] = f32_to_bf16(wide[i]);
    out.data = upload(narrow.data(), count * 2);
  } else {
    throw StatusError(SEATRT_ERR_UNSUPPORTED, "tensor '" + name + "': no conversion from " +
                                                  std::string(dtype_name(t->dtype)) + " to " + dtype_name(dtype));
  }
  return out;
}

}  // namespace seatrt::model
