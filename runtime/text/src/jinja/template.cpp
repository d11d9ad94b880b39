#include "seatrt/text/jinja/template.hpp"

#include "interpreter.hpp"
#include "lexer.hpp"
#include "parser.hpp"

namespace seatrt::text::jinja {

Template::Template(std::string_view source, Options options) : root_(parse(tokenize(source, options))) {}
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

std::string Template::render(const Dict& variables, const Limits& limits) const {
  Interpreter interpreter(limits);
  try {
    return interpreter.render(*root_, variables);
  } catch (const TemplateError&) {
    throw;
  } catch (const std::exception& e) {
    throw TemplateError(0, e.what());
  }
}

}  // namespace seatrt::text::jinja
