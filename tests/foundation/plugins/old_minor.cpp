// A kernel provider "built against ABI 2.0" whose descriptor and kernel
// table are SHORTER than this SDK's: what a plugin compiled with an older
// minor looks like to a newer host (the test injects a 2.x host).  The trailing fields lie beyond
// struct_size and hold poison values: a host that read them would crash or
// misroute, so a passing test proves it treats them as absent.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "seatrt/cpp/plugin.hpp"

namespace {

int g_initialize_calls = 0;
char g_detail[64];

seatrt_status* probe(seatrt_kernel_probe* out) {
  // Reports how often initialize() ran: the loader must call it once.
  std::snprintf(g_detail, sizeof g_detail, "initialize calls: %d", g_initialize_calls);
  out->score = 0;  // never chosen by "auto"
  out->detail = g_detail;
  return nullptr;
}

seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] {
    seatrt::sdk::set_host(host);
    ++g_initialize_calls;
  });
}

// Poison for slots beyond struct_size (never a valid function or table).
template <typename T>
T poison() {
  return reinterpret_cast<T>(static_cast<std::uintptr_t>(0xdeadbeef));
}

seatrt_kernel_api make_table() {
  seatrt_kernel_api t{};
  // As if compiled before the graph slots existed.
  t.struct_size = static_cast<uint32_t>(offsetof(seatrt_kernel_api, plan));
  t.device_kind = SEATRT_DEVICE_CPU;
  t.probe = probe;
  t.plan = poison<decltype(t.plan)>();
  t.plan_destroy = poison<decltype(t.plan_destroy)>();
  return t;
}
const seatrt_kernel_api kTable = make_table();

seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_KERNELS, "test-old-minor", "2.0.0",
                                          "test: ABI 2.0 plugin with a short descriptor");
  p.abi_minor = 0;
  // As if compiled before the reasoning_parser slot existed.
  p.struct_size = static_cast<uint32_t>(offsetof(seatrt_plugin, reasoning_parser));
  p.initialize = initialize;
  p.kernels = &kTable;
  p.reasoning_parser = poison<const seatrt_parser_api*>();
  return p;
}
const seatrt_plugin kDescriptor = make_descriptor();

}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
