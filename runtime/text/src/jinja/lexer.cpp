#include "lexer.hpp"

#include <cctype>
#include <cstring>

#include "../utf8.hpp"

namespace seatrt::text::jinja {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// jinja2 splits on \r\n, \r and \n, joins with \n, and drops one trailing
// newline unless keep_trailing_newline.
std::string normalize_newlines(std::string_view src, bool keep_trailing_newline) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out += '\n';
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out += src[i];
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Python "unicode-escape" decoding of a string literal's body.
std::string unescape(std::string_view body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    const char e = body[++i];
    switch (e) {
      case '\n': break;  // line continuation
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        char32_t cp = 0;
        bool ok = true;
        for (size_t k = 1; ok && k <= n; ++k) {
          if (i + k >= body.size() || hex_value(body[i + k]) < 0) ok = false;
          else cp = cp * 16 + static_cast<char32_t>(hex_value(body[i + k]));
        }
        if (!ok || cp > 0x10FFFF) throw TemplateError(0, "bad \\" + std::string(1, e) + " escape in a string literal");
        utf8::append_code_point(out, cp);
        i += n;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          char32_t cp = 0;
          size_t k = 0;
          for (; k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7'; ++k)
            cp = cp * 8 + static_cast<char32_t>(body[i + k] - '0');
          utf8::append_code_point(out, cp);
          i += k - 1;
        } else {
          out += '\\';  // unknown escapes stay as written
          out += e;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  Lexer(std::string_view source, const Options& options)
      : src_(normalize_newlines(source, options.keep_trailing_newline)), options_(options) {}

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      std::string data = src_.substr(pos_, tag - pos_);
      const int data_line = line_;
      if (tag < src_.size()) {
        const char kind = src_[tag + 1];
        const char modifier = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
        if (modifier == '-') {
          while (!data.empty() && is_ws(data.back())) data.pop_back();
        } else if (kind != '{' && options_.lstrip_blocks && modifier != '+') {
          const size_t line_start = data.rfind('\n') == std::string::npos ? 0 : data.rfind('\n') + 1;
          if (line_start > 0 || line_starting) {
            if (data.find_first_not_of(" \t", line_start) == std::string::npos) data.resize(line_start);
          }
        }
      }
      advance_to(tag);
      if (!data.empty()) tokens_.push_back({TokenType::Data, std::move(data), data_line});
      if (tag >= src_.size()) break;
      const char kind = src_[tag + 1];
      const bool has_modifier = tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+');
      advance_to(tag + 2 + (has_modifier ? 1 : 0));
      if (kind == '#') lex_comment();
      else lex_tag(kind == '%');
      line_starting = pos_ > 0 && src_[pos_ - 1] == '\n';
    }
    tokens_.push_back({TokenType::End, "", line_});
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return src_.size();
  }

  void advance_to(size_t to) {
    for (; pos_ < to && pos_ < src_.size(); ++pos_)
      if (src_[pos_] == '\n') ++line_;
  }

  // After a tag: '-' strips all following whitespace; trim_blocks drops one
  // newline after block tags and comments ('+' disables that).
  void after_tag(char modifier, bool is_block) {
    if (modifier == '-') {
      size_t p = pos_;
      while (p < src_.size() && is_ws(src_[p])) ++p;
      advance_to(p);
    } else if (is_block && options_.trim_blocks && modifier != '+' && pos_ < src_.size() && src_[pos_] == '\n') {
      advance_to(pos_ + 1);
    }
  }

  void lex_comment() {
    const int start_line = line_;
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) throw TemplateError(start_line, "unterminated comment");
    const char modifier = end > pos_ && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : '\0';
    advance_to(end + 2);
    after_tag(modifier, true);
  }

  void lex_tag(bool is_block) {
    const int start_line = line_;
    tokens_.push_back({is_block ? TokenType::BlockBegin : TokenType::VarBegin, "", line_});
    const size_t first_token = tokens_.size();
    int depth = 0;
    while (true) {
      while (pos_ < src_.size() && is_ws(src_[pos_])) advance_to(pos_ + 1);
      if (pos_ >= src_.size())
        throw TemplateError(start_line, std::string("unexpected end of template, expected '") +
                                            (is_block ? "%}" : "}}") + "'");
      if (depth == 0) {
        const char* close = is_block ? "%}" : "}}";
        for (const char modifier : {'-', '+', '\0'}) {
          const std::string end = modifier ? std::string(1, modifier) + close : std::string(close);
          if (src_.compare(pos_, end.size(), end) == 0 && !(modifier == '+' && !is_block)) {
            advance_to(pos_ + end.size());
            tokens_.push_back({is_block ? TokenType::BlockEnd : TokenType::VarEnd, "", line_});
            after_tag(modifier, is_block);
            if (is_block && tokens_.size() == first_token + 2 && tokens_[first_token].text == "raw" &&
                tokens_[first_token].type == TokenType::Name)
              lex_raw(start_line, first_token);
            return;
          }
        }
      }
      lex_expression_token(depth);
    }
  }

  // {% raw %}...{% endraw %}: the text in between is data, verbatim.
  void lex_raw(int start_line, size_t first_token) {
    tokens_.resize(first_token - 1);  // drop the raw tag itself
    size_t search = pos_;
    while (true) {
      const size_t open = src_.find("{%", search);
      if (open == std::string::npos) throw TemplateError(start_line, "missing {% endraw %}");
      size_t p = open + 2;
      const bool strip_before = p < src_.size() && src_[p] == '-';
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
      while (p < src_.size() && is_ws(src_[p])) ++p;
      if (src_.compare(p, 6, "endraw") != 0) {
        search = open + 2;
        continue;
      }
      p += 6;
      while (p < src_.size() && is_ws(src_[p])) ++p;
      char modifier = '\0';
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) modifier = src_[p++];
      if (src_.compare(p, 2, "%}") != 0) throw TemplateError(line_, "malformed {% endraw %}");
      std::string data = src_.substr(pos_, open - pos_);
      if (strip_before)
        while (!data.empty() && is_ws(data.back())) data.pop_back();
      const int data_line = line_;
      advance_to(p + 2);
      if (!data.empty()) tokens_.push_back({TokenType::Data, std::move(data), data_line});
      after_tag(modifier, true);
      return;
    }
  }

  void lex_expression_token(int& depth) {
    const char c = src_[pos_];
    const int line = line_;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = pos_;
      while (end < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[end])) || src_[end] == '_')) ++end;
      tokens_.push_back({TokenType::Name, src_.substr(pos_, end - pos_), line});
      advance_to(end);
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t end = pos_;
      bool is_float = false;
      auto digits = [&] {
        while (end < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[end])) || src_[end] == '_')) ++end;
      };
      digits();
      if (end + 1 < src_.size() && src_[end] == '.' && std::isdigit(static_cast<unsigned char>(src_[end + 1]))) {
        is_float = true;
        ++end;
        digits();
      }
      if (end < src_.size() && (src_[end] == 'e' || src_[end] == 'E')) {
        size_t e = end + 1;
        if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
        if (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) {
          is_float = true;
          end = e;
          digits();
        }
      }
      std::string text;
      for (size_t k = pos_; k < end; ++k)
        if (src_[k] != '_') text += src_[k];
      tokens_.push_back({is_float ? TokenType::Float : TokenType::Integer, text, line});
      advance_to(end);
      return;
    }
    if (c == '\'' || c == '"') {
      size_t end = pos_ + 1;
      while (end < src_.size() && src_[end] != c) end += src_[end] == '\\' ? 2 : 1;
      if (end >= src_.size()) throw TemplateError(line, "unterminated string literal");
      std::string body;
      try {
        body = unescape(std::string_view(src_).substr(pos_ + 1, end - pos_ - 1));
      } catch (const TemplateError& e) {
        throw TemplateError(line, e.message());
      }
      tokens_.push_back({TokenType::String, std::move(body), line});
      advance_to(end + 1);
      return;
    }
    static const char* const kTwoChar[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* op : kTwoChar) {
      if (src_.compare(pos_, 2, op) == 0) {
        tokens_.push_back({TokenType::Operator, op, line});
        advance_to(pos_ + 2);
        return;
      }
    }
    if (std::strchr("+-*/%~<>=()[]{},.:|;", c) != nullptr) {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      tokens_.push_back({TokenType::Operator, std::string(1, c), line});
      advance_to(pos_ + 1);
      return;
    }
    throw TemplateError(line, std::string("unexpected character '") + c + "'");
  }

  std::string src_;
  Options options_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const Options& options) {
  return Lexer(source, options).run();
}

}  // namespace seatrt::text::jinja
