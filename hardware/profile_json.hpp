// Field readers of a hardware profile's JSON: each names the field and what was expected when the
// value is missing or out of range (one error format for every section's parser).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "common/checked_number.hpp"
#include "common/error.hpp"
#include "hardware/profile.hpp"

namespace infraplan::hw::profile_json {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] inline void fail(const std::string& origin, const std::string& field, const std::string& what) {
  throw Error("profile " + origin + ": " + field + ": " + what);
}

inline const Json& need(const Json& j, const std::string& key, const std::string& path,
                        const std::string& origin) {
  if (!j.is_object()) fail(origin, path.empty() ? "top level" : path, "expected a JSON object");
  if (!j.contains(key) || j.at(key).is_null())
    fail(origin, path.empty() ? key : path + "." + key, "missing (required)");
  return j.at(key);
}

inline std::string shown(const Json& v) {
  std::string s = v.dump();
  return s.size() > 64 ? s.substr(0, 64) + "..." : s;
}

inline double number(const Json& v, const std::string& field, const std::string& origin,
                     double min = -1e300) {
  if (!v.is_number()) fail(origin, field, "expected a number, got " + shown(v));
  double d = v.get<double>();
  if (!std::isfinite(d) || d < min)
    fail(origin, field, "expected a finite number >= " + number_text(min) + ", got " + shown(v));
  return d;
}

/// A whole number in [min, max], checked before any cast.
inline std::int64_t integer(const Json& v, const std::string& field, const std::string& origin,
                            std::int64_t min, std::int64_t max) {
  if (!v.is_number())
    fail(origin, field, "expected an integer in " + range_text(min, max) + ", got " + shown(v));
  try {
    return integer_from_real(v.get<double>(), field, min, max);
  } catch (const Error& e) {
    fail(origin, field, e.what());
  }
}

/// An optional whole number: `fallback` when the key is absent or not a number.
inline std::int64_t int_or(const Json& j, const std::string& key, std::int64_t fallback,
                           const std::string& field, const std::string& origin, std::int64_t min,
                           std::int64_t max) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return fallback;
  return integer(j.at(key), field + "." + key, origin, min, max);
}

inline bool bool_or(const Json& j, const std::string& key, bool fallback, const std::string& field,
                    const std::string& origin) {
  if (!j.is_object() || !j.contains(key)) return fallback;
  if (!j.at(key).is_boolean())
    fail(origin, field + "." + key, "expected true or false, got " + shown(j.at(key)));
  return j.at(key).get<bool>();
}

// Largest sizes a profile may describe: heads and head widths, SMs, and token/GEMM dimensions.
inline constexpr std::int64_t kMaxHeadsOrDim = 1 << 16;
inline constexpr std::int64_t kMaxSms = 1 << 16;
inline constexpr std::int64_t kMaxDim = std::int64_t(1) << 40;

/// An ascending axis of positive numbers.
inline std::vector<double> axis(const Json& v, const std::string& field, const std::string& origin) {
  if (!v.is_array() || v.empty()) fail(origin, field, "expected a non-empty array of numbers");
  std::vector<double> a;
  for (std::size_t i = 0; i < v.size(); ++i) {
    double d = number(v[i], field + "[" + std::to_string(i) + "]", origin, 0);
    if (d <= 0) fail(origin, field + "[" + std::to_string(i) + "]", "must be > 0");
    if (!a.empty() && d <= a.back()) fail(origin, field, "must be strictly ascending");
    a.push_back(d);
  }
  return a;
}

/// Flattens nested arrays of seconds (null → NaN) and checks the count.
inline void flatten(const Json& v, const std::string& field, const std::string& origin,
                    std::vector<double>& out) {
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i)
      flatten(v[i], field + "[" + std::to_string(i) + "]", origin, out);
  } else if (v.is_null()) {
    out.push_back(kNaN);
  } else {
    double d = number(v, field, origin, 0);
    if (d <= 0) fail(origin, field, "a time must be > 0 seconds");
    out.push_back(d);
  }
}

inline std::vector<double> seconds_grid(const Json& v, const std::string& field, const std::string& origin,
                                        std::size_t expected, const std::string& dims) {
  std::vector<double> out;
  if (!v.is_array()) fail(origin, field, "expected a nested array of seconds");
  flatten(v, field, origin, out);
  if (out.size() != expected)
    fail(origin, field,
         "expected " + std::to_string(expected) + " entries (" + dims + "), got " +
             std::to_string(out.size()));
  return out;
}

inline std::string str(const Json& j, const std::string& key, const std::string& fallback) {
  if (j.is_object() && j.contains(key) && j.at(key).is_string()) return j.at(key).get<std::string>();
  return fallback;
}

inline double num_or(const Json& j, const std::string& key, double fallback) {
  if (j.is_object() && j.contains(key) && j.at(key).is_number()) return j.at(key).get<double>();
  return fallback;
}

inline Dtype gemm_dtype(const std::string& name, const std::string& field, const std::string& origin) {
  try {
    return parse_dtype(name, field);
  } catch (const Error& e) {
    fail(origin, field, e.what());
  }
}

inline std::string fmt_num(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

/// The mean of an optional `clock_mhz` pair [before, after] (MHz); 0 when absent.
inline double clock_pair_mean(const Json& j, const std::string& field, const std::string& origin) {
  if (!j.is_object() || !j.contains("clock_mhz")) return 0;
  const Json& c = j["clock_mhz"];
  const std::string f = field + ".clock_mhz";
  if (!c.is_array() || c.size() != 2) fail(origin, f, "expected [MHz before, MHz after]");
  double a = number(c[0], f, origin, 0), b = number(c[1], f, origin, 0);
  if (a < 100 || b < 100 || a > 10000 || b > 10000)
    fail(origin, f, "expected MHz between 100 and 10000, got " + c.dump());
  return 0.5 * (a + b);
}

/// The optional "layout" of a GEMM entry ("tn" when absent).
inline GemmLayout layout_of(const Json& r, const std::string& f, const std::string& origin) {
  if (!r.is_object() || !r.contains("layout")) return GemmLayout::TN;
  const Json& v = r["layout"];
  auto l = v.is_string() ? parse_gemm_layout(v.get<std::string>()) : std::nullopt;
  if (!l) fail(origin, f + ".layout", "expected \"tn\", \"nn\" or \"nt\", got " + v.dump());
  return *l;
}

/// One timed GEMM shape {dtype, m, n, k, seconds, repeats?, clock_mhz? [[before, after] per
/// repeat]} (held-out shapes and exact workload shapes). `strict`: sizes and seconds must be > 0.
inline HoldoutGemm gemm_measurement(const Json& r, const std::string& f, const std::string& origin,
                                    bool strict) {
  if (!r.is_object()) fail(origin, f, "expected an object {dtype, m, n, k, seconds}");
  HoldoutGemm g;
  g.dtype = gemm_dtype(str(r, "dtype", ""), f + ".dtype", origin);
  g.layout = layout_of(r, f, origin);
  std::int64_t* dims[] = {&g.m, &g.n, &g.k};
  const char* names[] = {"m", "n", "k"};
  for (int d = 0; d < 3; ++d) {
    *dims[d] = int_or(r, names[d], 0, f, origin, 0, kMaxDim);
    if (strict && *dims[d] <= 0) fail(origin, f + "." + names[d], "expected a positive integer");
  }
  g.seconds =
      strict ? number(need(r, "seconds", f, origin), f + ".seconds", origin, 1e-12) : num_or(r, "seconds", 0);
  if (r.contains("repeats")) {
    if (!r["repeats"].is_array()) fail(origin, f + ".repeats", "expected an array of seconds");
    for (std::size_t q = 0; q < r["repeats"].size(); ++q)
      g.repeats.push_back(number(r["repeats"][q], f + ".repeats", origin, 1e-12));
  }
  if (r.contains("clock_mhz")) {
    const Json& cm = r["clock_mhz"];
    if (!cm.is_array() || cm.size() != g.repeats.size())
      fail(origin, f + ".clock_mhz", "expected one [before, after] pair per entry of repeats");
    for (std::size_t q = 0; q < cm.size(); ++q) {
      Json one = {{"clock_mhz", cm[q]}};
      g.repeat_clock_mhz.push_back(clock_pair_mean(one, f, origin));
    }
  }
  return g;
}

}  // namespace infraplan::hw::profile_json
