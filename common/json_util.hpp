#pragma once
// Typed reads from JSON with errors that name the full field path ("training.tp"), the value
// found and what was expected. Used by every config parser.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace infraplan {

using Json = nlohmann::json;

/// Parses JSON text; on a syntax error throws infraplan::Error naming `origin` (a file name or
/// "inline JSON") with line and column.
Json parse_json_text(const std::string& text, const std::string& origin);
/// Reads and parses a file; a missing file or bad JSON gives an infraplan::Error naming the path.
Json read_json_file(const std::string& path);
/// Reads a whole text file; throws infraplan::Error when it cannot be opened.
std::string read_text_file(const std::string& path);

/// A view of a JSON object with its dotted path, for typed reads with good errors.
class JsonObject {
 public:
  /// `j` must be an object; otherwise throws naming `path`.
  JsonObject(const Json& j, std::string path);

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
  /// Integer ≥ `min` (error names the field otherwise).
  std::int64_t get_int_min(const std::string& key, std::int64_t fallback, std::int64_t min) const;
  double get_number(const std::string& key) const;
  double get_number(const std::string& key, double fallback) const;
  /// Number ≥ `min`.
  double get_number_min(const std::string& key, double fallback, double min) const;
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
};

/// Parses a byte size: a number (bytes) or a string like "1GiB", "512MB", "64KiB", "8B".
double parse_bytes(const Json& v, const std::string& field);
double parse_bytes_string(const std::string& s, const std::string& field);

}  // namespace infraplan
