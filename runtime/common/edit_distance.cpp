// Levenshtein distance with one row of memory; names are short.
#include <algorithm>
#include <numeric>

#include "seatrt/host/edit_distance.hpp"

namespace seatrt::host {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = word.size() / 3 + 2;  // farther than this is not a typo
  for (const auto& candidate : candidates) {
    std::size_t d = edit_distance(word, candidate);
    // A truncated or over-long key ("api_key" for "api_key_env") is a
    // likely slip however many characters differ.
    const std::string_view c(candidate);
    if (word.size() >= 3 && (c.starts_with(word) || word.starts_with(c))) d = 1;
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace seatrt::host
