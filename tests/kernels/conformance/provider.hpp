// A kernel provider loaded from its plugin file (dlopen), with a context, a
// stream and device tensors made through the provider's own alloc/copy
// slots: the conformance tool's only way to reach a provider.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/seatrt.h"
#include "test_support.hpp"

namespace seatrt::conformance {

// A status returned by a provider: the case fails with this message.
struct OpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The provider does not support the operation (supports() answers 0, or it
// reads no weight layout the tool can make): the case is skipped.
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Provider;

// Memory on a provider's device holding one tensor; freed on destruction.
class DeviceTensor {
 public:
  DeviceTensor() = default;
  DeviceTensor(Provider& p, const test::Tensor& host);  // allocates and uploads
  ~DeviceTensor();
  DeviceTensor(DeviceTensor&& other) noexcept;
  DeviceTensor& operator=(DeviceTensor&& other) noexcept;
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  seatrt_tensor* get() { return &desc_; }
  // Copies the device bytes back into `host` (same shape and dtype).
  void download(test::Tensor& host);
  // Overwrites the device bytes with `host` (same shape and dtype).
  void upload(const test::Tensor& host);

 private:
  Provider* provider_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  seatrt_tensor desc_{};
};

class Provider {
 public:
  Provider(const std::string& path, const std::string& options, int32_t device_index);
  ~Provider();
  Provider(const Provider&) = delete;
  Provider& operator=(const Provider&) = delete;

  const seatrt_kernel_api& api() const { return *api_; }
  seatrt_kernel_context* ctx() const { return ctx_; }
  seatrt_stream stream() const { return stream_; }
  seatrt_device device() const { return {api_->device_kind, device_index_}; }
  const std::string& label() const { return label_; }

  // Throws OpError with the status message (freeing it) when non-NULL.
  void check(seatrt_status* status, const std::string& what) const;
  void sync() const { check(api_->stream_sync(ctx_, stream_), "stream_sync"); }
  // True when the provider reads `layout` for `format`.
  bool reads_layout(int32_t format, int32_t layout) const;
  // The provider's supports() for `op`.
  bool supports(const seatrt_op& op) const { return api_->supports(ctx_, &op) != 0; }
  // Whether the provider plans graphs: its table reaches the plan slots
  // (SEATRT_HAS_FIELD) and plan, plan_launch and plan_destroy are set.
  bool plans() const {
    return SEATRT_HAS_FIELD(api_, seatrt_kernel_api, plan_destroy) && api_->plan && api_->plan_launch && api_->plan_destroy;
  }
  bool describes_plans() const { return SEATRT_HAS_FIELD(api_, seatrt_kernel_api, plan_describe) && api_->plan_describe; }

 private:
  void* library_ = nullptr;
  const seatrt_kernel_api* api_ = nullptr;
  seatrt_kernel_context* ctx_ = nullptr;
  seatrt_stream stream_ = nullptr;
  int32_t device_index_ = 0;
  std::string label_;
};

// Runs one operation on a provider through run() and waits for it.  Throws
// Skip when the provider's supports() answers 0 for it (a SKIP never counts
// as passed), OpError when run() fails.
void run_op(Provider& p, const seatrt_op& op);

template <seatrt_op_kind K>
void run_op(Provider& p, const typename sdk::OpArgs<K>::type& args) {
  typename sdk::OpArgs<K>::type copy = args;
  copy.struct_size = sizeof(copy);
  run_op(p, sdk::make_op<K>(copy));
}

}  // namespace seatrt::conformance
