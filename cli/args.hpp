#pragma once
// Command-line parsing for infraplan subcommands: "--key value", "--key=value", "--flag" and
// positionals, checked against the options a command declares.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace infraplan::cli {

struct OptionSpec {
  std::string name;  ///< without dashes, e.g. "scenario"
  bool takes_value = true;
  std::string help;
};

class Args {
 public:
  /// Parses `argv` (after the command words). Unknown options throw infraplan::Error with
  /// suggestions; "--help" sets help().
  Args(const std::vector<std::string>& argv, const std::vector<OptionSpec>& spec);

  bool help() const { return help_; }
  bool flag(const std::string& name) const;
  std::optional<std::string> get(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback) const;
  /// Required option; throws naming it.
  std::string require(const std::string& name) const;
  /// Integer option ≥ min; throws naming it.
  std::optional<long long> get_int(const std::string& name, long long min) const;
  std::optional<double> get_number(const std::string& name, double min) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> flags_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

/// Formats "Options:" help text from a spec.
std::string options_help(const std::vector<OptionSpec>& spec);

}  // namespace infraplan::cli
