#include "common/checked_number.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <system_error>

#include "common/error.hpp"

namespace infraplan {

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string range_text(std::int64_t min, std::int64_t max) {
  return "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

std::string range_text(double min, double max) { return "[" + number_text(min) + ", " + number_text(max) + "]"; }

/// True for "nan", "-inf", "Infinity" and the like: named, not echoed, in messages (an output
/// never shows a NaN or an infinity, not even the user's own).
static bool non_finite_word(std::string_view text) {
  std::string t;
  for (char c : text.substr(0, 16))
    if (c != '+' && c != '-' && c != ' ') t += char(std::tolower(static_cast<unsigned char>(c)));
  return t.rfind("nan", 0) == 0 || t.rfind("inf", 0) == 0;
}

static std::string shown(std::string_view text) {
  constexpr std::size_t kMax = 64;  // a hostile value is not echoed in full
  std::string s(text.substr(0, kMax));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f) c = '?';
  if (text.size() > kMax) s += "...";
  return s;
}

std::int64_t check_integer(std::int64_t v, std::string_view field, std::int64_t min, std::int64_t max) {
  if (v < min || v > max)
    throw Error(std::string(field) + "=" + std::to_string(v) + " is invalid: must be an integer in " +
                range_text(min, max));
  return v;
}

double check_real(double v, std::string_view field, double min, double max) {
  if (!std::isfinite(v))
    throw Error(std::string(field) + " is not finite; must be a finite number in " + range_text(min, max));
  if (v < min || v > max)
    throw Error(std::string(field) + "=" + number_text(v) + " is invalid: must be in " +
                range_text(min, max));
  return v;
}

std::int64_t integer_from_real(double v, std::string_view field, std::int64_t min, std::int64_t max) {
  if (!std::isfinite(v))
    throw Error(std::string(field) + " is not finite; must be an integer in " + range_text(min, max));
  if (v != std::floor(v))
    throw Error(std::string(field) + "=" + number_text(v) + " is not an integer; must be an integer in " +
                range_text(min, max));
  // Compare as doubles before casting: the cast of an out-of-range double is undefined.
  if (v < double(min) || v > double(max) || v >= 9223372036854775807.0)
    throw Error(std::string(field) + "=" + number_text(v) + " is invalid: must be an integer in " +
                range_text(min, max));
  return check_integer(std::int64_t(v), field, min, max);
}

std::int64_t parse_integer(std::string_view text, std::string_view field, std::int64_t min, std::int64_t max) {
  auto bad = [&]() -> std::int64_t {
    if (non_finite_word(text))
      throw Error(std::string(field) + ": non-finite values are not accepted; must be an integer in " +
                  range_text(min, max));
    throw Error(std::string(field) + "='" + shown(text) + "' is not an integer; must be an integer in " +
                range_text(min, max));
  };
  if (text.empty()) return bad();
  std::size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) return bad();
  for (std::size_t k = i; k < text.size(); ++k)
    if (text[k] < '0' || text[k] > '9') return bad();
  std::int64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc::result_out_of_range)
    throw Error(std::string(field) + "=" + shown(text) + " is invalid: must be an integer in " +
                range_text(min, max));
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return bad();
  return check_integer(v, field, min, max);
}

double parse_real(std::string_view text, std::string_view field, double min, double max) {
  auto bad = [&]() -> double {
    if (non_finite_word(text))
      throw Error(std::string(field) + ": non-finite values are not accepted; must be a decimal number in " +
                  range_text(min, max));
    throw Error(std::string(field) + "='" + shown(text) + "' is not a number; must be a decimal number in " +
                range_text(min, max));
  };
  // [-]digits[.digits][(e|E)[+|-]digits], or [-].digits...
  std::size_t i = 0;
  const std::size_t n = text.size();
  auto digits = [&]() {
    std::size_t s = i;
    while (i < n && text[i] >= '0' && text[i] <= '9') ++i;
    return i - s;
  };
  if (i < n && text[i] == '-') ++i;
  std::size_t whole = digits(), frac = 0;
  if (i < n && text[i] == '.') {
    ++i;
    frac = digits();
  }
  if (whole + frac == 0) return bad();
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return bad();
  }
  if (i != n) return bad();
  double v = 0;
  auto r = std::from_chars(text.data(), text.data() + n, v);
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow is refused; underflow (1e-400) reads as the nearest representable value, 0.
    if (text.find_first_of("eE") != std::string_view::npos &&
        text[text.find_first_of("eE") + 1] == '-')
      v = 0;
    else
      throw Error(std::string(field) + "=" + shown(text) + " is invalid: must be in " +
                  range_text(min, max));
  } else if (r.ec != std::errc() || r.ptr != text.data() + n) {
    return bad();
  }
  return check_real(v, field, min, max);
}

}  // namespace infraplan
