// Finding and loading plugin libraries.
//
// A PluginRegistry searches a fixed list of directories (the seat file's
// [plugins] search_paths) for *.so files exporting seatrt_plugin_init and
// loads them with Boost.DLL (RTLD_NOW | RTLD_LOCAL).  A plugin is named
// either by its descriptor name (resolved only among the libraries in the
// search paths) or by a file path relative to a search path; a path that
// resolves outside every search path (through "..", a symlink, or an
// absolute path elsewhere) is refused.
//
// Loading checks the ABI rule of abi.h: same major, plugin minor <= host
// minor, descriptor read only as far as its struct_size.  Every failure is
// an Error whose message is one line naming the file and the problem.
//
// Lifetime: a library is loaded and initialize()d at most once per process;
// load() hands out shared_ptrs to the same LoadedPlugin while any is alive,
// and the last one to go calls finalize() and unloads the library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "seatrt/abi.h"

namespace seatrt::host {

// An ABI version (what a host implements or a plugin was built against).
struct AbiVersion {
  uint32_t major = SEATRT_ABI_MAJOR;
  uint32_t minor = SEATRT_ABI_MINOR;
};

// "kernel provider", "tool parser", ... for one kind bit.
const char* kind_name(seatrt_plugin_kind kind);
// "kernel provider + tool parser" for a set of kind bits ("nothing" if 0).
std::string kinds_to_string(uint32_t kinds);

// A library found by scan(): what its descriptor says, read without calling
// initialize(), or why it could not be read.
struct PluginCandidate {
  std::filesystem::path path;  // canonical
  std::string error;           // empty when the descriptor was read and the ABI fits
  std::string name;
  std::string version;
  std::string description;
  uint32_t kinds = 0;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
};

// A loaded, initialised plugin library.  Keeps the library mapped while it
// exists; destroy every object the plugin made before the last reference
// goes.  Thread-safe to read from any thread.
class LoadedPlugin {
 public:
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  // The plugin's descriptor normalised to this host's layout: fields the
  // plugin's struct_size does not cover read as zero/NULL (struct_size keeps
  // the plugin's own value).
  const seatrt_plugin& descriptor() const { return descriptor_; }
  const std::filesystem::path& path() const { return path_; }
  std::string name() const { return descriptor_.name ? descriptor_.name : ""; }
  std::string version() const { return descriptor_.version ? descriptor_.version : ""; }
  // "1.0": the ABI version the plugin was built against.
  std::string abi_version() const;

 private:
  friend class PluginRegistry;
  LoadedPlugin(boost::dll::shared_library library, std::filesystem::path path,
               const seatrt_plugin& descriptor);

  boost::dll::shared_library library_;
  std::filesystem::path path_;
  seatrt_plugin descriptor_{};
};

class PluginRegistry {
 public:
  // `search_paths` must exist (a missing one is an Error naming it); they are
  // canonicalised.  `host_version` is the ABI version the loader enforces
  // (tests inject other versions; the table plugins receive is unchanged).
  explicit PluginRegistry(std::vector<std::filesystem::path> search_paths,
                          AbiVersion host_version = AbiVersion{});

  const std::vector<std::filesystem::path>& search_paths() const { return search_paths_; }
  AbiVersion host_version() const { return host_version_; }

  // Every *.so directly inside the search paths (sorted by path), with its
  // descriptor or the reason it is not a usable plugin.  Does not call
  // initialize().
  std::vector<PluginCandidate> scan() const;

  // Loads the plugin `name_or_path` that must provide `kind`: a descriptor
  // name (contains no '/' and does not end in ".so"), or a path to a
  // library inside the search paths.  Returns the already loaded plugin if
  // this library is in use.  Throws Error (one line naming file/plugin) on
  // every failure listed in the header comment.
  std::shared_ptr<LoadedPlugin> load(const std::string& name_or_path, seatrt_plugin_kind kind);

  // Loads a library by path without a kind requirement (for listings).
  std::shared_ptr<LoadedPlugin> load_file(const std::filesystem::path& path);

 private:
  std::filesystem::path resolve_path(const std::string& path) const;
  std::filesystem::path resolve_name(const std::string& name, seatrt_plugin_kind kind) const;

  std::vector<std::filesystem::path> search_paths_;
  AbiVersion host_version_;
};

// The directories searched when a seat file names none: <exe>/../plugins (a
// build tree) and <exe>/../lib/seatrt/plugins (an install), those that exist.
std::vector<std::filesystem::path> default_plugin_search_paths();

// Copies a table the plugin filled into a zeroed T, only as far as the
// table's struct_size reaches (minor-version rule: trailing slots the
// plugin was not compiled with read as absent).  NULL gives a zeroed T
// (struct_size 0).
template <typename T>
T read_table(const T* table) {
  T copy{};
  if (table == nullptr) return copy;
  const std::size_t n = table->struct_size < sizeof(T) ? table->struct_size : sizeof(T);
  const auto* src = reinterpret_cast<const unsigned char*>(table);
  auto* dst = reinterpret_cast<unsigned char*>(&copy);
  for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
  return copy;
}

}  // namespace seatrt::host
