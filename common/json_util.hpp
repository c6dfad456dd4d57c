#pragma once
// Typed reads from JSON with errors that name the full field path ("training.tp"), the value
// found and what was expected. Used by every config parser. Numbers are range-checked before
// any narrowing (common/checked_number.hpp); `null` is refused where a value is expected.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/checked_number.hpp"
#include "common/json_text.hpp"

namespace infraplan {

/// A view of a JSON object with its dotted path, for typed reads with good errors.
class JsonObject {
 public:
  /// How a key whose value is `null` reads.
  enum class Null {
    Refuse,  ///< an error naming the key (infraplan's own formats: leave the key out instead)
    Absent,  ///< as if the key were absent (Hugging Face config.json, where None means default)
  };
  /// `j` must be an object; otherwise throws naming `path`. With Null::Refuse, any key of this
  /// object (not of nested ones) holding null is an error here.
  JsonObject(const Json& j, std::string path, Null nulls = Null::Refuse);

  const Json& raw() const { return j_; }
  const std::string& path() const { return path_; }
  bool has(const std::string& key) const;
  /// "path.key" (or "key" at top level).
  std::string field(const std::string& key) const;

  std::optional<std::int64_t> opt_int(const std::string& key) const;
  std::optional<double> opt_number(const std::string& key) const;
  std::optional<bool> opt_bool(const std::string& key) const;
  std::optional<std::string> opt_string(const std::string& key) const;
  std::optional<JsonObject> opt_object(const std::string& key) const;

  std::int64_t get_int(const std::string& key) const;
  std::int64_t get_int(const std::string& key, std::int64_t fallback) const;
  /// Integer in [min, max] (error names the field, the value and the range otherwise); the
  /// default max fits an `int`, so `int(get_int_min(...))` never wraps.
  std::int64_t get_int_min(const std::string& key, std::int64_t fallback, std::int64_t min,
                           std::int64_t max = kIntMax) const;
  /// Integer in [min, max] when present.
  std::optional<std::int64_t> opt_int_in(const std::string& key, std::int64_t min, std::int64_t max) const;
  double get_number(const std::string& key) const;
  double get_number(const std::string& key, double fallback) const;
  /// Finite number in [min, max].
  double get_number_min(const std::string& key, double fallback, double min,
                        double max = std::numeric_limits<double>::max()) const;
  /// Finite number in [min, max] when present.
  std::optional<double> opt_number_in(const std::string& key, double min, double max) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  /// A string that must be one of `choices`.
  std::string get_choice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& choices) const;

  /// Throws when the object holds a key not in `known` (catches typos like "micro_bacth").
  void reject_unknown(const std::vector<std::string>& known) const;

 private:
  [[noreturn]] void type_error(const std::string& key, const std::string& expected) const;
  const Json& j_;
  std::string path_;
  Null nulls_;
};

/// Largest byte size accepted by parse_bytes (1 PiB).
inline constexpr double kMaxBytes = 1125899906842624.0;
/// Parses a byte size in [0, max_bytes]: a number (bytes) or a string like "1GiB", "512MB",
/// "64KiB", "8B" (the number part is a strict decimal number: "1.5.5GiB" is refused).
double parse_bytes(const Json& v, const std::string& field, double max_bytes = kMaxBytes);
double parse_bytes_string(const std::string& s, const std::string& field, double max_bytes = kMaxBytes);

}  // namespace infraplan
