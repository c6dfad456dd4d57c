#include "common/json_util.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/error.hpp"

namespace infraplan {

Json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // nlohmann reports the byte offset; turn it into line:column for people.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < text.size() && i + 1 < e.byte; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    auto pos = what.find("syntax error");
    throw Error(origin + ":" + std::to_string(line) + ":" + std::to_string(col) + ": malformed JSON (" +
                (pos == std::string::npos ? what : what.substr(pos)) + ")");
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

static std::string type_name(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

JsonObject::JsonObject(const Json& j, std::string path) : j_(j), path_(std::move(path)) {
  if (!j_.is_object())
    throw Error((path_.empty() ? std::string("top level") : path_) + ": expected a JSON object, got " +
                type_name(j_));
}

bool JsonObject::has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }

std::string JsonObject::field(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void JsonObject::type_error(const std::string& key, const std::string& expected) const {
  throw Error(field(key) + ": expected " + expected + ", got " + type_name(j_.at(key)) + " (" +
              j_.at(key).dump() + ")");
}

std::optional<std::int64_t> JsonObject::opt_int(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const Json& v = j_.at(key);
  if (v.is_number_integer() || v.is_number_unsigned()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<std::int64_t>(d);
  }
  type_error(key, "an integer");
}

std::optional<double> JsonObject::opt_number(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const Json& v = j_.at(key);
  if (!v.is_number()) type_error(key, "a number");
  double d = v.get<double>();
  if (!std::isfinite(d)) type_error(key, "a finite number");
  return d;
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
std::int64_t JsonObject::get_int_min(const std::string& key, std::int64_t fallback, std::int64_t min) const {
  auto v = get_int(key, fallback);
  if (v < min)
    throw Error(field(key) + "=" + std::to_string(v) +
                " is invalid: must be an integer >= " + std::to_string(min));
  return v;
}
double JsonObject::get_number(const std::string& key) const {
  auto v = opt_number(key);
  if (!v) throw Error(field(key) + ": required number is missing");
  return *v;
}
double JsonObject::get_number(const std::string& key, double fallback) const {
  return opt_number(key).value_or(fallback);
}
double JsonObject::get_number_min(const std::string& key, double fallback, double min) const {
  double v = get_number(key, fallback);
  if (v < min) {
    std::ostringstream ss;
    ss << field(key) << "=" << v << " is invalid: must be >= " << min;
    throw Error(ss.str());
  }
  return v;
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

double parse_bytes_string(const std::string& s, const std::string& field) {
  std::size_t i = 0;
  while (i < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' || s[i] == 'E' ||
          ((s[i] == '+' || s[i] == '-') && i > 0 && (s[i - 1] == 'e' || s[i - 1] == 'E'))))
    ++i;
  double num = 0;
  try {
    num = std::stod(s.substr(0, i));
  } catch (...) {
    throw Error(field + "='" + s + "' is not a size; use a number of bytes or e.g. 1GiB, 512MB, 64KiB");
  }
  std::string unit = s.substr(i);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  static const std::pair<const char*, double> units[] = {
      {"", 1},       {"B", 1},         {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
      {"TB", 1e12},  {"KiB", 1024.0},  {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}};
  for (const auto& [name, mult] : units) {
    if (unit == name) {
      if (num < 0 || !std::isfinite(num)) throw Error(field + "='" + s + "' is invalid: sizes must be >= 0");
      return num * mult;
    }
  }
  throw Error(field + "='" + s + "': unknown unit '" + unit +
              "'; valid: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB");
}

double parse_bytes(const Json& v, const std::string& field) {
  if (v.is_number()) {
    double d = v.get<double>();
    if (d < 0 || !std::isfinite(d)) throw Error(field + "=" + v.dump() + " is invalid: sizes must be >= 0");
    return d;
  }
  if (v.is_string()) return parse_bytes_string(v.get<std::string>(), field);
  throw Error(field + ": expected a size (number of bytes or a string like \"1GiB\")");
}

}  // namespace infraplan
