// A loaded plugin library: keeps it mapped, calls finalize() before unload.
#include <string>

#include "seatrt/host/logging.hpp"
#include "seatrt/host/plugin_registry.hpp"

namespace seatrt::host {

LoadedPlugin::LoadedPlugin(boost::dll::shared_library library, std::filesystem::path path,
                           const seatrt_plugin& descriptor)
    : library_(std::move(library)), path_(std::move(path)), descriptor_(descriptor) {}

LoadedPlugin::~LoadedPlugin() {
  // finalize() is the plugin's code: it may misbehave, the host must not.
  try {
    if (descriptor_.finalize) descriptor_.finalize();
  } catch (...) {
    logger()->error("plugin '{}' ({}) threw from finalize(); ignored", name(), path_.string());
  }
  // library_ unloads as the member is destroyed, after finalize().
}

std::string LoadedPlugin::abi_version() const {
  return std::to_string(descriptor_.abi_major) + "." + std::to_string(descriptor_.abi_minor);
}

}  // namespace seatrt::host
