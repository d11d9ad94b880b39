// The Jinja engine on small templates against Python jinja2
// (tests/fixtures/templates/snippets.json, tools/text/render_oracles.py), its
// error reports (line + message) and its limits on hostile templates.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "seatrt/text/chat_template.hpp"
#include "seatrt/text/jinja/template.hpp"

using namespace seatrt::text;
using namespace seatrt::text::jinja;
using namespace seatrt::text::testing;

namespace {
Dict vars_of(const nlohmann::ordered_json& j) {
  Dict d;
  for (const auto& [k, v] : j.items()) d.emplace_back(k, to_value(v));
  return d;
}

std::string render(const std::string& source, const Dict& vars = {}, const Limits& limits = {}) {
  return Template(source).render(vars, limits);
}

// The TemplateError a template raises (parsing or rendering).
TemplateError error_of(const std::string& source, const Dict& vars = {}, const Limits& limits = {}) {
  try {
    render(source, vars, limits);
  } catch (const TemplateError& e) {
    return e;
  }
  FAIL("no error from: " << source);
  return TemplateError(0, "");
}
}  // namespace

TEST_CASE("jinja: snippets render exactly as jinja2 and jinja2 failures fail here too") {
  const auto snippets = nlohmann::ordered_json::parse(read_fixture("templates/snippets.json"));
  REQUIRE(snippets.size() > 60);
  for (const auto& s : snippets) {
    const std::string source = s["template"];
    INFO("template: " << source);
    const Dict vars = vars_of(s["vars"]);
    if (s.contains("expected")) {
      CHECK(render(source, vars) == s["expected"].get<std::string>());
    } else {
      const TemplateError e = error_of(source, vars);
      CHECK(e.line() >= 1);
      if (s["raised"].get<bool>()) CHECK(e.message() == s["error"].get<std::string>());
    }
  }
}

TEST_CASE("jinja: errors carry the template line and the message") {
  const TemplateError syntax = error_of("line 1\nline 2\n{% if %}\n");
  CHECK(syntax.line() == 3);
  CHECK_THAT(syntax.what(), Catch::Contains("template line 3:"));

  const TemplateError filter = error_of("a\n\n\n{{ x | frobnicate }}");
  CHECK(filter.line() == 4);
  CHECK(filter.message() == "No filter named 'frobnicate'.");

  const TemplateError test = error_of("{{ x is frobnicated }}");
  CHECK(test.message() == "No test named 'frobnicated'.");

  const TemplateError raised = error_of("ok\n{% if true %}\n  {{ raise_exception('Roles must alternate') }}\n{% endif %}");
  CHECK(raised.line() == 3);
  CHECK(raised.message() == "Roles must alternate");

  const TemplateError unclosed = error_of("{% for x in y %}\n{{ x }}\n");
  CHECK_THAT(unclosed.message(), Catch::Contains("endfor"));

  const TemplateError undefined = error_of("\n{{ user.name }}");
  CHECK(undefined.line() == 2);
  CHECK(undefined.message() == "'user' is undefined");

  const TemplateError in_macro = error_of("{% macro m() %}\n{{ 1 / 0 }}\n{% endmacro %}\n{{ m() }}");
  CHECK(in_macro.line() == 2);
  CHECK(in_macro.message() == "division by zero");
}

TEST_CASE("jinja: hostile templates hit limits, not the stack or the clock") {
  // Deep nesting in the source.
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "(";
  deep = "{{ " + deep + "1" + std::string(5000, ')') + " }}";
  CHECK_THAT(error_of(deep).message(), Catch::Contains("too deep"));
  std::string deep_ifs;
  for (int i = 0; i < 1000; ++i) deep_ifs += "{% if true %}";
  CHECK_THAT(error_of(deep_ifs).message(), Catch::Contains("too deep"));
  // Unbounded recursion.
  CHECK_THAT(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").message(), Catch::Contains("recursion"));
  // Quadratic loops and huge outputs.
  Limits small;
  small.max_steps = 100000;
  CHECK_THAT(error_of("{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}{% endfor %}", {}, small).message(),
             Catch::Contains("execution budget"));
  small.max_output_bytes = 1000;
  CHECK_THAT(error_of("{% for a in range(10000) %}xxxxxxxx{% endfor %}", {}, small).message(), Catch::Contains("output exceeds"));
  CHECK_THAT(error_of("{{ 'x' * 100000000000 }}").message(), Catch::Contains("too large"));
  CHECK_THAT(error_of("{{ 2 ** 100 }}").message(), Catch::Contains("overflow"));
  CHECK(render("{{ 1 ** 1000000000000 }}") == "1");
  // Garbage never crashes: every prefix of a real template either renders or errors.
  const std::string gemma = read_fixture("templates/gemma4_chat_template.jinja");
  Dict vars = vars_of(nlohmann::ordered_json::parse(R"({"messages": [{"role": "user", "content": "Hi"}]})"));
  size_t errors = 0;
  for (size_t n = 0; n < gemma.size(); n += 211) {
    try {
      Template(gemma.substr(0, n)).render(vars);
    } catch (const TemplateError&) {
      ++errors;
    }
  }
  CHECK(errors > 0);
}

TEST_CASE("jinja: values print as Python prints them") {
  CHECK(float_repr(0.1) == "0.1");
  CHECK(float_repr(1e16) == "1e+16");
  CHECK(float_repr(1234567890123456.0) == "1234567890123456.0");
  CHECK(float_repr(1e-5) == "1e-05");
  CHECK(float_repr(0.0001) == "0.0001");
  CHECK(float_repr(-2.5) == "-2.5");
  CHECK(float_repr(5e-324) == "5e-324");
  CHECK(float_repr(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(to_repr(Value::from_list({Value::string("a'b")}, true)) == "(\"a'b\",)");
}
