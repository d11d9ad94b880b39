// The plugins one seat names, resolved and loaded: what `seatrt check`
// reports and `seatrt serve` runs with.
//
// Kernel provider "auto": every kernel provider in the search paths is
// loaded and probed; the highest score above 0 wins (ties: the first in
// search-path order).  The fallback provider ([kernels] fallback, default
// "cpu") fills the operations the provider leaves NULL (see
// kernel_dispatch.hpp); the same plugin as the provider means no fallback.
//
// Architecture and quantization "auto" are chosen from the checkpoint's
// config.json when the model loads (issue 3); here only explicitly named
// ones are loaded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "seatrt/host/kernel_dispatch.hpp"
#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/seat_config.hpp"
#include "seatrt/parser.h"

namespace seatrt::host {

// One kernel provider's answer to the capability probe.
struct ProviderProbe {
  std::filesystem::path path;
  std::string name;     // "" when the library could not be loaded
  uint32_t score = 0;   // 0 = cannot run here
  std::string detail;   // the provider's own line, or the reason it failed
};

// Probes a loaded kernel provider (never throws: failures give score 0 and
// the reason in `detail`).
ProviderProbe probe_provider(const LoadedPlugin& plugin);

struct SeatPlugins {
  std::vector<std::filesystem::path> search_paths;
  std::vector<ProviderProbe> provider_candidates;  // filled when provider = "auto"
  std::shared_ptr<LoadedPlugin> kernels;
  std::shared_ptr<LoadedPlugin> fallback;          // null: none (or same as kernels)
  std::unique_ptr<KernelDispatch> dispatch;
  std::shared_ptr<LoadedPlugin> architecture;      // null: "auto" (chosen at model load)
  std::shared_ptr<LoadedPlugin> quantization;      // null: "auto" or "none"
  std::shared_ptr<LoadedPlugin> tool_parser;       // null: none
  std::shared_ptr<LoadedPlugin> reasoning_parser;  // null: none
  // The parsers' tables as far as their struct_size reaches (slots beyond
  // it read as NULL), checked to have create, feed, finish and destroy;
  // what the host calls.  Zeroed when there is no such parser.
  seatrt_parser_api tool_parser_table{};
  seatrt_parser_api reasoning_parser_table{};
};

// Loads every plugin `seat` names.  Throws Error (one line naming the
// plugin/file) on the first failure, including a kernel provider on another
// device than its fallback that lacks operations (they are named).
// `host_version` as in PluginRegistry.
SeatPlugins load_seat_plugins(const SeatConfig& seat, AbiVersion host_version = AbiVersion{});

// The search paths a seat uses: its own, or the defaults when it names none.
std::vector<std::filesystem::path> seat_search_paths(const SeatConfig& seat);

}  // namespace seatrt::host
