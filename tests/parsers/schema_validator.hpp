// A small JSON-schema validator for the constrained-decoding tests, written
// separately from the grammar it checks (plugins/parsers-gemma4/src/grammar.cpp)
// so that a bug in one is not mirrored in the other.  Covers the keywords
// the test schemas use.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace seatrt::parsers::test {

// nullopt when `value` satisfies `schema` ($ref resolved against `root`),
// else a description of the first violation.
std::optional<std::string> validate(const nlohmann::json& value, const nlohmann::json& schema,
                                    const nlohmann::json& root);

}  // namespace seatrt::parsers::test
