// The named special tokens of a tokenizer_config.json ("bos_token": "<bos>").
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace seatrt::text {

// Every "*_token" entry whose value is a string or an AddedToken object
// ({"content": ...}).  Empty map for empty input; throws TokenizerError for
// malformed JSON.
std::map<std::string, std::string, std::less<>> parse_named_tokens(std::string_view config_json);

std::string read_file(const std::string& path);

}  // namespace seatrt::text
