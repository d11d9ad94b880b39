// Jinja parser: tokens -> syntax tree.  Recursion is bounded (deeply nested
// input is a TemplateError, not a stack overflow).
#pragma once

#include <vector>

#include "ast.hpp"
#include "lexer.hpp"

namespace seatrt::text::jinja {

// Throws TemplateError (with line) on syntax errors and unknown filters/tests.
NodePtr parse(const std::vector<Token>& tokens);

}  // namespace seatrt::text::jinja
