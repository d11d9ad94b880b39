// A kernel provider ("test-kernels-no-alloc") that fills only create and
// destroy: the device-management slots (alloc, copy, ...) are the
// provider's own (a fallback cannot lend them), so the host must refuse the
// seat when it loads, naming them, not crash in serve.
#include "../../support/test_plugin.hpp"
#include "seatrt/kernels.h"

namespace {

seatrt_status* create(const char*, int32_t, seatrt_kernel_context** out) {
  *out = nullptr;
  return nullptr;
}
void destroy(seatrt_kernel_context*) {}

seatrt_kernel_api make_table() {
  seatrt_kernel_api t{};
  t.struct_size = sizeof t;
  t.device_kind = SEATRT_DEVICE_CPU;
  t.create = create;
  t.destroy = destroy;
  return t;
}
const seatrt_kernel_api kTable = make_table();

const seatrt_plugin kDescriptor = seatrt::test::kernels_plugin(
    "test-kernels-no-alloc", "test: a kernel table with no device-management slots", &kTable);

}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
