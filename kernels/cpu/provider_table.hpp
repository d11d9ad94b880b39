// The CPU provider's kernel table (seatrt_kernel_api) and its plugin
// descriptor.  In the static library so tests can use the table without
// dlopen; plugin.cpp only exports the descriptor.
#pragma once

#include <cstdint>
#include <string>

#include "seatrt/seatrt.h"

namespace seatrt::cpu {

const seatrt_kernel_api& kernel_api();
const seatrt_plugin& plugin_descriptor();

// Thread count from the [kernels.options] TOML text ("" = defaults):
// `threads` (1..1024), default std::thread::hardware_concurrency().
// Unknown keys and bad values throw INVALID_ARG naming them.
int32_t parse_thread_option(const char* options_toml);

// The probe's one-line description of this machine.
const std::string& machine_detail();

}  // namespace seatrt::cpu
