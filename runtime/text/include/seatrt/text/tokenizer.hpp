// The tokenizer interface the host codes against.  One implementation per
// tokenizer family (Hugging Face tokenizer.json, sentencepiece .model); other
// architectures can bring their own.  Implementations are immutable after
// loading, so one instance serves every request concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace seatrt::text {

// Bad tokenizer files or unsupported tokenizer features.
class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Text -> ids.  add_special_tokens applies the tokenizer's post-processor
  // (e.g. a leading <bos>); a rendered chat prompt is encoded WITHOUT it,
  // because the template already wrote bos_token.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special_tokens) const = 0;

  // Ids -> text, exactly as the reference library decodes them (invalid
  // UTF-8 from byte-fallback tokens becomes U+FFFD).
  virtual std::string decode(std::span<const int32_t> ids, bool skip_special_tokens) const = 0;

  // The raw bytes token `id` stands for in decoded output: a byte-fallback
  // token is its one byte, a special token its text, '▁' a space.  Empty for
  // an id out of range.  Precomputed: O(1), no allocation.
  virtual std::string_view token_bytes(int32_t id) const = 0;

  // The id of the token whose text (as written in the vocabulary) is `text`,
  // or -1.  O(1) average.
  virtual int32_t token_id(std::string_view text) const = 0;

  // Whether `id` is a special (control) token, skipped by skip_special_tokens.
  virtual bool is_special(int32_t id) const = 0;

  // Whether `id` is a byte-fallback token (<0xNN>): its byte may be part of
  // a longer UTF-8 sequence spread over several tokens.
  virtual bool is_byte_token(int32_t id) const = 0;

  // Number of ids (base vocabulary plus added tokens).
  virtual int32_t vocab_size() const = 0;

  // Named special tokens ("bos_token" -> "<bos>"), from tokenizer_config.json
  // when one was given.  Empty string when unknown.
  virtual std::string named_token(std::string_view name) const = 0;

  // The ids of the named bos/eos tokens, looked up by their text; -1 if unknown.
  int32_t bos_id() const { return token_id(named_token("bos_token")); }
  int32_t eos_id() const { return token_id(named_token("eos_token")); }
};

// Loads the tokenizer of a checkpoint directory: tokenizer.json (preferred)
// or tokenizer.model, plus tokenizer_config.json for the named tokens.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& directory);

}  // namespace seatrt::text
