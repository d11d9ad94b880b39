// Internal to seatrt_config: typed, position-aware reading of one TOML table
// that remembers which keys the schema knows, so that every other key is
// reported as unknown with the closest known one suggested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace seatrt::host::detail {

// "file:line:column: " for a node (or "file: " when it has no position).
std::string where(const std::string& file, const toml::node& node);

// "string", "integer", ... for messages.
const char* toml_type_name(toml::node_type type);

// A TOML table (or subtree) as a TOML document, for a plugin.
std::string to_toml_text(const toml::table& table);

class TableReader {
 public:
  // `prefix` is the table's dotted name ("server"; "" for the root).
  TableReader(const toml::table& table, std::string prefix, std::string file);

  // Each getter declares `key` known; absent keys give nullopt / nullptr;
  // a present key of another type throws Error naming key, expected and
  // found type with its position.
  std::optional<std::string> string(const std::string& key);
  std::optional<int64_t> integer(const std::string& key, int64_t min, int64_t max);
  std::optional<double> number(const std::string& key, double min_exclusive);  // int or float
  std::optional<bool> boolean(const std::string& key);
  std::optional<std::vector<std::string>> strings(const std::string& key);
  const toml::table* table(const std::string& key);

  // Throws Error for the first key the getters did not declare.
  void reject_unknown_keys() const;

  // Throws Error (at the key's position) with `message` about `key`.
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  std::string dotted(const std::string& key) const;
  const std::string& file() const { return file_; }

 private:
  const toml::node* node(const std::string& key);
  [[noreturn]] void wrong_type(const std::string& key, const toml::node& n,
                               const char* expected) const;

  const toml::table& table_;
  std::string prefix_;
  std::string file_;
  std::vector<std::string> known_;
};

}  // namespace seatrt::host::detail
