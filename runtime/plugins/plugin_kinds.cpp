// Names of plugin kinds, for messages and listings.
#include <cstdio>
#include <string>

#include "seatrt/host/plugin_registry.hpp"

namespace seatrt::host {

const char* kind_name(seatrt_plugin_kind kind) {
  switch (kind) {
    case SEATRT_KIND_ARCHITECTURE: return "architecture";
    case SEATRT_KIND_QUANTIZATION: return "quantization scheme";
    case SEATRT_KIND_KERNELS: return "kernel provider";
    case SEATRT_KIND_TOOL_PARSER: return "tool parser";
    case SEATRT_KIND_REASONING_PARSER: return "reasoning parser";
  }
  return "unknown kind";
}

std::string kinds_to_string(uint32_t kinds) {
  static constexpr seatrt_plugin_kind kAll[] = {
      SEATRT_KIND_ARCHITECTURE, SEATRT_KIND_QUANTIZATION, SEATRT_KIND_KERNELS,
      SEATRT_KIND_TOOL_PARSER, SEATRT_KIND_REASONING_PARSER};
  std::string out;
  uint32_t known = 0;
  for (seatrt_plugin_kind kind : kAll) {
    known |= static_cast<uint32_t>(kind);
    if ((kinds & static_cast<uint32_t>(kind)) == 0) continue;
    if (!out.empty()) out += " + ";
    out += kind_name(kind);
  }
  if ((kinds & ~known) != 0) {
    if (!out.empty()) out += " + ";
    out += "unknown kind bits 0x" + [&] {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%x", kinds & ~known);
      return std::string(buf);
    }();
  }
  return out.empty() ? "nothing" : out;
}

}  // namespace seatrt::host
