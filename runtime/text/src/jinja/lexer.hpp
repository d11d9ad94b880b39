// Jinja lexer: template source -> tokens, applying jinja2's whitespace rules
// (newline normalisation, trailing newline, '-'/'+' modifiers, trim_blocks,
// lstrip_blocks) so the parser only sees the text that will be output.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seatrt/text/jinja/template.hpp"

namespace seatrt::text::jinja {

enum class TokenType { Data, BlockBegin, BlockEnd, VarBegin, VarEnd, Name, String, Integer, Float, Operator, End };

struct Token {
  TokenType type;
  std::string text;  // data text, name, unescaped string, number text, operator
  int line;
};

// Throws TemplateError for unterminated tags, strings or comments.
std::vector<Token> tokenize(std::string_view source, const Options& options);

}  // namespace seatrt::text::jinja
