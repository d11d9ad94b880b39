// Opening a plugin library and checking its descriptor (see abi.h for the
// versioning rule this enforces).
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "plugin_library.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::host::detail {
namespace {

std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

std::string version_string(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// The first four uint32 fields of the descriptor are frozen for every major
// (abi.h), so they can be read before the version is known to match.
constexpr std::size_t kFrozenPrefix = 4 * sizeof(uint32_t);
// The smallest descriptor this major accepts: everything up to the tables.
constexpr std::size_t kMinimumDescriptor = offsetof(seatrt_plugin, architecture);

}  // namespace

OpenedLibrary open_plugin_library(const std::filesystem::path& path, AbiVersion host) {
  std::error_code exists_error;
  if (!std::filesystem::exists(path, exists_error))
    throw Error(SEATRT_ERR_NOT_FOUND, "plugin file " + quoted(path) + " does not exist");

  OpenedLibrary opened;
  std::error_code load_error;
  dlerror();  // clear any stale message so the one we read is this load's
  opened.library.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local,
                      load_error);
  if (load_error || !opened.library.is_loaded()) {
    const char* reason = dlerror();
    throw Error(SEATRT_ERR_INVALID_ARG,
                "plugin file " + quoted(path) + " is not a loadable shared library: " +
                    (reason ? std::string(reason) : load_error.message()));
  }
  if (!opened.library.has(SEATRT_PLUGIN_ENTRY_SYMBOL))
    throw Error(SEATRT_ERR_INVALID_ARG, "plugin file " + quoted(path) +
                                            " is not a seatrt plugin: it lacks the entry symbol " +
                                            SEATRT_PLUGIN_ENTRY_SYMBOL);

  // The entry symbol must be a function: calling a data object of that name
  // would crash the host.
  if (void* address = dlsym(opened.library.native(), SEATRT_PLUGIN_ENTRY_SYMBOL)) {
    Dl_info info{};
    void* extra = nullptr;  // dladdr1 writes a const ElfW(Sym)* here
    const int found = dladdr1(address, &info, &extra, RTLD_DL_SYMENT);
    const auto* symbol = static_cast<const ElfW(Sym)*>(extra);
    if (found && symbol &&
        ELF64_ST_TYPE(symbol->st_info) != STT_FUNC && ELF64_ST_TYPE(symbol->st_info) != STT_GNU_IFUNC)
      throw Error(SEATRT_ERR_INVALID_ARG, "plugin file " + quoted(path) + ": its " + SEATRT_PLUGIN_ENTRY_SYMBOL +
                                              " is not a function");
  }
  auto* entry = opened.library.get<const seatrt_plugin*(const seatrt_host_api*)>(
      SEATRT_PLUGIN_ENTRY_SYMBOL);
  const seatrt_plugin* raw = nullptr;
  try {
    raw = entry(host_api());
  } catch (...) {
    throw Error(SEATRT_ERR_INTERNAL, "plugin file " + quoted(path) + ": " +
                                         SEATRT_PLUGIN_ENTRY_SYMBOL +
                                         "() threw an exception (forbidden across the ABI)");
  }
  if (raw == nullptr)
    throw Error(SEATRT_ERR_INVALID_ARG, "plugin file " + quoted(path) + ": " +
                                            SEATRT_PLUGIN_ENTRY_SYMBOL +
                                            "() returned no descriptor");
  if (raw->struct_size < kFrozenPrefix)
    throw Error(SEATRT_ERR_INVALID_ARG, "plugin file " + quoted(path) +
                                            ": descriptor struct_size " +
                                            std::to_string(raw->struct_size) + " is too small");

  const std::string plugin_version = version_string(raw->abi_major, raw->abi_minor);
  const std::string host_version = version_string(host.major, host.minor);
  if (raw->abi_major != host.major)
    throw Error(SEATRT_ERR_UNSUPPORTED,
                "plugin file " + quoted(path) + " was built for seatrt ABI " + plugin_version +
                    " but this host implements ABI " + host_version +
                    " (the major version must match: rebuild the plugin against this SDK)");
  if (raw->abi_minor > host.minor)
    throw Error(SEATRT_ERR_UNSUPPORTED,
                "plugin file " + quoted(path) + " was built for seatrt ABI " + plugin_version +
                    ", newer than this host's ABI " + host_version +
                    " (upgrade seatrt, or build the plugin against an older SDK)");
  if (raw->struct_size < kMinimumDescriptor)
    throw Error(SEATRT_ERR_INVALID_ARG,
                "plugin file " + quoted(path) + ": descriptor struct_size " +
                    std::to_string(raw->struct_size) + " is smaller than the minimum " +
                    std::to_string(kMinimumDescriptor) + " bytes");

  opened.descriptor = read_table(raw);
  if (opened.descriptor.name == nullptr || opened.descriptor.name[0] == '\0')
    throw Error(SEATRT_ERR_INVALID_ARG, "plugin file " + quoted(path) + " has no name");
  // A seat names plugins by name: one with '/', a ".so" ending or bytes
  // that are not printable ASCII could never be named (or printed) safely.
  const std::string name = opened.descriptor.name;
  const bool printable = std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f; });
  if (!printable || name.find('/') != std::string::npos || name.ends_with(".so"))
    throw Error(SEATRT_ERR_INVALID_ARG, "plugin file " + quoted(path) +
                                            ": its name must be printable ASCII without spaces or '/' and not end "
                                            "in .so (a seat names plugins by it)");
  if (opened.descriptor.version == nullptr) opened.descriptor.version = "";
  if (opened.descriptor.description == nullptr) opened.descriptor.description = "";
  return opened;
}

}  // namespace seatrt::host::detail
