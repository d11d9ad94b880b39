// tokenizer.json loading and the encode/decode pipeline:
//   added tokens -> normalizer -> pre-tokenizer -> BPE -> post-processor
//   ids -> token strings -> decoder chain
#include "seatrt/text/hf_tokenizer.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "added_tokens.hpp"
#include "bpe_model.hpp"
#include "hf_pipeline.hpp"
#include "named_tokens.hpp"

namespace seatrt::text {

namespace {
using json = nlohmann::json;

std::vector<std::pair<std::string, std::string>> parse_merges(const json& merges) {
  std::vector<std::pair<std::string, std::string>> out;
  if (merges.is_null()) return out;
  if (!merges.is_array()) throw TokenizerError("tokenizer.json: model.merges is not an array");
  out.reserve(merges.size());
  for (const auto& m : merges) {
    if (m.is_string()) {  // "left right"
      const auto s = m.get<std::string>();
      const auto space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        throw TokenizerError("tokenizer.json: merge \"" + s + "\" is not two tokens separated by one space");
      out.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      out.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      throw TokenizerError("tokenizer.json: a merge is neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
  return out;
}

BpeModel parse_model(const json& model) {
  if (!model.is_object()) throw TokenizerError("tokenizer.json: no \"model\" object");
  const std::string type = model.value("type", std::string("BPE"));
  if (type != "BPE")
    throw TokenizerError("tokenizer.json: model type '" + type + "' is not supported (only BPE)");
  if (model.contains("dropout") && !model["dropout"].is_null())
    throw TokenizerError("tokenizer.json: BPE dropout is not supported");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && !model[key].is_null() && !model[key].get<std::string>().empty())
      throw TokenizerError(std::string("tokenizer.json: BPE ") + key + " is not supported");
  const json& vocab_json = model.at("vocab");
  if (!vocab_json.is_object()) throw TokenizerError("tokenizer.json: model.vocab is not an object");
  StringMap<int32_t> vocab;
  vocab.reserve(vocab_json.size());
  for (const auto& [token, id] : vocab_json.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
      throw TokenizerError("tokenizer.json: vocab entry '" + token + "' has no valid id");
    vocab.emplace(token, id.get<int32_t>());
  }
  BpeOptions options;
  options.byte_fallback = model.value("byte_fallback", false);
  options.fuse_unk = model.value("fuse_unk", false);
  options.ignore_merges = model.value("ignore_merges", false);
  if (model.contains("unk_token") && model["unk_token"].is_string())
    options.unk_token = model["unk_token"].get<std::string>();
  return BpeModel(std::move(vocab), parse_merges(model.value("merges", json())), options);
}

std::vector<AddedToken> parse_added_tokens(const json& list) {
  std::vector<AddedToken> out;
  if (list.is_null()) return out;
  for (const auto& t : list) {
    AddedToken a;
    a.id = t.at("id").get<int32_t>();
    a.content = t.at("content").get<std::string>();
    a.special = t.value("special", false);
    a.lstrip = t.value("lstrip", false);
    a.rstrip = t.value("rstrip", false);
    a.single_word = t.value("single_word", false);
    a.normalized = t.value("normalized", false);
    if (a.id < 0) throw TokenizerError("tokenizer.json: added token '" + a.content + "' has a negative id");
    out.push_back(std::move(a));
  }
  return out;
}

// TemplateProcessing "single": the ids to put before and after the sequence.
struct PostProcessor {
  std::vector<int32_t> before;
  std::vector<int32_t> after;
};

PostProcessor parse_post_processor(const json& section) {
  PostProcessor pp;
  if (section.is_null()) return pp;
  const std::string type = section.value("type", std::string());
  if (type != "TemplateProcessing")
    throw TokenizerError("tokenizer.json: post_processor type '" + type + "' is not supported");
  bool seen_sequence = false;
  for (const auto& piece : section.at("single")) {
    if (piece.contains("Sequence")) {
      seen_sequence = true;
    } else if (piece.contains("SpecialToken")) {
      const std::string name = piece["SpecialToken"].at("id").get<std::string>();
      const json& special = section.at("special_tokens");
      if (!special.contains(name))
        throw TokenizerError("tokenizer.json: post_processor names unknown special token '" + name + "'");
      for (const auto& id : special[name].at("ids")) (seen_sequence ? pp.after : pp.before).push_back(id.get<int32_t>());
    }
  }
  return pp;
}

class HfTokenizer final : public Tokenizer {
 public:
  HfTokenizer(const json& root, std::map<std::string, std::string, std::less<>> named)
      : model_(parse_model(root.at("model"))),
        added_(parse_added_tokens(root.value("added_tokens", json()))),
        normalizer_(root.value("normalizer", json())),
        raw_matcher_(select_added(added_, false, normalizer_)),
        normalized_matcher_(select_added(added_, true, normalizer_)),
        pre_tokenizer_(root.value("pre_tokenizer", json())),
        decoder_(root.value("decoder", json())),
        post_(parse_post_processor(root.value("post_processor", json()))),
        named_(std::move(named)) {
    int32_t size = 0;
    for (const auto& [text, id] : model_.vocab()) size = std::max(size, id + 1);
    for (const auto& a : added_) size = std::max(size, a.id + 1);
    texts_.resize(static_cast<size_t>(size));
    for (const auto& [text, id] : model_.vocab()) texts_[static_cast<size_t>(id)] = text;
    special_.assign(static_cast<size_t>(size), false);
    byte_.assign(static_cast<size_t>(size), false);
    for (const auto& a : added_) {
      texts_[static_cast<size_t>(a.id)] = a.content;
      special_[static_cast<size_t>(a.id)] = a.special;
      added_ids_.emplace(a.content, a.id);
    }
    bytes_.resize(static_cast<size_t>(size));
    for (size_t id = 0; id < texts_.size(); ++id) {
      const int b = decoder_.has_byte_fallback() && added_ids_.find(texts_[id]) == added_ids_.end()
                        ? parse_byte_token(texts_[id])
                        : -1;
      byte_[id] = b >= 0;
      bytes_[id] = b >= 0 ? std::string(1, static_cast<char>(b)) : decoder_.decode_one(texts_[id]);
    }
  }

  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens) const override {
    std::vector<int32_t> ids;
    if (add_special_tokens) ids = post_.before;
    // Tokens with normalized=false are found in the raw text; those with
    // normalized=true in the normalized text of what is left (as tokenizers does).
    for (const Segment& seg : raw_matcher_.split(text)) {
      if (seg.added_id >= 0) {
        ids.push_back(seg.added_id);
        continue;
      }
      const std::string normalized = normalizer_.apply(seg.text);
      for (const Segment& piece : normalized_matcher_.split(normalized)) {
        if (piece.added_id >= 0) {
          ids.push_back(piece.added_id);
          continue;
        }
        for (const std::string_view word : pre_tokenizer_.split(piece.text)) model_.encode_word(word, ids);
      }
    }
    if (add_special_tokens) ids.insert(ids.end(), post_.after.begin(), post_.after.end());
    return ids;
  }

  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens) const override {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (const int32_t id : ids) {
      if (id < 0 || id >= vocab_size()) continue;  // unknown ids are skipped, as tokenizers does
      if (skip_special_tokens && special_[static_cast<size_t>(id)]) continue;
      tokens.push_back(texts_[static_cast<size_t>(id)]);
    }
    return decoder_.decode(std::move(tokens));
  }

  std::string_view token_bytes(int32_t id) const override {
    return id < 0 || id >= vocab_size() ? std::string_view() : bytes_[static_cast<size_t>(id)];
  }
  int32_t token_id(std::string_view text) const override {
    if (const auto it = added_ids_.find(text); it != added_ids_.end()) return it->second;
    if (const auto it = model_.vocab().find(text); it != model_.vocab().end()) return it->second;
    return -1;
  }
  bool is_special(int32_t id) const override {
    return id >= 0 && id < vocab_size() && special_[static_cast<size_t>(id)];
  }
  bool is_byte_token(int32_t id) const override {
    return id >= 0 && id < vocab_size() && byte_[static_cast<size_t>(id)];
  }
  int32_t vocab_size() const override { return static_cast<int32_t>(texts_.size()); }
  std::string named_token(std::string_view name) const override {
    const auto it = named_.find(name);
    return it == named_.end() ? std::string() : it->second;
  }

 private:
  // The added tokens matched at one stage; normalized ones are matched by
  // their normalized text.
  static std::vector<AddedToken> select_added(const std::vector<AddedToken>& all, bool normalized,
                                              const Normalizer& normalizer) {
    std::vector<AddedToken> out;
    for (const auto& a : all) {
      if (a.normalized != normalized) continue;
      out.push_back(a);
      if (normalized) out.back().content = normalizer.apply(a.content);
    }
    return out;
  }

  BpeModel model_;
  std::vector<AddedToken> added_;
  Normalizer normalizer_;
  AddedTokenMatcher raw_matcher_;
  AddedTokenMatcher normalized_matcher_;
  PreTokenizer pre_tokenizer_;
  Decoder decoder_;
  PostProcessor post_;
  std::map<std::string, std::string, std::less<>> named_;
  StringMap<int32_t> added_ids_;
  std::vector<std::string> texts_;  // id -> token text as in the vocabulary
  std::vector<std::string> bytes_;  // id -> decoded bytes
  std::vector<bool> special_;
  std::vector<bool> byte_;
};
}  // namespace

std::unique_ptr<Tokenizer> make_hf_tokenizer(std::string_view tokenizer_json,
                                             std::string_view tokenizer_config_json) {
  json root;
  try {
    root = json::parse(tokenizer_json);
  } catch (const json::exception& e) {
    throw TokenizerError(std::string("tokenizer.json is not valid JSON: ") + e.what());
  }
  try {
    return std::make_unique<HfTokenizer>(root, parse_named_tokens(tokenizer_config_json));
  } catch (const json::exception& e) {
    throw TokenizerError(std::string("tokenizer.json: unexpected structure: ") + e.what());
  }
}

std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& tokenizer_json_path,
                                             const std::string& tokenizer_config_path) {
  const std::string config = tokenizer_config_path.empty() ? std::string() : read_file(tokenizer_config_path);
  try {
    return make_hf_tokenizer(read_file(tokenizer_json_path), config);
  } catch (const TokenizerError& e) {
    throw TokenizerError(tokenizer_json_path + ": " + e.what());
  }
}

}  // namespace seatrt::text
