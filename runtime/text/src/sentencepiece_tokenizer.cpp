#include "seatrt/text/sentencepiece_tokenizer.hpp"

#include <sentencepiece_processor.h>

#include <map>

#include "named_tokens.hpp"
#include "string_hash.hpp"

namespace seatrt::text {

namespace {
class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(std::string_view proto, std::map<std::string, std::string, std::less<>> named)
      : named_(std::move(named)) {
    const auto status = sp_.LoadFromSerializedProto(proto);
    if (!status.ok()) throw TokenizerError("sentencepiece model: " + status.ToString());
    const int n = sp_.GetPieceSize();
    bytes_.resize(static_cast<size_t>(n));
    special_.resize(static_cast<size_t>(n));
    byte_.resize(static_cast<size_t>(n));
    for (int id = 0; id < n; ++id) {
      const std::string piece = sp_.IdToPiece(id);
      ids_.emplace(piece, id);
      special_[static_cast<size_t>(id)] = sp_.IsControl(id) || sp_.IsUnknown(id);
      byte_[static_cast<size_t>(id)] = sp_.IsByte(id);
      if (sp_.IsByte(id)) {
        bytes_[static_cast<size_t>(id)] = std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
      } else {
        std::string text;
        for (size_t i = 0; i < piece.size();) {
          if (piece.compare(i, 3, "\xE2\x96\x81") == 0) {  // '▁'
            text += ' ';
            i += 3;
          } else {
            text += piece[i++];
          }
        }
        bytes_[static_cast<size_t>(id)] = text;
      }
    }
  }

  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens) const override {
    std::vector<int> ids;
    const auto status = sp_.Encode(text, &ids);
    if (!status.ok()) throw TokenizerError("sentencepiece encode: " + status.ToString());
    std::vector<int32_t> out;
    if (add_special_tokens && sp_.bos_id() >= 0) out.push_back(sp_.bos_id());
    out.insert(out.end(), ids.begin(), ids.end());
    return out;
  }

  // Runs of ordinary ids are decoded by sentencepiece; control tokens, which
  // sentencepiece renders as nothing, are kept as their text unless skipped.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens) const override {
    std::string out;
    std::vector<int> run;
    auto flush = [&] {
      if (run.empty()) return;
      std::string piece;
      const auto status = sp_.Decode(run, &piece);
      if (!status.ok()) throw TokenizerError("sentencepiece decode: " + status.ToString());
      out += piece;
      run.clear();
    };
    for (const int32_t id : ids) {
      if (id < 0 || id >= vocab_size()) continue;
      if (sp_.IsControl(id)) {
        flush();
        if (!skip_special_tokens) out += sp_.IdToPiece(id);
      } else if (!(skip_special_tokens && special_[static_cast<size_t>(id)])) {
        run.push_back(id);
      }
    }
    flush();
    return out;
  }

  std::string_view token_bytes(int32_t id) const override {
    return id < 0 || id >= vocab_size() ? std::string_view() : bytes_[static_cast<size_t>(id)];
  }
  int32_t token_id(std::string_view text) const override {
    const auto it = ids_.find(text);
    return it == ids_.end() ? -1 : it->second;
  }
  bool is_special(int32_t id) const override {
    return id >= 0 && id < vocab_size() && special_[static_cast<size_t>(id)];
  }
  bool is_byte_token(int32_t id) const override {
    return id >= 0 && id < vocab_size() && byte_[static_cast<size_t>(id)];
  }
  int32_t vocab_size() const override { return static_cast<int32_t>(bytes_.size()); }
  std::string named_token(std::string_view name) const override {
    if (const auto it = named_.find(name); it != named_.end()) return it->second;
    // Without a tokenizer_config.json the model's own bos/eos pieces are used.
    if (name == "bos_token" && sp_.bos_id() >= 0) return sp_.IdToPiece(sp_.bos_id());
    if (name == "eos_token" && sp_.eos_id() >= 0) return sp_.IdToPiece(sp_.eos_id());
    return {};
  }

 private:
  sentencepiece::SentencePieceProcessor sp_;
  std::map<std::string, std::string, std::less<>> named_;
  StringMap<int32_t> ids_;
  std::vector<std::string> bytes_;
  std::vector<bool> special_;
  std::vector<bool> byte_;
};
}  // namespace

std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(std::string_view model_proto,
                                                        std::string_view tokenizer_config_json) {
  return std::make_unique<SentencePieceTokenizer>(model_proto, parse_named_tokens(tokenizer_config_json));
}

std::unique_ptr<Tokenizer> load_sentencepiece_tokenizer(const std::string& model_path,
                                                        const std::string& tokenizer_config_path) {
  const std::string config = tokenizer_config_path.empty() ? std::string() : read_file(tokenizer_config_path);
  try {
    return make_sentencepiece_tokenizer(read_file(model_path), config);
  } catch (const TokenizerError& e) {
    throw TokenizerError(model_path + ": " + e.what());
  }
}

}  // namespace seatrt::text
