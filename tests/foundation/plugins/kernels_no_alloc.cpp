// A kernel provider ("test-kernels-no-alloc") that fills only create and
// destroy: the device-management slots (alloc, copy, ...) are the
// provider's own (a fallback cannot lend them), so the host must refuse the
// seat when it loads, naming them, not crash in serve.
#include "seatrt/cpp/plugin.hpp"
#include "seatrt/kernels.h"

namespace {

seatrt_status* create(const char*, int32_t, seatrt_kernel_context** out) {
  *out = nullptr;
  return nullptr;
}
void destroy(seatrt_kernel_context*) {}

seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
}

seatrt_kernel_api make_table() {
  seatrt_kernel_api t{};
  t.struct_size = sizeof t;
  t.device_kind = SEATRT_DEVICE_CPU;
  t.create = create;
  t.destroy = destroy;
  return t;
}
const seatrt_kernel_api kTable = make_table();

seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_KERNELS, "test-kernels-no-alloc", "0.1.0",
                                          "test: a kernel table with no device-management slots");
  p.initialize = initialize;
  p.kernels = &kTable;
  return p;
}
const seatrt_plugin kDescriptor = make_descriptor();

}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
