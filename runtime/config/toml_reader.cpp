// Typed reading of TOML tables with positions in every message.
#include <cmath>
#include <sstream>

#include "seatrt/host/edit_distance.hpp"
#include "seatrt/host/status.hpp"
#include "toml_reader.hpp"

namespace seatrt::host::detail {

std::string where(const std::string& file, const toml::node& node) {
  const auto& begin = node.source().begin;
  if (begin.line == 0) return file + ": ";
  return file + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) + ": ";
}

const char* toml_type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::none: return "nothing";
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
  }
  return "unknown";
}

std::string to_toml_text(const toml::table& table) {
  std::ostringstream out;
  out << table;
  return out.str();
}

TableReader::TableReader(const toml::table& table, std::string prefix, std::string file)
    : table_(table), prefix_(std::move(prefix)), file_(std::move(file)) {}

std::string TableReader::dotted(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "." + key;
}

void TableReader::fail(const std::string& key, const std::string& message) const {
  const toml::node* n = table_.get(key);
  const std::string at = n ? where(file_, *n) : where(file_, table_);
  throw Error(SEATRT_ERR_INVALID_ARG, at + "'" + dotted(key) + "': " + message);
}

void TableReader::wrong_type(const std::string& key, const toml::node& n,
                             const char* expected) const {
  throw Error(SEATRT_ERR_INVALID_ARG, where(file_, n) + "'" + dotted(key) + "' must be " +
                                          expected + ", found " + toml_type_name(n.type()));
}

const toml::node* TableReader::node(const std::string& key) {
  known_.push_back(key);
  return table_.get(key);
}

std::optional<std::string> TableReader::string(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_string()) wrong_type(key, *n, "a string");
  return n->as_string()->get();
}

std::optional<int64_t> TableReader::integer(const std::string& key, int64_t min, int64_t max) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_integer()) wrong_type(key, *n, "an integer");
  const int64_t v = n->as_integer()->get();
  if (v < min || v > max)
    fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                  ", found " + std::to_string(v));
  return v;
}

std::optional<double> TableReader::number(const std::string& key, double min_exclusive) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  double v;
  if (n->is_floating_point()) v = n->as_floating_point()->get();
  else if (n->is_integer()) v = static_cast<double>(n->as_integer()->get());
  else wrong_type(key, *n, "a number");
  if (!(v > min_exclusive))  // also refuses NaN
    fail(key, "must be greater than " + std::to_string(min_exclusive));
  if (!std::isfinite(v)) fail(key, "must be finite");
  return v;
}

std::optional<bool> TableReader::boolean(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean()) wrong_type(key, *n, "a boolean");
  return n->as_boolean()->get();
}

std::optional<std::vector<std::string>> TableReader::strings(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_array()) wrong_type(key, *n, "an array of strings");
  std::vector<std::string> out;
  for (const toml::node& item : *n->as_array()) {
    if (!item.is_string())
      throw Error(SEATRT_ERR_INVALID_ARG, where(file_, item) + "'" + dotted(key) +
                                              "' must be an array of strings, found an element "
                                              "of type " + toml_type_name(item.type()));
    out.push_back(item.as_string()->get());
  }
  return out;
}

const toml::table* TableReader::table(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return nullptr;
  if (!n->is_table()) wrong_type(key, *n, "a table");
  return n->as_table();
}

void TableReader::reject_unknown_keys() const {
  for (const auto& [key, value] : table_) {
    const std::string name(key.str());
    bool known = false;
    for (const auto& k : known_) known = known || k == name;
    if (known) continue;
    std::string message = where(file_, value) + "unknown key '" + dotted(name) + "'";
    const std::string suggestion = closest_match(name, known_);
    if (!suggestion.empty()) {
      message += " (did you mean '" + dotted(suggestion) + "'?)";
    } else {
      std::string valid;
      for (const auto& k : known_) valid += (valid.empty() ? "" : ", ") + k;
      message += " (valid keys here: " + valid + ")";
    }
    throw Error(SEATRT_ERR_INVALID_ARG, message);
  }
}

}  // namespace seatrt::host::detail
