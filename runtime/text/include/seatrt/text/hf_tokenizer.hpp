// Hugging Face tokenizer.json (BPE family, as Gemma-4 ships it).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "seatrt/text/tokenizer.hpp"

namespace seatrt::text {

// Builds a tokenizer from the text of a tokenizer.json and, optionally, of a
// tokenizer_config.json (named tokens such as bos_token; "" when absent).
// Throws TokenizerError naming the problem for bad or unsupported files.
std::unique_ptr<Tokenizer> make_hf_tokenizer(std::string_view tokenizer_json,
                                             std::string_view tokenizer_config_json = {});

// Reads the files; config_path may be empty.
std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& tokenizer_json_path,
                                             const std::string& tokenizer_config_path = {});

}  // namespace seatrt::text
