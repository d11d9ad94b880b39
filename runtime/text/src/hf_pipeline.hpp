// The text-transform stages of a tokenizer.json around the BPE model:
// normalizer, pre-tokenizer and decoder, each parsed from its JSON section.
// Only the stage types real LLM tokenizers of this family use are supported;
// anything else is rejected at load time with its name.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace seatrt::text {

// Normalizer: Replace (string pattern), Prepend, Sequence of those, or none.
class Normalizer {
 public:
  explicit Normalizer(const nlohmann::json& section);  // null section = identity
  std::string apply(std::string_view text) const;

 private:
  struct Step {
    enum Kind { kReplace, kPrepend } kind;
    std::string pattern;
    std::string content;
  };
  void add(const nlohmann::json& section);
  std::vector<Step> steps_;
};

// Pre-tokenizer: Split (string pattern, any behaviour), Sequence, or none.
class PreTokenizer {
 public:
  explicit PreTokenizer(const nlohmann::json& section);
  // Splits `text` into words (views into `text`).
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  enum Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
  struct Step {
    std::string pattern;
    Behavior behavior;
  };
  void add(const nlohmann::json& section);
  static std::vector<std::string_view> split_one(std::string_view text, const Step& step);
  std::vector<Step> steps_;
};

// Decoder: Replace, ByteFallback, Fuse, Strip, Sequence of those, or none.
class Decoder {
 public:
  explicit Decoder(const nlohmann::json& section);
  // Decodes token strings to text exactly as tokenizers' decode_chain + join.
  std::string decode(std::vector<std::string> tokens) const;
  // The per-token part of decoding (all steps but ByteFallback/Fuse), for
  // precomputing what one token stands for.
  std::string decode_one(std::string token) const;
  bool has_byte_fallback() const { return byte_fallback_; }

 private:
  struct Step {
    enum Kind { kReplace, kByteFallback, kFuse, kStrip } kind;
    std::string pattern;
    std::string content;
    size_t start = 0;
    size_t stop = 0;
  };
  void add(const nlohmann::json& section);
  std::vector<Step> steps_;
  bool byte_fallback_ = false;
};

// "<0xNN>" -> NN, or -1.
int parse_byte_token(std::string_view token);

}  // namespace seatrt::text
