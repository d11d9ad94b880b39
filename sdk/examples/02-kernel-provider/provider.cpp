// Example 2: a kernel provider.  The table names the slots this provider
// fills.  Operations are asked one at a time through supports(): every op
// it declines (embedding, linear, attention, a BF16 rms_norm, ...) the host
// routes to the seat's fallback provider ([kernels] fallback, "cpu" by
// default).  plan is NULL: the host runs a step's graph node by node.
#include "example_kernels.hpp"

namespace {

seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
}

seatrt_kernel_api make_table() {
  using namespace example_kernels;
  seatrt_kernel_api t{};
  t.struct_size = sizeof(seatrt_kernel_api);  // what this build knows; the host reads no further
  t.device_kind = SEATRT_DEVICE_CPU;
  t.probe = probe;
  t.create = create;
  t.destroy = destroy;
  t.alloc = alloc;
  t.free_memory = free_memory;
  t.memory_info = memory_info;
  t.copy = copy;
  t.memset_zero = memset_zero;
  t.stream_create = stream_create;
  t.stream_destroy = stream_destroy;
  t.stream_sync = stream_sync;
  t.weight_layouts = weight_layouts;
  t.supports = supports;
  t.run = run;
  return t;
}

const seatrt_kernel_api kTable = make_table();

seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(
      SEATRT_KIND_KERNELS, "example-cpu", "0.1.0",
      "SDK example 2: CPU provider with elementwise and rms_norm (F32); the rest falls back");
  p.initialize = initialize;
  p.kernels = &kTable;
  return p;
}

const seatrt_plugin kDescriptor = make_descriptor();

}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
