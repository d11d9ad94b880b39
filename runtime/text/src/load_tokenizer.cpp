// Picks the tokenizer a checkpoint directory ships.
#include <filesystem>

#include "seatrt/text/hf_tokenizer.hpp"
#include "seatrt/text/sentencepiece_tokenizer.hpp"
#include "seatrt/text/tokenizer.hpp"

namespace seatrt::text {

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& directory) {
  namespace fs = std::filesystem;
  const fs::path dir(directory);
  const fs::path config = dir / "tokenizer_config.json";
  const std::string config_path = fs::exists(config) ? config.string() : std::string();
  if (fs::exists(dir / "tokenizer.json")) return load_hf_tokenizer((dir / "tokenizer.json").string(), config_path);
  if (fs::exists(dir / "tokenizer.model"))
    return load_sentencepiece_tokenizer((dir / "tokenizer.model").string(), config_path);
  throw TokenizerError(directory + ": no tokenizer.json or tokenizer.model");
}

}  // namespace seatrt::text
