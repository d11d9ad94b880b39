// What every small test plugin repeats: an initialize() that keeps the
// host table, and a descriptor of one kind around a table.  Header-only, for
// tests/*/plugins/*.cpp (each is its own shared library).
#pragma once

#include "seatrt/cpp/plugin.hpp"

namespace seatrt::test {

inline seatrt_status* keep_host(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
}

inline seatrt_plugin parser_plugin(const char* name, const char* description, const seatrt_parser_api* table) {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_TOOL_PARSER, name, "0.1.0", description);
  p.initialize = keep_host;
  p.tool_parser = table;
  return p;
}

inline seatrt_plugin kernels_plugin(const char* name, const char* description, const seatrt_kernel_api* table) {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_KERNELS, name, "0.1.0", description);
  p.initialize = keep_host;
  p.kernels = table;
  return p;
}

}  // namespace seatrt::test
