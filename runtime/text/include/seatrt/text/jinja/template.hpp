// A Jinja template engine of our own, rendering byte-identically to Python
// jinja2 configured as Hugging Face transformers configures it for chat
// templates (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks,
// loopcontrols, json.dumps-style tojson, raise_exception).
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "seatrt/text/jinja/value.hpp"

namespace seatrt::text::jinja {

// Any template problem: syntax, unknown filter/test, a runtime error or
// raise_exception().  Carries the template line (1-based; 0 if unknown).
class TemplateError : public std::runtime_error {
 public:
  TemplateError(int line, const std::string& message)
      : std::runtime_error("template line " + std::to_string(line) + ": " + message),
        line_(line),
        message_(message) {}
  int line() const { return line_; }
  const std::string& message() const { return message_; }

 private:
  int line_;
  std::string message_;
};

struct Options {
  bool trim_blocks = true;   // drop the first newline after a block tag
  bool lstrip_blocks = true; // strip spaces/tabs before a block tag on its line
  bool keep_trailing_newline = false;
};

struct Node;

// Limits that keep hostile templates from exhausting the process.
struct Limits {
  size_t max_output_bytes = 64u << 20;
  int max_call_depth = 200;           // nested macro calls
  uint64_t max_steps = 20'000'000;    // statements + loop iterations
};

class Template {
 public:
  // Parses; throws TemplateError (with line) on a syntax error or an
  // unknown filter or test.
  explicit Template(std::string_view source, Options options = {});
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // Renders with `variables` as the global context (plus the built-in
  // globals range, namespace, raise_exception, dict, strftime_now).
  std::string render(const Dict& variables, const Limits& limits = {}) const;

 private:
  std::shared_ptr<const Node> root_;
};

}  // namespace seatrt::text::jinja
