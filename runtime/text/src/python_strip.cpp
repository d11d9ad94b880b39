#include "seatrt/text/python_strip.hpp"

#include "jinja/strings.hpp"

namespace seatrt::text {

std::string python_strip(std::string_view s, bool left, bool right) { return jinja::py::strip(s, left, right, nullptr); }

}  // namespace seatrt::text
