// Paths and loading helpers for the committed text fixtures.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

namespace seatrt::text::testing {

inline std::string fixture_path(const std::string& relative) {
  return std::string(SEATRT_FIXTURES) + "/" + relative;
}

inline std::string read_fixture(const std::string& relative) {
  std::ifstream in(fixture_path(relative), std::ios::binary);
  if (!in) throw std::runtime_error("missing fixture " + relative);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::json read_json_fixture(const std::string& relative) {
  return nlohmann::json::parse(read_fixture(relative));
}

}  // namespace seatrt::text::testing
