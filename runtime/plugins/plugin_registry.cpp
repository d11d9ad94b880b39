// Resolving plugin names and paths inside the search paths, and loading
// each library at most once per process.
#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include <boost/dll/runtime_symbol_info.hpp>

#include "plugin_library.hpp"
#include "seatrt/host/edit_distance.hpp"
#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/status.hpp"

namespace fs = std::filesystem;

namespace seatrt::host {
namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// Libraries in use, by canonical path.  Process-wide so that two registries
// never initialise one library twice.
std::mutex g_loaded_mutex;
std::map<std::string, std::weak_ptr<LoadedPlugin>>& loaded_libraries() {
  static std::map<std::string, std::weak_ptr<LoadedPlugin>> loaded;
  return loaded;
}

// Why a library threw while being opened, by canonical path: such a
// library stays half-loaded in the process (its initialisers will not run
// again), so a later open must report the first reason, not a new one.
std::mutex g_open_failures_mutex;
std::map<std::string, std::string> g_open_failures;

std::string known_open_failure(const fs::path& path) {
  std::lock_guard lock(g_open_failures_mutex);
  const auto it = g_open_failures.find(path.string());
  return it == g_open_failures.end() ? std::string() : it->second;
}

void remember_open_failure(const fs::path& path, const std::string& why) {
  std::lock_guard lock(g_open_failures_mutex);
  g_open_failures.emplace(path.string(), why);
}

bool is_inside(const fs::path& file, const fs::path& dir) {
  auto f = file.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++f) {
    if (f == file.end() || *f != *d) return false;
  }
  return f != file.end();
}

std::string join_paths(const std::vector<fs::path>& paths) {
  std::string out;
  for (const auto& p : paths) out += (out.empty() ? "" : ", ") + p.string();
  return out.empty() ? "(none)" : out;
}

// "a kernel provider", "an architecture".
std::string a_kind(seatrt_plugin_kind kind) {
  const std::string name = kind_name(kind);
  return (name[0] == 'a' ? "an " : "a ") + name;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos ||
         (s.size() > 3 && s.compare(s.size() - 3, 3, ".so") == 0);
}

}  // namespace

PluginRegistry::PluginRegistry(std::vector<fs::path> search_paths, AbiVersion host_version)
    : host_version_(host_version) {
  for (const auto& dir : search_paths) {
    std::error_code ec;
    const fs::path canonical = fs::canonical(dir, ec);
    if (ec || !fs::is_directory(canonical))
      throw Error(SEATRT_ERR_NOT_FOUND,
                  "plugin search path " + quoted(dir) + " does not exist or is not a directory");
    if (std::find(search_paths_.begin(), search_paths_.end(), canonical) == search_paths_.end())
      search_paths_.push_back(canonical);
  }
}

std::vector<PluginCandidate> PluginRegistry::scan() const {
  std::vector<PluginCandidate> found;
  for (const auto& dir : search_paths_) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".so") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      PluginCandidate c;
      std::error_code canonical_error;
      c.path = fs::canonical(file, canonical_error);
      if (canonical_error) {
        c.path = file;
        c.error = "cannot resolve " + quoted(file) + ": " + canonical_error.message();
      } else if (!is_inside(c.path, dir)) {
        c.error = quoted(file) + " resolves to " + quoted(c.path) +
                  ", outside the plugin search paths: refused";
      } else if (const std::string known = known_open_failure(c.path); !known.empty()) {
        c.error = known;
      } else {
        try {
          auto opened = detail::open_plugin_library(c.path, host_version_);
          const seatrt_plugin& d = opened.descriptor;
          c.name = d.name;
          c.version = d.version;
          c.description = d.description;
          c.kinds = d.kinds;
          c.abi_major = d.abi_major;
          c.abi_minor = d.abi_minor;
        } catch (const Error& e) {
          c.error = e.what();
        } catch (const std::exception& e) {  // e.g. a static initialiser of the library threw
          c.error = "cannot open " + quoted(c.path) + ": " + e.what();
          remember_open_failure(c.path, c.error);
        } catch (...) {
          c.error = "cannot open " + quoted(c.path) + ": it threw a non-standard exception while loading";
          remember_open_failure(c.path, c.error);
        }
      }
      found.push_back(std::move(c));
    }
  }
  return found;
}

fs::path PluginRegistry::resolve_path(const std::string& path) const {
  const fs::path asked(path);
  std::vector<fs::path> tries;
  if (asked.is_absolute()) tries.push_back(asked);
  else
    for (const auto& dir : search_paths_) tries.push_back(dir / asked);
  for (const auto& candidate : tries) {
    std::error_code ec;
    if (!fs::exists(candidate, ec)) continue;
    const fs::path canonical = fs::canonical(candidate, ec);
    if (ec) continue;
    for (const auto& dir : search_paths_)
      if (is_inside(canonical, dir)) return canonical;
    throw Error(SEATRT_ERR_INVALID_ARG,
                "plugin file " + quoted(asked) + " resolves to " + quoted(canonical) +
                    ", outside the plugin search paths (" + join_paths(search_paths_) +
                    "): refused");
  }
  throw Error(SEATRT_ERR_NOT_FOUND, "plugin file " + quoted(asked) +
                                        " does not exist in the plugin search paths (" +
                                        join_paths(search_paths_) + ")");
}

fs::path PluginRegistry::resolve_name(const std::string& name, seatrt_plugin_kind kind) const {
  const auto candidates = scan();
  const PluginCandidate* other_kind = nullptr;
  const PluginCandidate* match = nullptr;
  std::vector<std::string> names_of_kind;
  std::string unreadable;  // libraries that could not be read, with why
  for (const auto& c : candidates) {
    if (!c.error.empty()) {
      unreadable += (unreadable.empty() ? "" : "; ") + c.error;
      continue;
    }
    if (c.kinds & static_cast<uint32_t>(kind)) names_of_kind.push_back(c.name);
    if (c.name != name) continue;
    if (!(c.kinds & static_cast<uint32_t>(kind))) {
      if (!other_kind) other_kind = &c;
      continue;
    }
    // A name is unique per kind (abi.h): two libraries claiming it make the
    // choice a matter of search order, so neither is taken.
    if (match && match->path != c.path)
      throw Error(SEATRT_ERR_INVALID_ARG, "two " + std::string(kind_name(kind)) + " plugins are named '" + name +
                                              "': " + quoted(match->path) + " and " + quoted(c.path) +
                                              "; remove one, or name the file in the seat");
    match = &c;
  }
  if (match) return match->path;
  // What could not be read may be the plugin asked for (a missing
  // dependency, a throwing initialiser): say so.
  const std::string also = unreadable.empty() ? "" : " (libraries that could not be read: " + unreadable + ")";
  // Names are unique per kind, not globally (the architecture and the
  // parsers for Gemma-4 are both "gemma4"): say that none of this kind was
  // found before naming the namesake of another kind.
  if (other_kind)
    throw Error(SEATRT_ERR_INVALID_ARG, "no " + std::string(kind_name(kind)) + " plugin named '" + name +
                                            "' in the plugin search paths (" + join_paths(search_paths_) +
                                            "); plugin '" + name + "' (" + other_kind->path.string() +
                                            ") provides " + kinds_to_string(other_kind->kinds) +
                                            ", not " + a_kind(kind) + also);
  std::string message = "no " + std::string(kind_name(kind)) + " plugin named '" + name +
                        "' in the plugin search paths (" + join_paths(search_paths_) + ")";
  const std::string suggestion = closest_match(name, names_of_kind);
  if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
  else if (!names_of_kind.empty()) {
    std::string all;
    for (const auto& n : names_of_kind) all += (all.empty() ? "" : ", ") + n;
    message += "; available: " + all;
  }
  throw Error(SEATRT_ERR_NOT_FOUND, message + also);
}

std::shared_ptr<LoadedPlugin> PluginRegistry::load_file(const fs::path& path) {
  const fs::path canonical = resolve_path(path.string());
  std::lock_guard lock(g_loaded_mutex);
  auto& loaded = loaded_libraries();
  if (auto it = loaded.find(canonical.string()); it != loaded.end()) {
    if (auto alive = it->second.lock()) return alive;
  }
  if (const std::string known = known_open_failure(canonical); !known.empty()) throw Error(SEATRT_ERR_INVALID_ARG, known);
  detail::OpenedLibrary opened;
  try {
    opened = detail::open_plugin_library(canonical, host_version_);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // a static initialiser threw
    remember_open_failure(canonical, "cannot open " + quoted(canonical) + ": " + e.what());
    throw Error(SEATRT_ERR_INVALID_ARG, known_open_failure(canonical));
  } catch (...) {
    remember_open_failure(canonical, "cannot open " + quoted(canonical) + ": it threw a non-standard exception while loading");
    throw Error(SEATRT_ERR_INVALID_ARG, known_open_failure(canonical));
  }
  const seatrt_plugin& d = opened.descriptor;
  const std::string who = "plugin '" + std::string(d.name) + "' (" + canonical.string() + ")";
  if (d.initialize == nullptr)
    throw Error(SEATRT_ERR_INVALID_ARG, who + " has no initialize()");
  seatrt_status* status = nullptr;
  try {
    status = d.initialize(host_api());
  } catch (const std::exception& e) {
    throw Error(SEATRT_ERR_INTERNAL, who + " failed to initialize: it threw an exception (" +
                                         e.what() + "), which the ABI forbids");
  } catch (...) {
    throw Error(SEATRT_ERR_INTERNAL,
                who + " failed to initialize: it threw an exception, which the ABI forbids");
  }
  if (status != nullptr) {
    const seatrt_status_code code = host_api()->status_code(status);  // before it is freed
    throw Error(code, who + " failed to initialize: " + take_status_message(status));
  }
  std::shared_ptr<LoadedPlugin> plugin(
      new LoadedPlugin(std::move(opened.library), canonical, opened.descriptor));
  loaded[canonical.string()] = plugin;
  return plugin;
}

std::shared_ptr<LoadedPlugin> PluginRegistry::load(const std::string& name_or_path,
                                                   seatrt_plugin_kind kind) {
  if (name_or_path.empty())
    throw Error(SEATRT_ERR_INVALID_ARG, std::string("no ") + kind_name(kind) + " plugin named");
  const fs::path file =
      looks_like_path(name_or_path) ? fs::path(name_or_path) : resolve_name(name_or_path, kind);
  auto plugin = load_file(file);
  const seatrt_plugin& d = plugin->descriptor();
  const std::string who = "plugin '" + plugin->name() + "' (" + plugin->path().string() + ")";
  if ((d.kinds & static_cast<uint32_t>(kind)) == 0)
    throw Error(SEATRT_ERR_INVALID_ARG,
                who + " provides " + kinds_to_string(d.kinds) + ", not " + a_kind(kind));
  const void* table = nullptr;
  switch (kind) {
    case SEATRT_KIND_ARCHITECTURE: table = d.architecture; break;
    case SEATRT_KIND_QUANTIZATION: table = d.quantization; break;
    case SEATRT_KIND_KERNELS: table = d.kernels; break;
    case SEATRT_KIND_TOOL_PARSER: table = d.tool_parser; break;
    case SEATRT_KIND_REASONING_PARSER: table = d.reasoning_parser; break;
  }
  if (table == nullptr)
    throw Error(SEATRT_ERR_INVALID_ARG,
                who + " declares " + a_kind(kind) + " but gives no table for it");
  return plugin;
}

std::vector<fs::path> default_plugin_search_paths() {
  std::vector<fs::path> paths;
  std::error_code ec;
  const fs::path exe_dir = boost::dll::program_location(ec).parent_path();
  if (ec) return paths;
  for (const fs::path& p : {exe_dir / ".." / "plugins", exe_dir / ".." / "lib" / "seatrt" / "plugins"})
    if (fs::is_directory(p, ec)) paths.push_back(fs::canonical(p, ec));
  return paths;
}

}  // namespace seatrt::host
