// Environment switches for one scope: the CUDA provider reads its
// benchmark/opt-in kernel switches (SEATRT_MOE_DECODE, SEATRT_ROUTE) at each
// call, so a test sets them around the calls it makes and the previous
// values come back after.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace seatrt_test {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

class ScopedEnv {
 public:
  ScopedEnv(const std::string& name, const std::string& value) : ScopedEnv(EnvVars{{name, value}}) {}
  explicit ScopedEnv(const EnvVars& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The opt-in decode kernel switches not yet measured on a device: route
// blocks per 8 tokens, the MoE down's reads before its PDL wait and its
// weights asked of L2 during gate/up.
inline EnvVars opt_in_decode_switches() {
  return {{"SEATRT_ROUTE", "groups"}, {"SEATRT_MOE_DECODE", "e,l"}};
}

}  // namespace seatrt_test
