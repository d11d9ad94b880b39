// What a JSON schema asks that the grammar (grammar.cpp) cannot give, found
// before it compiles, so that a request is refused with a 400 naming the
// keyword instead of being served output that breaks its schema:
// assertion keywords the Matcher has no way to enforce, counts that are not
// non-negative integers or contradict each other, and assertions beside a
// combinator ($ref, anyOf, oneOf, allOf) that the grammar would drop
// because it follows the combinator alone.  Also the filter that keeps an
// enum's values to those its sibling keywords allow.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace seatrt::parsers::gemma4 {

// Each throws std::invalid_argument naming the keyword.
void refuse_unenforced(const nlohmann::json& schema);
void refuse_combinator_siblings(const nlohmann::json& schema);
// minItems <= maxItems and minLength <= maxLength, each a non-negative
// integer when present.
void check_counts(const nlohmann::json& schema);

// A count keyword's value (checked by check_counts), or `fallback`; values
// past UINT32_MAX saturate.
uint32_t count_of(const nlohmann::json& schema, const char* key, uint32_t fallback);

// Whether an enum/const `value` also meets the schema's other keywords that
// apply to it: type, the numeric bounds (compared as doubles, as JSON
// validators read them) and the string lengths (in code points).
bool enum_value_fits(const nlohmann::json& value, const nlohmann::json& schema);

}  // namespace seatrt::parsers::gemma4
