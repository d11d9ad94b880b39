// Resolving a seat's plugins (see seat_plugins.hpp).
#include "seatrt/host/seat_plugins.hpp"

#include "seatrt/host/status.hpp"
#include "seatrt/kernels.h"

namespace seatrt::host {

ProviderProbe probe_provider(const LoadedPlugin& plugin) {
  ProviderProbe p;
  p.path = plugin.path();
  p.name = plugin.name();
  const seatrt_kernel_api api = read_table(plugin.descriptor().kernels);
  if (api.probe == nullptr) {
    p.detail = "provider has no probe()";
    return p;
  }
  seatrt_kernel_probe answer{};
  answer.struct_size = sizeof answer;
  seatrt_status* status = nullptr;
  try {
    status = api.probe(&answer);
  } catch (...) {
    p.detail = "probe() threw an exception (forbidden across the ABI)";
    return p;
  }
  if (status != nullptr) {
    p.detail = "probe() failed: " + take_status_message(status);
    return p;
  }
  p.score = answer.score;
  p.detail = answer.detail ? answer.detail : "";
  return p;
}

namespace {

// A parser plugin's table, copied as far as its struct_size reaches; an
// Error naming the plugin, its file and the slots it lacks.
seatrt_parser_api checked_parser_table(const LoadedPlugin& plugin, const seatrt_parser_api* raw, const char* kind) {
  const seatrt_parser_api api = read_table(raw);
  std::string missing;
  const auto need = [&](bool present, const char* slot) {
    if (!present) missing += (missing.empty() ? "" : ", ") + std::string(slot);
  };
  need(api.create != nullptr, "create");
  need(api.feed != nullptr, "feed");
  need(api.finish != nullptr, "finish");
  need(api.destroy != nullptr, "destroy");
  if (!missing.empty())
    throw Error(SEATRT_ERR_INVALID_ARG, std::string(kind) + " '" + plugin.name() + "' (" + plugin.path().string() +
                                            "): its table lacks " + missing +
                                            (raw && raw->struct_size < sizeof(seatrt_parser_api)
                                                 ? " (table struct_size " + std::to_string(raw->struct_size) + ")"
                                                 : ""));
  return api;
}

}  // namespace

std::vector<std::filesystem::path> seat_search_paths(const SeatConfig& seat) {
  return seat.plugins.search_paths.empty() ? default_plugin_search_paths()
                                           : seat.plugins.search_paths;
}

namespace {

std::shared_ptr<LoadedPlugin> choose_provider(PluginRegistry& registry, SeatPlugins& out) {
  std::shared_ptr<LoadedPlugin> best;
  uint32_t best_score = 0;
  for (const auto& candidate : registry.scan()) {
    if (!candidate.error.empty() || (candidate.kinds & SEATRT_KIND_KERNELS) == 0) continue;
    std::shared_ptr<LoadedPlugin> plugin;
    try {
      plugin = registry.load_file(candidate.path);
    } catch (const Error& e) {
      out.provider_candidates.push_back({candidate.path, candidate.name, 0, e.what()});
      continue;
    }
    ProviderProbe probe = probe_provider(*plugin);
    out.provider_candidates.push_back(probe);
    if (probe.score > best_score) {
      best_score = probe.score;
      best = plugin;
    }
  }
  if (!best)
    throw Error(SEATRT_ERR_NOT_FOUND,
                "[kernels] provider = \"auto\": no kernel provider in the plugin search paths can "
                "run on this machine (run `seatrt plugins` to see each one's probe)");
  return best;
}

}  // namespace

SeatPlugins load_seat_plugins(const SeatConfig& seat, AbiVersion host_version) {
  SeatPlugins out;
  out.search_paths = seat_search_paths(seat);
  if (out.search_paths.empty())
    throw Error(SEATRT_ERR_NOT_FOUND, seat.file.string() +
                                          ": no plugin search paths ([plugins] search_paths is "
                                          "empty and no default plugin directory exists)");
  PluginRegistry registry(out.search_paths, host_version);

  const auto& k = seat.kernels;
  out.kernels = k.provider == "auto" ? choose_provider(registry, out)
                                     : registry.load(k.provider, SEATRT_KIND_KERNELS);
  if (!k.fallback.empty()) {
    auto fallback = registry.load(k.fallback, SEATRT_KIND_KERNELS);
    if (fallback != out.kernels) out.fallback = fallback;
  }
  out.dispatch = std::make_unique<KernelDispatch>(
      KernelProvider{out.kernels->descriptor().kernels, out.kernels->name()},
      out.fallback ? KernelProvider{out.fallback->descriptor().kernels, out.fallback->name()}
                   : KernelProvider{});
  // Every required slot must be filled, by the provider or its same-device
  // fallback: the host calls them unconditionally (a NULL management slot
  // would crash serve, a missing operation leave it unable to generate).
  try {
    out.dispatch->require();
  } catch (const Error& e) {
    throw Error(e.code(), "kernel provider '" + out.kernels->name() + "' (" + out.kernels->path().string() +
                              "): " + e.what());
  }

  const auto& m = seat.model;
  if (m.architecture != "auto")
    out.architecture = registry.load(m.architecture, SEATRT_KIND_ARCHITECTURE);
  if (m.quantization != "auto" && m.quantization != "none")
    out.quantization = registry.load(m.quantization, SEATRT_KIND_QUANTIZATION);
  if (!seat.parsers.tool.empty()) {
    out.tool_parser = registry.load(seat.parsers.tool, SEATRT_KIND_TOOL_PARSER);
    out.tool_parser_table =
        checked_parser_table(*out.tool_parser, out.tool_parser->descriptor().tool_parser, "tool parser");
  }
  if (!seat.parsers.reasoning.empty()) {
    out.reasoning_parser = registry.load(seat.parsers.reasoning, SEATRT_KIND_REASONING_PARSER);
    out.reasoning_parser_table = checked_parser_table(
        *out.reasoning_parser, out.reasoning_parser->descriptor().reasoning_parser, "reasoning parser");
  }
  return out;
}

}  // namespace seatrt::host
