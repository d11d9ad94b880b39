// A kernel provider loaded from its plugin file (dlopen), with a context, a
// stream and device tensors made through the provider's own alloc/copy
// slots: the conformance tool's only way to reach a provider.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "seatrt/seatrt.h"
#include "test_support.hpp"

namespace seatrt::conformance {

// A status returned by a provider: the case fails with this message.
struct OpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The provider has no slot for the operation (or cannot take its inputs in
// a layout the tool can make): the case is skipped.
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

 private:
  void* library_ = nullptr;
  const seatrt_kernel_api* api_ = nullptr;
  seatrt_kernel_context* ctx_ = nullptr;
  seatrt_stream stream_ = nullptr;
  int32_t device_index_ = 0;
  std::string label_;
};

template <typename Args>
using OpSlot = seatrt_status* (*const seatrt_kernel_api::*)(seatrt_kernel_context*, seatrt_stream, const Args*);

// Whether the provider's table reaches `slot`: the table of a provider built
// for an older ABI minor ends earlier (its struct_size) and must not be read
// past its end.  SEATRT_HAS_FIELD for a member pointer.
template <typename Fn>
bool table_has(const Provider& p, Fn seatrt_kernel_api::*slot) {
  static const seatrt_kernel_api layout{};
  const auto* base = reinterpret_cast<const char*>(&layout);
  const auto end = static_cast<size_t>(reinterpret_cast<const char*>(&(layout.*slot)) - base) + sizeof(Fn);
  return p.api().struct_size >= end;
}

// Throws Skip ("not provided") when the provider's table lacks the slot or
// the slot is NULL.  Cases with costly inputs call it before making them.
template <typename Args>
void need_op(const Provider& p, OpSlot<Args> slot, const char* name) {
  if (!table_has(p, slot)) {
    throw Skip(std::string("not provided: the table (") + std::to_string(p.api().struct_size) +
               " bytes, an older ABI minor) ends before slot " + name);
  }
  if (!(p.api().*slot)) throw Skip(std::string("not provided: slot ") + name + " is NULL");
}

// Calls a provider's op slot, or throws Skip when it is not provided.
template <typename Args>
void call_op(Provider& p, OpSlot<Args> slot, const Args& args, const char* name) {
  need_op(p, slot, name);
  p.check((p.api().*slot)(p.ctx(), p.stream(), &args), name);
  p.sync();
}

}  // namespace seatrt::conformance
