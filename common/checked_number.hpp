#pragma once
// Checked numbers: every number infraplan reads from a person (scenario keys, trace cells,
// Hugging Face configs, profiles, command-line flags) goes through these, so that nothing is
// cast to a narrower type before its range is checked, nothing non-finite gets in, and a bad
// value is refused with a message naming the field, the value and the allowed range.
//
// Text forms are strict: an integer is an optional '-' and decimal digits ("4abc", "0x10",
// "+4", " 4", "1e3" are refused); a real number is decimal with an optional fraction and
// exponent ("1.5.5", "inf", "nan", "0x1p3" are refused).
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace infraplan {

/// Largest value of the `int` fields of configs; used as the default upper limit.
inline constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
inline constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

/// "[1, 1024]" — an inclusive range as shown in error messages and docs.
std::string range_text(std::int64_t min, std::int64_t max);
std::string range_text(double min, double max);
/// Shortest text that reads back as `v` ("0.1", "1e+30", "4096").
std::string number_text(double v);

/// Parses all of `text` as a decimal integer in [min, max]; throws infraplan::Error naming
/// `field` otherwise.
std::int64_t parse_integer(std::string_view text, std::string_view field, std::int64_t min, std::int64_t max);
/// Parses all of `text` as a finite decimal number in [min, max]; throws naming `field`.
double parse_real(std::string_view text, std::string_view field, double min, double max);

/// `v` when in [min, max]; throws "<field>=<v> is invalid: must be an integer in [min, max]".
std::int64_t check_integer(std::int64_t v, std::string_view field, std::int64_t min, std::int64_t max);
/// `v` when finite and in [min, max]; throws naming `field` otherwise.
double check_real(double v, std::string_view field, double min, double max);
/// A finite double that holds an integer in [min, max] (JSON numbers written as 4.0), as int64.
/// Checked before the cast, so huge or non-finite values never reach it.
std::int64_t integer_from_real(double v, std::string_view field, std::int64_t min, std::int64_t max);

/// Narrows an int64 already checked to fit; throws (an internal error) when it does not.
template <class T>
T narrow(std::int64_t v, std::string_view field) {
  if (v < std::int64_t(std::numeric_limits<T>::min()) || v > std::int64_t(std::numeric_limits<T>::max()))
    return T(check_integer(v, field, std::int64_t(std::numeric_limits<T>::min()),
                           std::int64_t(std::numeric_limits<T>::max())));
  return T(v);
}

}  // namespace infraplan
