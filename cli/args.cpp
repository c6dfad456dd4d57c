#include "cli/args.hpp"

#include <algorithm>

#include "common/error.hpp"

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
    if (given(key)) throw Error("option --" + key + " is given more than once; give it once");
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

std::optional<long long> Args::get_int(const std::string& name, long long min, long long max) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  return parse_integer(*v, "--" + name, min, max);
}

std::optional<double> Args::get_number(const std::string& name, double min, double max) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  return parse_real(*v, "--" + name, min, max);
}

void Args::expect_positional(std::size_t min, std::size_t max, const std::string& usage) const {
  if (positional_.size() > max) {
    std::string extra;
    for (std::size_t i = max; i < positional_.size(); ++i) extra += (extra.empty() ? "'" : ", '") + positional_[i] + "'";
    throw Error("unexpected argument" + std::string(positional_.size() - max > 1 ? "s " : " ") + extra +
                "; usage: " + usage);
  }
  if (positional_.size() < min) throw Error("missing argument; usage: " + usage);
}

void Args::refuse(const std::string& name, const std::string& why) const {
  if (given(name)) throw Error("option --" + name + " " + why);
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

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace infraplan::cli
