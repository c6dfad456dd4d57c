#include "common/json_util.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "common/error.hpp"

namespace infraplan {

static std::string type_name(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

JsonObject::JsonObject(const Json& j, std::string path, Null nulls)
    : j_(j), path_(std::move(path)), nulls_(nulls) {
  if (!j_.is_object())
    throw Error((path_.empty() ? std::string("top level") : path_) + ": expected a JSON object, got " +
                type_name(j_));
  if (nulls_ == Null::Refuse)
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (it->is_null())
        throw Error(field(it.key()) + ": null is not a value here; leave the key out to get its default");
}

bool JsonObject::has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }

std::string JsonObject::field(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void JsonObject::type_error(const std::string& key, const std::string& expected) const {
  std::string shown = j_.at(key).dump();
  if (shown.size() > 64) shown = shown.substr(0, 64) + "...";
  throw Error(field(key) + ": expected " + expected + ", got " + type_name(j_.at(key)) + " (" + shown + ")");
}

std::optional<std::int64_t> JsonObject::opt_int_in(const std::string& key, std::int64_t min,
                                                    std::int64_t max) const {
  if (!has(key)) return std::nullopt;
  const Json& v = j_.at(key);
  if (v.is_number_unsigned()) {
    // Stored unsigned: a value above INT64_MAX must not wrap to a negative one.
    const auto u = v.get<std::uint64_t>();
    if (max < 0 || u > std::uint64_t(max))
      throw Error(field(key) + "=" + std::to_string(u) + " is invalid: must be an integer in " +
                  range_text(min, max));
    return check_integer(std::int64_t(u), field(key), min, max);
  }
  if (v.is_number_integer()) return check_integer(v.get<std::int64_t>(), field(key), min, max);
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d)) return integer_from_real(d, field(key), min, max);
  }
  type_error(key, "an integer in " + range_text(min, max));
}

std::optional<std::int64_t> JsonObject::opt_int(const std::string& key) const {
  return opt_int_in(key, std::numeric_limits<std::int64_t>::min(), kInt64Max);
}

std::optional<double> JsonObject::opt_number_in(const std::string& key, double min, double max) const {
  if (!has(key)) return std::nullopt;
  const Json& v = j_.at(key);
  if (!v.is_number()) type_error(key, "a number in " + range_text(min, max));
  return check_real(v.get<double>(), field(key), min, max);
}

std::optional<double> JsonObject::opt_number(const std::string& key) const {
  return opt_number_in(key, std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
}

std::optional<bool> JsonObject::opt_bool(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  if (!j_.at(key).is_boolean()) type_error(key, "true or false");
  return j_.at(key).get<bool>();
}

std::optional<std::string> JsonObject::opt_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  if (!j_.at(key).is_string()) type_error(key, "a string");
  return j_.at(key).get<std::string>();
}

std::optional<JsonObject> JsonObject::opt_object(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  if (!j_.at(key).is_object()) type_error(key, "an object");
  return JsonObject(j_.at(key), field(key));
}

std::int64_t JsonObject::get_int(const std::string& key) const {
  auto v = opt_int(key);
  if (!v) throw Error(field(key) + ": required integer is missing");
  return *v;
}
std::int64_t JsonObject::get_int(const std::string& key, std::int64_t fallback) const {
  return opt_int(key).value_or(fallback);
}
std::int64_t JsonObject::get_int_min(const std::string& key, std::int64_t fallback, std::int64_t min,
                                     std::int64_t max) const {
  return opt_int_in(key, min, max).value_or(fallback);
}
double JsonObject::get_number(const std::string& key) const {
  auto v = opt_number(key);
  if (!v) throw Error(field(key) + ": required number is missing");
  return *v;
}
double JsonObject::get_number(const std::string& key, double fallback) const {
  return opt_number(key).value_or(fallback);
}
double JsonObject::get_number_min(const std::string& key, double fallback, double min, double max) const {
  return opt_number_in(key, min, max).value_or(fallback);
}
bool JsonObject::get_bool(const std::string& key, bool fallback) const {
  return opt_bool(key).value_or(fallback);
}
std::string JsonObject::get_string(const std::string& key) const {
  auto v = opt_string(key);
  if (!v) throw Error(field(key) + ": required string is missing");
  return *v;
}
std::string JsonObject::get_string(const std::string& key, const std::string& fallback) const {
  return opt_string(key).value_or(fallback);
}
std::string JsonObject::get_choice(const std::string& key, const std::string& fallback,
                                   const std::vector<std::string>& choices) const {
  std::string v = get_string(key, fallback);
  if (std::find(choices.begin(), choices.end(), v) == choices.end())
    throw Error(field(key) + "='" + v + "' is not valid; valid choices: " + join(choices));
  return v;
}

void JsonObject::reject_unknown(const std::vector<std::string>& known) const {
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      std::string msg = unknown_name_message("key", it.key(), known);
      // Name the full path ("training.micro_bacth") while matching suggestions on the key alone.
      if (!path_.empty()) msg.replace(msg.find('\'') + 1, it.key().size(), field(it.key()));
      throw Error(msg);
    }
  }
}

double parse_bytes_string(const std::string& s, const std::string& field, double max_bytes) {
  static const std::pair<const char*, double> units[] = {
      {"", 1},       {"B", 1},         {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
      {"TB", 1e12},  {"KiB", 1024.0},  {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}};
  // The number is everything up to the unit (letters at the end), spaces between allowed.
  std::size_t end = s.size();
  while (end > 0 && std::isalpha(static_cast<unsigned char>(s[end - 1]))) --end;
  std::string unit = s.substr(end);
  std::size_t num_end = end;
  while (num_end > 0 && s[num_end - 1] == ' ') --num_end;
  const std::string number = s.substr(0, num_end);
  for (const auto& [name, mult] : units) {
    if (unit != name) continue;
    const double num = parse_real(number, field, 0, max_bytes / mult);
    return check_real(num * mult, field, 0, max_bytes);
  }
  throw Error(field + "='" + s.substr(0, 64) + "': unknown unit '" + unit.substr(0, 16) +
              "'; valid: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (sizes in [0, 1 PiB])");
}

double parse_bytes(const Json& v, const std::string& field, double max_bytes) {
  if (v.is_number()) return check_real(v.get<double>(), field, 0, max_bytes);
  if (v.is_string()) return parse_bytes_string(v.get<std::string>(), field, max_bytes);
  throw Error(field + ": expected a size (number of bytes or a string like \"1GiB\")");
}

}  // namespace infraplan
