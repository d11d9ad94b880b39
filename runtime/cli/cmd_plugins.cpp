// `seatrt plugins [--path DIR]...`: every plugin library found, with what it
// provides and, for kernel providers, its probe score on this machine.
#include <cstdio>
#include <filesystem>

#include "command.hpp"
#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/seat_plugins.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::cli {
namespace {

using namespace seatrt::host;

int list_plugins(const std::vector<std::filesystem::path>& paths) {
  PluginRegistry registry(paths);
  std::printf("plugin search paths:");
  for (const auto& p : registry.search_paths()) std::printf(" %s", p.string().c_str());
  std::printf("\n");
  const auto candidates = registry.scan();
  if (candidates.empty()) std::printf("no plugin libraries found\n");
  for (const auto& c : candidates) {
    std::printf("%s\n", c.path.string().c_str());
    if (!c.error.empty()) {
      std::printf("  error: %s\n", c.error.c_str());
      continue;
    }
    std::printf("  name: %s  version: %s  ABI: %u.%u\n  kinds: %s\n", c.name.c_str(),
                c.version.c_str(), c.abi_major, c.abi_minor, kinds_to_string(c.kinds).c_str());
    if (!c.description.empty()) std::printf("  description: %s\n", c.description.c_str());
    if ((c.kinds & SEATRT_KIND_KERNELS) == 0) continue;
    try {
      const auto plugin = registry.load_file(c.path);
      const ProviderProbe probe = probe_provider(*plugin);
      std::printf("  probe: score %u (%s)\n", probe.score, probe.detail.c_str());
    } catch (const Error& e) {
      std::printf("  probe: not run: %s\n", e.what());
    }
  }
  return 0;
}

int run_plugins(std::span<const std::string> args) {
  std::vector<std::filesystem::path> paths;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--path" && i + 1 < args.size()) paths.emplace_back(args[++i]);
    else if (args[i].rfind("--path=", 0) == 0) paths.emplace_back(args[i].substr(7));
    else {
      std::fprintf(stderr, "seatrt plugins: unexpected argument '%s'\nusage: seatrt plugins "
                           "[--path DIR]...\n", args[i].c_str());
      return 2;
    }
  }
  try {
    if (paths.empty()) paths = default_plugin_search_paths();
    if (paths.empty()) throw Error(SEATRT_ERR_NOT_FOUND, "no default plugin directory exists; "
                                                         "give one with --path DIR");
    return list_plugins(paths);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seatrt plugins: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("plugins", "plugins [--path DIR]...",
                   "list the plugins found, what they provide and their probe scores",
                   seatrt::cli::run_plugins)
