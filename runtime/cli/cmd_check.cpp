// `seatrt check SEAT.toml`: parse and validate the seat, load every plugin
// it names, exercise them once, and print what would run.  Any problem:
// one line on stderr, exit 1.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "seatrt/host/logging.hpp"
#include "seatrt/host/seat_cli.hpp"
#include "seatrt/host/seat_plugins.hpp"
#include "seatrt/host/smoke.hpp"
#include "seatrt/host/status.hpp"
#include "server/seat_kv.hpp"
#include "server/seat_loader.hpp"
#include "server/seat_steps.hpp"

// The model helper (issue 3) provides this header and function; until then
// check says the model is not loaded.  Signature:
//   void seatrt::host::check_model(const SeatConfig&, SeatPlugins&, std::ostream& out);
// It loads/inspects the checkpoint, prints its own lines, throws Error on a
// problem.
#if __has_include(<seatrt/host/model_check.hpp>)
#include <seatrt/host/model_check.hpp>
#define SEATRT_HAVE_MODEL_CHECK 1
#endif

namespace seatrt::cli {
namespace {

using namespace seatrt::host;

void print_plugin(std::ostream& out, const char* role, const std::shared_ptr<LoadedPlugin>& p) {
  out << role << ": " << p->name() << " " << p->version() << " (ABI " << p->abi_version()
      << ") " << p->path().string() << "\n";
}

void report_model(const SeatConfig& seat, SeatPlugins& plugins, std::ostream& out) {
#ifdef SEATRT_HAVE_MODEL_CHECK
  check_model(seat, plugins, out);
#else
  (void)plugins;
  out << "model: " << seat.model.path.string()
      << ": not loaded (checkpoint loading lands with issue 3)\n";
#endif
}

void check(const SeatConfig& seat, std::ostream& out) {
  out << "seat: " << seat.seat.name << " (" << seat.file.string() << ")\n";
  out << "served names:";
  for (const auto& n : seat.seat.served_model_names) out << " " << n;
  out << "\n";
  SeatPlugins plugins = load_seat_plugins(seat);
  out << "plugin search paths:";
  for (const auto& p : plugins.search_paths) out << " " << p.string();
  out << "\n";
  if (!plugins.provider_candidates.empty()) {
    out << "kernel provider auto-selection (probe scores):\n";
    for (const auto& c : plugins.provider_candidates)
      out << "  " << (c.name.empty() ? "?" : c.name) << ": score " << c.score << " ("
          << c.detail << ") " << c.path.string() << "\n";
  }
  print_plugin(out, "kernel provider", plugins.kernels);
  if (plugins.fallback) print_plugin(out, "kernel fallback", plugins.fallback);
  out << "kernel table:";
  for (const auto& s : plugins.dispatch->sources())
    out << " " << s.op << "=" << (s.provider.empty() ? "MISSING" : s.provider);
  out << "\n";
  const auto missing = plugins.dispatch->missing_ops();
  if (!missing.empty()) {
    out << "warning: no provider fills:";
    for (const auto& m : missing) out << " " << m;
    out << " (the model refuses to load if its architecture needs them)\n";
  }
  if (plugins.architecture) print_plugin(out, "architecture", plugins.architecture);
  else out << "architecture: " << seat.model.architecture << " (chosen from config.json at load)\n";
  if (plugins.quantization) print_plugin(out, "quantization", plugins.quantization);
  else out << "quantization: " << seat.model.quantization << "\n";
  if (plugins.tool_parser) print_plugin(out, "tool parser", plugins.tool_parser);
  else out << "tool parser: none\n";
  if (plugins.reasoning_parser) print_plugin(out, "reasoning parser", plugins.reasoning_parser);
  else out << "reasoning parser: none\n";

  out << "kernel smoke: "
      << kernel_smoke(*plugins.dispatch, seat.kernels.options_toml, seat.kernels.device) << "\n";
  if (plugins.tool_parser)
    out << "tool parser smoke: "
        << parser_smoke(&plugins.tool_parser_table,
                        seat.parsers.tool_options_toml, seat.parsers.chat_template_kwargs)
        << "\n";
  if (plugins.reasoning_parser)
    out << "reasoning parser smoke: "
        << parser_smoke(&plugins.reasoning_parser_table,
                        seat.parsers.reasoning_options_toml, seat.parsers.chat_template_kwargs)
        << "\n";
  report_model(seat, plugins, out);
  server::check_seat_kv(seat, plugins, out);
  server::check_seat_text(seat, out);
  server::check_seat_server(seat);
  // Last: it loads the model, and the cheaper checks above name their
  // problems first.
  server::check_seat_steps(seat, plugins, out);
  out << "ok: seat '" << seat.seat.name << "' checks out\n";
}

int run_check(std::span<const std::string> args) {
  try {
    const SeatOptions options = parse_seat_options("check", args);
    const SeatConfig seat = load_seat_with_logging(options);
    std::ostringstream report;  // printed only when complete: errors stay one line
    check(seat, report);
    std::cout << report.str() << std::flush;
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "seatrt check: %s\nusage: seatrt check SEAT.toml [--log-format text|json]\n",
                 e.what());
    return 2;
  } catch (const std::exception& e) {
    // In a JSON log the fatal line is a JSON object too.
    if (host::log_format() == host::LogFormat::json) host::logger()->critical("seatrt check: error: {}", e.what());
    else std::fprintf(stderr, "seatrt check: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("check", "check SEAT.toml [--log-format text|json]",
                   "validate a seat, load its plugins and print what would run",
                   seatrt::cli::run_check)
