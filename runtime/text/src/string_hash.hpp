// Transparent string hashing so maps keyed by std::string can be probed with
// a string_view without allocating.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace seatrt::text {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

template <typename T>
using StringMap = std::unordered_map<std::string, T, StringHash, std::equal_to<>>;

}  // namespace seatrt::text
