#include "hf_pipeline.hpp"

#include <nlohmann/json.hpp>

#include "seatrt/text/tokenizer.hpp"
#include "utf8.hpp"

namespace seatrt::text {

namespace {
using json = nlohmann::json;

std::string type_of(const json& section, const char* stage) {
  if (!section.is_object() || !section.contains("type") || !section["type"].is_string())
    throw TokenizerError(std::string("tokenizer.json: ") + stage + " has no \"type\"");
  return section["type"].get<std::string>();
}

// A {"String": "..."} pattern; regex patterns are not supported.
std::string string_pattern(const json& pattern, const char* stage) {
  if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string())
    return pattern["String"].get<std::string>();
  throw TokenizerError(std::string("tokenizer.json: ") + stage +
                       " uses a pattern other than {\"String\": ...} (regex patterns are not supported)");
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  out.append(s, pos, std::string::npos);
  s = std::move(out);
}
}  // namespace

int parse_byte_token(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(t[3]);
  const int lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// ---- Normalizer ----------------------------------------------------------

Normalizer::Normalizer(const json& section) {
  if (!section.is_null()) add(section);
}

void Normalizer::add(const json& s) {
  const std::string type = type_of(s, "normalizer");
  if (type == "Sequence") {
    for (const auto& inner : s.at("normalizers")) add(inner);
  } else if (type == "Replace") {
    steps_.push_back({Step::kReplace, string_pattern(s.at("pattern"), "normalizer Replace"),
                      s.at("content").get<std::string>()});
  } else if (type == "Prepend") {
    steps_.push_back({Step::kPrepend, "", s.at("prepend").get<std::string>()});
  } else {
    throw TokenizerError("tokenizer.json: normalizer type '" + type + "' is not supported");
  }
}

std::string Normalizer::apply(std::string_view text) const {
  std::string s(text);
  for (const Step& step : steps_) {
    if (step.kind == Step::kReplace) {
      replace_all(s, step.pattern, step.content);
    } else if (!s.empty()) {  // Prepend leaves empty text empty
      s.insert(0, step.content);
    }
  }
  return s;
}

// ---- PreTokenizer --------------------------------------------------------

PreTokenizer::PreTokenizer(const json& section) {
  if (!section.is_null()) add(section);
}

void PreTokenizer::add(const json& s) {
  const std::string type = type_of(s, "pre_tokenizer");
  if (type == "Sequence") {
    for (const auto& inner : s.at("pretokenizers")) add(inner);
    return;
  }
  if (type != "Split")
    throw TokenizerError("tokenizer.json: pre_tokenizer type '" + type + "' is not supported");
  if (s.value("invert", false))
    throw TokenizerError("tokenizer.json: pre_tokenizer Split with invert=true is not supported");
  const std::string b = s.at("behavior").get<std::string>();
  Behavior behavior;
  if (b == "Removed") behavior = kRemoved;
  else if (b == "Isolated") behavior = kIsolated;
  else if (b == "MergedWithPrevious") behavior = kMergedWithPrevious;
  else if (b == "MergedWithNext") behavior = kMergedWithNext;
  else if (b == "Contiguous") behavior = kContiguous;
  else throw TokenizerError("tokenizer.json: unknown Split behavior '" + b + "'");
  steps_.push_back({string_pattern(s.at("pattern"), "pre_tokenizer Split"), behavior});
}

std::vector<std::string_view> PreTokenizer::split_one(std::string_view text, const Step& step) {
  // Alternating (is_match, piece) runs, then combined per behaviour.
  std::vector<std::pair<bool, std::string_view>> runs;
  size_t pos = 0;
  if (!step.pattern.empty()) {
    for (size_t hit; (hit = text.find(step.pattern, pos)) != std::string_view::npos;
         pos = hit + step.pattern.size()) {
      if (hit > pos) runs.emplace_back(false, text.substr(pos, hit - pos));
      runs.emplace_back(true, text.substr(hit, step.pattern.size()));
    }
  }
  if (pos < text.size()) runs.emplace_back(false, text.substr(pos));

  std::vector<std::string_view> out;
  auto extend_last = [&](std::string_view piece) {
    // Pieces are adjacent in `text`, so extending a view is safe.
    out.back() = std::string_view(out.back().data(), out.back().size() + piece.size());
  };
  bool previous_was_match = false;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& [is_match, piece] = runs[i];
    switch (step.behavior) {
      case kRemoved:
        if (!is_match) out.push_back(piece);
        break;
      case kIsolated:
        out.push_back(piece);
        break;
      case kMergedWithPrevious:
        if (is_match && !out.empty() && !previous_was_match) extend_last(piece);
        else out.push_back(piece);
        break;
      case kMergedWithNext:
        if (!is_match && previous_was_match && !out.empty()) extend_last(piece);
        else out.push_back(piece);
        break;
      case kContiguous:
        if (is_match && previous_was_match && !out.empty()) extend_last(piece);
        else out.push_back(piece);
        break;
    }
    previous_was_match = is_match;
  }
  return out;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> words{text};
  for (const Step& step : steps_) {
    std::vector<std::string_view> next;
    for (const auto w : words)
      for (const auto piece : split_one(w, step)) next.push_back(piece);
    words = std::move(next);
  }
  return words;
}

// ---- Decoder -------------------------------------------------------------

Decoder::Decoder(const json& section) {
  if (!section.is_null()) add(section);
}

void Decoder::add(const json& s) {
  const std::string type = type_of(s, "decoder");
  if (type == "Sequence") {
    for (const auto& inner : s.at("decoders")) add(inner);
  } else if (type == "Replace") {
    steps_.push_back({Step::kReplace, string_pattern(s.at("pattern"), "decoder Replace"),
                      s.at("content").get<std::string>()});
  } else if (type == "ByteFallback") {
    steps_.push_back({Step::kByteFallback, "", ""});
    byte_fallback_ = true;
  } else if (type == "Fuse") {
    steps_.push_back({Step::kFuse, "", ""});
  } else if (type == "Strip") {
    Step step{Step::kStrip, "", s.at("content").get<std::string>()};
    step.start = s.value("start", size_t{0});
    step.stop = s.value("stop", size_t{0});
    steps_.push_back(step);
  } else {
    throw TokenizerError("tokenizer.json: decoder type '" + type + "' is not supported");
  }
}

namespace {
// tokenizers' ByteFallback: a run of <0xNN> tokens becomes its bytes when they
// are valid UTF-8, else one U+FFFD per byte.
std::vector<std::string> byte_fallback(std::vector<std::string> tokens) {
  std::vector<std::string> out;
  std::string run;
  size_t run_len = 0;
  auto flush = [&] {
    if (run_len == 0) return;
    if (utf8::is_valid(run)) {
      out.push_back(run);
    } else {
      for (size_t i = 0; i < run_len; ++i) out.emplace_back(utf8::kReplacement);
    }
    run.clear();
    run_len = 0;
  };
  for (auto& t : tokens) {
    const int b = parse_byte_token(t);
    if (b >= 0) {
      run += static_cast<char>(b);
      ++run_len;
    } else {
      flush();
      out.push_back(std::move(t));
    }
  }
  flush();
  return out;
}

// Strip: removes `start` leading and `stop` trailing occurrences of the
// content character from each token.
std::string strip_token(const std::string& t, const std::string& content, size_t start, size_t stop) {
  size_t begin = 0;
  for (size_t i = 0; i < start && t.compare(begin, content.size(), content) == 0; ++i)
    begin += content.size();
  size_t end = t.size();
  for (size_t i = 0; i < stop && end >= begin + content.size() &&
                     t.compare(end - content.size(), content.size(), content) == 0;
       ++i)
    end -= content.size();
  return t.substr(begin, end - begin);
}
}  // namespace

std::string Decoder::decode(std::vector<std::string> tokens) const {
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Step::kReplace:
        for (auto& t : tokens) replace_all(t, step.pattern, step.content);
        break;
      case Step::kByteFallback:
        tokens = byte_fallback(std::move(tokens));
        break;
      case Step::kFuse: {
        std::string all;
        for (const auto& t : tokens) all += t;
        tokens.assign(1, std::move(all));
        break;
      }
      case Step::kStrip:
        for (auto& t : tokens) t = strip_token(t, step.content, step.start, step.stop);
        break;
    }
  }
  std::string out;
  for (const auto& t : tokens) out += t;
  return out;
}

std::string Decoder::decode_one(std::string token) const {
  for (const Step& step : steps_) {
    if (step.kind == Step::kReplace) replace_all(token, step.pattern, step.content);
    if (step.kind == Step::kStrip) token = strip_token(token, step.content, step.start, step.stop);
  }
  return token;
}

}  // namespace seatrt::text
