// Python str operations the filters and methods share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace seatrt::text::jinja::py {

bool is_space(char32_t cp);  // str.isspace()
// str.strip / lstrip / rstrip; `chars` empty with has_chars=false = whitespace.
std::string strip(std::string_view s, bool left, bool right, const std::string* chars);
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);
std::string capitalize(std::string_view s);
// str.split(sep, maxsplit): sep == nullptr splits on whitespace runs.
std::vector<std::string> split(std::string_view s, const std::string* sep, int64_t maxsplit);
std::string replace(std::string_view s, std::string_view from, std::string_view to, int64_t count);
std::string html_escape(std::string_view s);

}  // namespace seatrt::text::jinja::py
