// The provider's options ([kernels.options] of the seat file) and the probe's
// description of the machine.
#include <string>
#include <thread>

#include <toml++/toml.h>

#include "provider_table.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

int32_t parse_thread_option(const char* options_toml) {
  const unsigned hw = std::thread::hardware_concurrency();
  int32_t threads = hw == 0 ? 1 : static_cast<int32_t>(std::min(hw, 1024u));
  if (!options_toml || !*options_toml) return threads;
  toml::table table;
  try {
    table = toml::parse(options_toml);
  } catch (const toml::parse_error& e) {
    invalid("create", "[kernels.options] is not valid TOML (line " +
                          std::to_string(e.source().begin.line) + ", column " +
                          std::to_string(e.source().begin.column) + "): " + std::string(e.description()));
  }
  for (const auto& [key, value] : table) {
    if (key.str() != "threads") {
      invalid("create", "unknown option [kernels.options] " + std::string(key.str()) +
                            " (the cpu provider knows: threads)");
    }
    const auto n = value.value<int64_t>();
    if (!value.is_integer() || !n || *n < 1 || *n > 1024) {
      invalid("create", "[kernels.options] threads must be an integer in 1..1024");
    }
    threads = static_cast<int32_t>(*n);
  }
  return threads;
}

const std::string& machine_detail() {
  static const std::string detail = [] {
    std::string d;
#if defined(__x86_64__)
    d = "x86_64";
#elif defined(__aarch64__)
    d = "aarch64";
#else
    d = "unknown CPU architecture";
#endif
    const unsigned hw = std::thread::hardware_concurrency();
    d += ", " + std::to_string(hw == 0 ? 1 : hw) + " threads";
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
      d += ", AVX-512F";
    } else if (__builtin_cpu_supports("avx2")) {
      d += ", AVX2";
    } else {
      d += ", SSE2";
    }
#endif
    return d + ", portable fp32 reference kernels";
  }();
  return detail;
}

}  // namespace seatrt::cpu
