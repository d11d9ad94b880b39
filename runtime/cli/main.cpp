// `seatrt`: dispatches to the registered subcommands (see command.hpp).
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "command.hpp"

namespace seatrt::cli {

namespace {
std::vector<Command>& registry() {
  static std::vector<Command> all;
  return all;
}
}  // namespace

bool register_command(const Command& command) {
  auto& all = registry();
  all.push_back(command);
  std::sort(all.begin(), all.end(),
            [](const Command& a, const Command& b) { return std::string(a.name) < b.name; });
  return true;
}

const std::vector<Command>& commands() { return registry(); }

}  // namespace seatrt::cli

namespace {
void print_help(std::FILE* out) {
  std::fprintf(out, "seatrt: serve a quantized model as an OpenAI-compatible endpoint\n\nusage:\n");
  for (const auto& c : seatrt::cli::commands()) std::fprintf(out, "  seatrt %-40s %s\n", c.usage, c.summary);
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_help(args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  for (const auto& c : seatrt::cli::commands()) {
    if (args[0] != c.name) continue;
    try {
      return c.run(std::span<const std::string>(args).subspan(1));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "seatrt %s: error: %s\n", c.name, e.what());
      return 1;
    } catch (...) {
      std::fprintf(stderr, "seatrt %s: error: unknown failure\n", c.name);
      return 1;
    }
  }
  std::fprintf(stderr, "seatrt: unknown command '%s' (see seatrt --help)\n", args[0].c_str());
  return 2;
}
