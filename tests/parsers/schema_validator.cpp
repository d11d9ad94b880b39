#include "schema_validator.hpp"

namespace seatrt::parsers::test {
namespace {

using nlohmann::json;

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  return false;
}

}  // namespace

std::optional<std::string> validate(const json& v, const json& s, const json& root) {
  if (s.is_boolean()) return s.get<bool>() ? std::nullopt : std::optional<std::string>("schema false");
  if (s.contains("$ref")) {
    const std::string ref = s["$ref"];
    const std::string prefix = ref.rfind("#/$defs/", 0) == 0 ? "$defs" : "definitions";
    const std::string name = ref.substr(ref.find('/', 2) + 1);
    return validate(v, root.at(prefix).at(name), root);
  }
  if (s.contains("enum")) {
    bool found = false;
    for (const auto& e : s["enum"]) found = found || e == v;
    if (!found) return "not in enum: " + v.dump();
  }
  if (s.contains("const") && s["const"] != v) return "not the const: " + v.dump();
  if (s.contains("anyOf")) {
    bool any = false;
    for (const auto& alt : s["anyOf"]) any = any || !validate(v, alt, root);
    if (!any) return "matches no anyOf branch: " + v.dump();
  }
  if (s.contains("oneOf")) {
    int n = 0;
    for (const auto& alt : s["oneOf"]) n += !validate(v, alt, root);
    if (n != 1) return "matches " + std::to_string(n) + " oneOf branches: " + v.dump();
  }
  if (s.contains("allOf")) {
    for (const auto& part : s["allOf"]) {
      if (auto e = validate(v, part, root)) return e;
    }
  }
  if (s.contains("type")) {
    bool ok = false;
    if (s["type"].is_string()) {
      ok = has_type(v, s["type"]);
    } else {
      for (const auto& t : s["type"]) ok = ok || has_type(v, t);
    }
    if (!ok) return "wrong type: " + v.dump() + " for " + s["type"].dump();
  }
  if (v.is_object()) {
    const json props = s.value("properties", json::object());
    for (const auto& r : s.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) return "missing required " + r.dump();
    }
    for (const auto& [k, item] : v.items()) {
      if (props.contains(k)) {
        if (auto e = validate(item, props[k], root)) return k + ": " + *e;
      } else if (s.contains("additionalProperties") && s["additionalProperties"] == false) {
        return "unexpected key " + k;
      }
    }
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return "too few items";
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return "too many items";
    if (s.contains("items")) {
      for (const auto& item : v) {
        if (auto e = validate(item, s["items"], root)) return "item: " + *e;
      }
    }
  }
  if (v.is_string() && s.contains("maxLength") && code_points(v.get<std::string>()) > s["maxLength"].get<size_t>()) {
    return "string too long";
  }
  if (v.is_string() && s.contains("minLength") && code_points(v.get<std::string>()) < s["minLength"].get<size_t>()) {
    return "string too short";
  }
  if (v.is_number()) {
    // As JSON readers compare: the value and the bounds as doubles.
    const double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) return "below minimum: " + v.dump();
    if (s.contains("maximum") && x > s["maximum"].get<double>()) return "above maximum: " + v.dump();
    if (s.contains("exclusiveMinimum") && s["exclusiveMinimum"].is_number() &&
        x <= s["exclusiveMinimum"].get<double>())
      return "not above exclusiveMinimum: " + v.dump();
    if (s.contains("exclusiveMaximum") && s["exclusiveMaximum"].is_number() &&
        x >= s["exclusiveMaximum"].get<double>())
      return "not below exclusiveMaximum: " + v.dump();
  }
  return std::nullopt;
}

}  // namespace seatrt::parsers::test
