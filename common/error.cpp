#include "common/error.hpp"

#include <algorithm>
#include <cctype>

namespace infraplan {

static std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      auto ca = std::tolower(static_cast<unsigned char>(a[i - 1]));
      auto cb = std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca == cb ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& choices,
                                       std::size_t max) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& c : choices) {
    std::size_t d = edit_distance(name, c);
    // A substring match counts as close ("h100" → "h100-sxm5-80gb").
    bool sub = !name.empty() && c.find(std::string(name)) != std::string::npos;
    if (sub) d = std::min<std::size_t>(d, 1);
    if (d <= std::max<std::size_t>(2, name.size() / 3)) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& s : scored) {
    if (out.size() >= max) break;
    out.push_back(s.second);
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& choices) {
  std::string msg = "unknown " + std::string(what) + " '" + std::string(name) + "'";
  auto close = closest_names(name, choices);
  if (!close.empty()) {
    std::vector<std::string> quoted;
    for (const auto& c : close) quoted.push_back("'" + c + "'");
    msg += "; did you mean " + join(quoted, " or ") + "?";
  }
  msg += " valid: " + join(choices);
  return msg;
}

}  // namespace infraplan
