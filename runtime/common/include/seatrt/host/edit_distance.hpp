// "Did you mean" suggestions for typos in names (config keys, plugin names).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace seatrt::host {

// Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is plausibly meant
// (distance larger than about a third of the word; a candidate that
// extends `word` or is a prefix of it counts as close).
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace seatrt::host
