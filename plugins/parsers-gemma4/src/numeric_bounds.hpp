// Range keywords of a JSON schema number or integer (minimum, maximum,
// exclusiveMinimum, exclusiveMaximum) as the Matcher enforces them digit by
// digit: a digit is offered only if some completion of the number with it
// lies within the range, and the number may end only inside it.
//
// Exact fixed-point arithmetic: a value is held as value * 10^16 in a
// 128-bit integer, so decimal bounds such as 0.1 compare exactly as decimals
// (the bound is read from its shortest round-trip decimal, the text a schema
// writer wrote, and rounded inward past 16 fraction digits: stricter, never
// looser).  Bounded numbers are written without an exponent, with at most 18
// integer and 16 fraction digits: every value in range with that many digits
// stays writable, and a JSON reader's correctly rounded parse of the output
// keeps its order against the bound's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace seatrt::parsers::gemma4 {

__extension__ typedef __int128 Fixed;  // value * kFixedOne

inline constexpr Fixed kFixedOne = 10'000'000'000'000'000;  // 10^16
inline constexpr uint32_t kBoundedIntDigits = 18;
inline constexpr uint32_t kBoundedFracDigits = 16;

struct NumberBounds {
  bool has_lo = false, has_hi = false;
  Fixed lo = 0, hi = 0;  // inclusive, in units of 10^-16
  bool any() const { return has_lo || has_hi; }
};

// The digits of a number written so far.
struct NumberPrefix {
  bool negative = false;
  uint64_t int_part = 0;
  uint32_t int_digits = 0;  // 0: none yet (only the sign, or nothing)
  uint64_t frac = 0;
  uint32_t frac_digits = 0;
  bool dot = false;
};

// The bounds of `schema` (an object) for an integer or number; nothing set
// when it has none.  Throws std::invalid_argument naming the keyword for a
// bound that is not a number, and when no value fits (an empty range, or
// one whose values all need more digits than `max_digits`).
NumberBounds read_bounds(const nlohmann::json& schema, bool integer, uint32_t max_digits);

// Whether some completion of `p` (at most `max_digits` digits in all, no
// fraction when `integer`) lies within `b`.
bool bounds_reachable(const NumberBounds& b, const NumberPrefix& p, uint32_t max_digits, bool integer);

// Whether the number written as `p` lies within `b`.
bool bounds_contain(const NumberBounds& b, const NumberPrefix& p);

}  // namespace seatrt::parsers::gemma4
