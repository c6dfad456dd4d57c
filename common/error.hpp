#pragma once
// The one exception type infraplan throws for bad input and impossible configurations.
// Messages are for people: they name the field, the value and what would be valid.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace infraplan {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// Names in `choices` closest to `name` (edit distance), best first, at most `max` of them.
std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& choices,
                                       std::size_t max = 3);

/// "unknown <what> 'name'; did you mean 'a', 'b'? valid: x, y, z" — the standard message for an
/// unknown name among `choices`.
std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& choices);

/// Joins strings with ", ".
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace infraplan
