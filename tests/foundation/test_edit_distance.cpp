// Edit distance and "did you mean" suggestions.
#include <catch2/catch.hpp>

#include "seatrt/host/edit_distance.hpp"

using seatrt::host::closest_match;
using seatrt::host::edit_distance;

TEST_CASE("edit distance counts single-character edits") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("port", "port") == 0);
  CHECK(edit_distance("prot", "port") == 2);  // a transposition is two edits
  CHECK(edit_distance("max_num_seq", "max_num_seqs") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
}

TEST_CASE("closest_match suggests plausible typos only") {
  const std::vector<std::string> keys = {"host", "port", "api_key_env", "max_queue"};
  CHECK(closest_match("prot", keys) == "port");
  CHECK(closest_match("api_key", keys) == "api_key_env");
  CHECK(closest_match("completely_unrelated", keys).empty());
}
