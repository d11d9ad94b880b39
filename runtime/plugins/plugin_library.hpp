// Internal to seatrt_plugins: opening one library and reading its
// descriptor under the ABI rule, without initialising it.
#pragma once

#include <filesystem>

#include <boost/dll/shared_library.hpp>

#include "seatrt/host/plugin_registry.hpp"

namespace seatrt::host::detail {

struct OpenedLibrary {
  boost::dll::shared_library library;
  // Normalised copy (fields beyond the plugin's struct_size zeroed).
  seatrt_plugin descriptor{};
};

// Opens `path` (canonical) with RTLD_NOW | RTLD_LOCAL, calls its entry point
// and checks the descriptor against `host`.  Throws Error, one line naming
// the file: missing, not a shared library (dlopen's reason), no entry
// symbol, no descriptor, other major (both versions), newer minor.
OpenedLibrary open_plugin_library(const std::filesystem::path& path, AbiVersion host);

}  // namespace seatrt::host::detail
