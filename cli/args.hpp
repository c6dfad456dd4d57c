#pragma once
// Command-line parsing for infraplan subcommands: "--key value", "--key=value", "--flag" and
// positionals, checked against the options a command declares. An option given twice is an
// error (no "last one wins"); numbers are parsed strictly and range-checked
// (common/checked_number.hpp): "--tp 4abc" and "--bytes 1.5.5" are refused.
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/checked_number.hpp"

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
  /// Integer option in [min, max]; throws naming it, the value and the range. The default max
  /// fits an `int`.
  std::optional<long long> get_int(const std::string& name, long long min, long long max = kIntMax) const;
  /// Finite number option in [min, max]; throws naming it.
  std::optional<double> get_number(const std::string& name, double min,
                                   double max = std::numeric_limits<double>::max()) const;
  const std::vector<std::string>& positional() const { return positional_; }
  /// Throws unless between `min` and `max` positional words were given; `usage` ends the message.
  void expect_positional(std::size_t min, std::size_t max, const std::string& usage) const;
  /// Throws when `name` was given although `why` says it has no effect here.
  void refuse(const std::string& name, const std::string& why) const;
  /// True when the option or flag `name` was given.
  bool given(const std::string& name) const { return flag(name) || values_.count(name) > 0; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> flags_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

/// Formats "Options:" help text from a spec.
std::string options_help(const std::vector<OptionSpec>& spec);

/// The non-empty items of a comma-separated list ("a,,b" → {"a", "b"}).
std::vector<std::string> split_commas(const std::string& s);

}  // namespace infraplan::cli
