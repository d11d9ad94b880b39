// JSON text output: string escaping as Python's json.dumps(ensure_ascii=False)
// does, and the typing of Gemma-4's bare (unquoted) argument values.
#pragma once

#include <string>
#include <string_view>

namespace seatrt::parsers::gemma4 {

// Appends `text` (valid UTF-8) escaped for the inside of a JSON string.
void append_json_escaped(std::string& out, std::string_view text);

// True if `text` is a number in JSON's grammar.
bool is_json_number(std::string_view text);

// The JSON for a bare native value (already trimmed): true/false/null and
// JSON numbers as they are; anything else becomes a JSON string.
std::string bare_value_to_json(std::string_view text);

}  // namespace seatrt::parsers::gemma4
