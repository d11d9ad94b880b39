#include "schema_checks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace seatrt::parsers::gemma4 {
namespace {

using nlohmann::json;

// Assertions no Matcher state can enforce.
constexpr const char* kUnenforced[] = {"pattern",          "multipleOf",       "not",          "if",
                                       "then",             "else",             "prefixItems",  "contains",
                                       "minContains",      "maxContains",      "dependentRequired",
                                       "dependentSchemas", "dependencies",     "propertyNames",
                                       "$dynamicRef",      "$recursiveRef"};

// The keywords that assert something about a value (everything else --
// title, description, default, examples, format, $defs, ... -- annotates).
constexpr const char* kAssertions[] = {
    "type",          "enum",          "const",           "properties",       "required",
    "additionalProperties", "patternProperties", "items", "minItems",       "maxItems",
    "minLength",     "maxLength",     "minimum",         "maximum",          "exclusiveMinimum",
    "exclusiveMaximum", "minProperties", "maxProperties", "unevaluatedProperties",
    "unevaluatedItems", "additionalItems", "$ref", "anyOf", "oneOf", "allOf"};

constexpr const char* kCombinators[] = {"$ref", "anyOf", "oneOf", "allOf"};
constexpr const char* kCounts[] = {"minItems", "maxItems", "minLength", "maxLength", "minProperties",
                                   "maxProperties"};

// `true` and `{}` permit everything: beside a combinator they change nothing.
bool permits_all(const json& v) { return (v.is_boolean() && v.get<bool>()) || (v.is_object() && v.empty()); }

// A finite double with no fraction (tested without converting it to an
// integer type, which is undefined past that type's range).
bool is_integral(double d) { return std::isfinite(d) && std::floor(d) == d; }

size_t code_points(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool has_type(const json& v, const std::string& t) {
  if (t == "integer") return v.is_number_integer() || (v.is_number_float() && is_integral(v.get<double>()));
  if (t == "number") return v.is_number();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  return false;
}

}  // namespace

void refuse_unenforced(const json& schema) {
  for (const char* key : kUnenforced) {
    if (schema.contains(key))
      throw std::invalid_argument(std::string("the schema keyword '") + key +
                                  "' cannot be enforced by constrained decoding; remove it (and check the "
                                  "output yourself) or send the request without a forced schema");
  }
  if (auto u = schema.find("uniqueItems"); u != schema.end() && u->is_boolean() && u->get<bool>())
    throw std::invalid_argument("the schema keyword 'uniqueItems' cannot be enforced by constrained decoding; "
                                "remove it (and check the output yourself)");
  // Keys matching a pattern would have to meet its schema: no regex here
  // (a pattern whose schema permits everything asks nothing).
  if (auto p = schema.find("patternProperties"); p != schema.end()) {
    const bool asks = !p->is_object() || std::any_of(p->begin(), p->end(), [](const json& s) { return !permits_all(s); });
    if (asks)
      throw std::invalid_argument("the schema keyword 'patternProperties' cannot be enforced by constrained "
                                  "decoding; declare the keys in 'properties'");
  }
}

void refuse_combinator_siblings(const json& schema) {
  for (const char* combinator : kCombinators) {
    if (!schema.contains(combinator)) continue;
    for (const char* key : kAssertions) {
      if (std::string_view(key) == combinator) continue;
      auto it = schema.find(key);
      if (it == schema.end() || permits_all(*it)) continue;
      throw std::invalid_argument(std::string("the schema keyword '") + key + "' beside '" + combinator +
                                  "' cannot be enforced: constrained decoding follows '" + combinator +
                                  "' alone; move '" + key + "' into it (into each alternative)");
    }
  }
}

void check_counts(const json& schema) {
  for (const char* key : kCounts) {
    auto it = schema.find(key);
    if (it == schema.end()) continue;
    const bool integral =
        it->is_number_unsigned() || (it->is_number_float() && it->get<double>() >= 0 && is_integral(it->get<double>()));
    if (!integral) throw std::invalid_argument(std::string("'") + key + "' must be a non-negative integer, not " + it->dump());
  }
  for (const auto& [lo, hi] : {std::pair{"minItems", "maxItems"}, std::pair{"minLength", "maxLength"},
                               std::pair{"minProperties", "maxProperties"}}) {
    if (schema.contains(lo) && schema.contains(hi) && count_of(schema, lo, 0) > count_of(schema, hi, 0))
      throw std::invalid_argument(std::string("'") + lo + "' " + schema[lo].dump() + " is above '" + hi + "' " +
                                  schema[hi].dump() + ": no value fits");
  }
}

uint32_t count_of(const json& schema, const char* key, uint32_t fallback) {
  auto it = schema.find(key);
  if (it == schema.end() || !it->is_number()) return fallback;
  const double v = it->get<double>();
  if (!(v > 0)) return 0;  // (check_counts refuses negatives; never convert one)
  return v >= static_cast<double>(std::numeric_limits<uint32_t>::max()) ? std::numeric_limits<uint32_t>::max()
                                                                         : static_cast<uint32_t>(v);
}

bool enum_value_fits(const json& value, const json& schema) {
  if (auto t = schema.find("type"); t != schema.end()) {
    bool ok = false;
    if (t->is_string()) ok = has_type(value, t->get<std::string>());
    if (t->is_array())
      for (const json& one : *t) ok = ok || (one.is_string() && has_type(value, one.get<std::string>()));
    if (!ok) return false;
  }
  if (value.is_number()) {
    const double x = value.get<double>();
    const auto bound = [&](const char* key, double& out) {
      auto it = schema.find(key);
      if (it == schema.end() || !it->is_number()) return false;
      out = it->get<double>();
      return true;
    };
    // Draft 4 marks minimum/maximum exclusive with booleans.
    const auto flag = [&](const char* key) {
      auto it = schema.find(key);
      return it != schema.end() && it->is_boolean() && it->get<bool>();
    };
    double b = 0;
    if (bound("minimum", b) && (flag("exclusiveMinimum") ? x <= b : x < b)) return false;
    if (bound("maximum", b) && (flag("exclusiveMaximum") ? x >= b : x > b)) return false;
    if (bound("exclusiveMinimum", b) && x <= b) return false;
    if (bound("exclusiveMaximum", b) && x >= b) return false;
  }
  if (value.is_string()) {
    const size_t n = code_points(value.get<std::string>());
    if (schema.contains("minLength") && n < count_of(schema, "minLength", 0)) return false;
    if (schema.contains("maxLength") && n > count_of(schema, "maxLength", 0)) return false;
  }
  return true;
}

}  // namespace seatrt::parsers::gemma4
