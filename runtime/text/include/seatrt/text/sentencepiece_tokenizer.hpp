// sentencepiece tokenizer.model, through the Debian libsentencepiece, for
// checkpoints that ship no tokenizer.json.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "seatrt/text/tokenizer.hpp"

namespace seatrt::text {

// `model_proto` is the serialized .model file; `tokenizer_config_json` as
// for make_hf_tokenizer ("" when absent).
std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(std::string_view model_proto,
                                                        std::string_view tokenizer_config_json = {});

std::unique_ptr<Tokenizer> load_sentencepiece_tokenizer(const std::string& model_path,
                                                        const std::string& tokenizer_config_path = {});

}  // namespace seatrt::text
