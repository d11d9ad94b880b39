#include "numeric_bounds.hpp"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace seatrt::parsers::gemma4 {
namespace {

using nlohmann::json;

// Past every value a bounded number can be written as (< 10^18 * 10^16).
constexpr Fixed kHuge = kFixedOne * kFixedOne * 1'000'000;  // 10^38

Fixed pow10(uint32_t n) {
  Fixed r = 1;
  while (n-- > 0) r *= 10;
  return r;
}

// floor(v * 10^16) for the decimal text of a JSON number, and whether it is
// exact; saturated at +-kHuge.
struct Scaled {
  Fixed floor;
  bool exact;
};

Scaled scale(const json& v) {
  const std::string text = v.dump();  // shortest round-trip decimal for a double
  size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  Fixed mantissa = 0;
  int digits = 0, exponent = 0;  // value = mantissa * 10^exponent
  bool seen_dot = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      seen_dot = true;
      continue;
    }
    if (mantissa == 0 && text[i] == '0') {
      if (seen_dot) --exponent;
      continue;
    }
    if (digits < 36) {
      mantissa = mantissa * 10 + (text[i] - '0');
      ++digits;
      if (seen_dot) --exponent;
    } else if (!seen_dot) {
      ++exponent;  // a digit past 36 significant ones: only the first 36 count
    }
  }
  if (i < text.size()) exponent += std::stoi(text.substr(i + 1));
  const int p = exponent + 16;  // scaled = mantissa * 10^p
  Scaled s{0, true};
  if (mantissa == 0) return s;
  if (p >= 0) {
    s.floor = digits + p > 37 ? kHuge : std::min(mantissa * pow10(static_cast<uint32_t>(p)), kHuge);
  } else if (-p > 37) {
    s.floor = 0;
    s.exact = false;
  } else {
    const Fixed d = pow10(static_cast<uint32_t>(-p));
    s.floor = mantissa / d;
    s.exact = mantissa % d == 0;
  }
  if (negative) {
    s.floor = -s.floor;
    if (!s.exact) s.floor -= 1;  // floor of a negative non-integer
  }
  return s;
}

const json* number_keyword(const json& schema, const char* key) {
  auto it = schema.find(key);
  if (it == schema.end()) return nullptr;
  if (!it->is_number()) throw std::invalid_argument(std::string("'") + key + "' must be a number");
  return &*it;
}

// Whether a value of the grid {a + k g : 0 <= k < w / g} lies in [lo, hi].
bool grid_meets(Fixed a, Fixed w, Fixed g, Fixed lo, Fixed hi) {
  const Fixed from = std::max(a, lo), to = std::min(a + w - g, hi);
  if (from > to) return false;
  const Fixed k = (from - a + g - 1) / g;
  return a + k * g <= to;
}

std::string fixed_text(Fixed v) {
  const bool negative = v < 0;
  if (negative) v = -v;
  std::string frac;
  Fixed ip = v / kFixedOne, fp = v % kFixedOne;
  for (int i = 0; i < 16; ++i, fp /= 10) frac.insert(frac.begin(), static_cast<char>('0' + static_cast<int>(fp % 10)));
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  std::string whole;
  do {
    whole.insert(whole.begin(), static_cast<char>('0' + static_cast<int>(ip % 10)));
    ip /= 10;
  } while (ip > 0);
  return (negative ? "-" : "") + whole + (frac.empty() ? "" : "." + frac);
}

}  // namespace

NumberBounds read_bounds(const json& schema, bool integer, uint32_t max_digits) {
  NumberBounds b;
  auto lower = [&](Fixed v) {
    b.lo = b.has_lo ? std::max(b.lo, v) : v;
    b.has_lo = true;
  };
  auto upper = [&](Fixed v) {
    b.hi = b.has_hi ? std::min(b.hi, v) : v;
    b.has_hi = true;
  };
  // Draft 4 wrote exclusiveMinimum/exclusiveMaximum as booleans beside
  // minimum/maximum; later drafts as numbers of their own.
  const auto flag = [&](const char* key) {
    auto it = schema.find(key);
    return it != schema.end() && it->is_boolean() && it->get<bool>();
  };
  if (const json* v = number_keyword(schema, "minimum")) {
    const Scaled s = scale(*v);
    lower(flag("exclusiveMinimum") ? s.floor + 1 : (s.exact ? s.floor : s.floor + 1));
  }
  if (const json* v = number_keyword(schema, "maximum")) {
    const Scaled s = scale(*v);
    upper(flag("exclusiveMaximum") ? (s.exact ? s.floor - 1 : s.floor) : s.floor);
  }
  if (auto it = schema.find("exclusiveMinimum"); it != schema.end() && !it->is_boolean())
    lower(scale(*number_keyword(schema, "exclusiveMinimum")).floor + 1);
  if (auto it = schema.find("exclusiveMaximum"); it != schema.end() && !it->is_boolean()) {
    const Scaled s = scale(*number_keyword(schema, "exclusiveMaximum"));
    upper(s.exact ? s.floor - 1 : s.floor);
  }
  if (!b.any()) return b;
  const char* what = integer ? "integer" : "number";
  if (b.has_lo && b.has_hi && b.lo > b.hi)
    throw std::invalid_argument(std::string("no ") + what + " lies between the schema's lower bound " +
                                fixed_text(b.lo) + " and upper bound " + fixed_text(b.hi));
  if (!bounds_reachable(b, NumberPrefix{}, max_digits, integer) &&
      !bounds_reachable(b, NumberPrefix{true, 0, 0, 0, 0, false}, max_digits, integer))
    throw std::invalid_argument(std::string("no ") + what + " of at most " + std::to_string(max_digits) +
                                " digits (" + std::to_string(kBoundedFracDigits) +
                                " after the point) lies within the schema's bounds");
  return b;
}

bool bounds_reachable(const NumberBounds& b, const NumberPrefix& p, uint32_t max_digits, bool integer) {
  // The magnitude's range for this sign.
  Fixed mlo = 0, mhi = kHuge;
  if (!p.negative) {
    if (b.has_lo) mlo = std::max(mlo, b.lo);
    if (b.has_hi) mhi = b.hi;
  } else {
    if (b.has_hi) mlo = std::max(mlo, -b.hi);
    if (b.has_lo) mhi = -b.lo;
  }
  if (mhi < mlo) return false;
  if (p.int_digits == 0) {  // the first digit is still to come
    for (uint64_t d = 0; d <= 9; ++d) {
      NumberPrefix q = p;
      q.int_part = d;
      q.int_digits = 1;
      if (bounds_reachable(b, q, max_digits, integer)) return true;
    }
    return false;
  }
  const uint32_t max_int = std::min(max_digits, kBoundedIntDigits);
  if (p.int_digits > max_int || p.int_digits + p.frac_digits > max_digits || p.frac_digits > kBoundedFracDigits)
    return false;
  // Fraction digits still writable after `more_int` more integer digits.
  auto frac_budget = [&](uint32_t more_int) -> uint32_t {
    if (integer || p.int_digits + more_int + p.frac_digits >= max_digits) return 0;
    return std::min(max_digits - p.int_digits - more_int - p.frac_digits, kBoundedFracDigits - p.frac_digits);
  };
  if (p.dot) {
    const uint32_t fb = frac_budget(0);
    if (p.frac_digits == 0 && fb == 0) return false;  // a '.' needs a digit after it
    const Fixed unit = pow10(kBoundedFracDigits - p.frac_digits);
    const Fixed a = Fixed(p.int_part) * kFixedOne + Fixed(p.frac) * unit;
    return grid_meets(a, unit, unit / pow10(fb), mlo, mhi);
  }
  if (p.int_part == 0) return grid_meets(0, kFixedOne, kFixedOne / pow10(frac_budget(0)), mlo, mhi);  // "0", "0.x"
  for (uint32_t j = 0; p.int_digits + j <= max_int; ++j) {
    const Fixed w = pow10(j) * kFixedOne, a = Fixed(p.int_part) * w;
    if (a > mhi) break;  // more digits only make it larger
    if (grid_meets(a, w, kFixedOne / pow10(frac_budget(j)), mlo, mhi)) return true;
  }
  return false;
}

bool bounds_contain(const NumberBounds& b, const NumberPrefix& p) {
  Fixed v = Fixed(p.int_part) * kFixedOne + Fixed(p.frac) * pow10(kBoundedFracDigits - p.frac_digits);
  if (p.negative) v = -v;
  return (!b.has_lo || v >= b.lo) && (!b.has_hi || v <= b.hi);
}

}  // namespace seatrt::parsers::gemma4
