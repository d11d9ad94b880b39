// Python's str.strip() / lstrip() / rstrip() on UTF-8 text, whitespace as
// str.isspace() reads it (ASCII, U+0085, U+00A0, U+2000-U+200A, U+2028,
// U+3000, ...): for code that must treat text as a Python reference does
// (the chat template's `trim`, transformers' continue_final_message).
#pragma once

#include <string>
#include <string_view>

namespace seatrt::text {

std::string python_strip(std::string_view s, bool left = true, bool right = true);

}  // namespace seatrt::text
