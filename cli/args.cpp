#include "cli/args.hpp"

#include <algorithm>
#include <cmath>

#include "model/error.hpp"

namespace infraplan::cli {

Args::Args(const std::vector<std::string>& argv, const std::vector<OptionSpec>& spec) {
  std::vector<std::string> names;
  for (const auto& s : spec) names.push_back("--" + s.name);
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      positional_.push_back(a);
      continue;
    }
    std::string key = a.substr(2), value;
    bool has_value = false;
    if (auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
      has_value = true;
    }
    auto it = std::find_if(spec.begin(), spec.end(), [&](const OptionSpec& s) { return s.name == key; });
    if (it == spec.end()) throw Error(unknown_name_message("option", "--" + key, names));
    if (!it->takes_value) {
      if (has_value) throw Error("option --" + key + " takes no value");
      flags_.push_back(key);
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argv.size()) throw Error("option --" + key + " needs a value");
      value = argv[++i];
    }
    values_[key] = value;
  }
}

bool Args::flag(const std::string& name) const {
  return std::find(flags_.begin(), flags_.end(), name) != flags_.end();
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

std::string Args::require(const std::string& name) const {
  auto v = get(name);
  if (!v) throw Error("option --" + name + " is required");
  return *v;
}

std::optional<long long> Args::get_int(const std::string& name, long long min) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  long long x = 0;
  std::size_t used = 0;
  try {
    x = std::stoll(*v, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v->size()) throw Error("--" + name + "='" + *v + "' is not an integer");
  if (x < min) throw Error("--" + name + "=" + *v + " is invalid: must be >= " + std::to_string(min));
  return x;
}

std::optional<double> Args::get_number(const std::string& name, double min) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  double x = 0;
  std::size_t used = 0;
  try {
    x = std::stod(*v, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v->size() || !std::isfinite(x))
    throw Error("--" + name + "='" + *v + "' is not a number");
  if (x < min) throw Error("--" + name + "=" + *v + " is invalid: must be >= " + std::to_string(min));
  return x;
}

std::string options_help(const std::vector<OptionSpec>& spec) {
  std::string out = "Options:\n";
  for (const auto& s : spec) {
    std::string left = "  --" + s.name + (s.takes_value ? " VALUE" : "");
    if (left.size() < 26) left.resize(26, ' ');
    out += left + " " + s.help + "\n";
  }
  out += "  --help                     this text\n";
  return out;
}

}  // namespace infraplan::cli
