#include "cli/table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace infraplan::cli {

static bool numeric(const std::string& s) {
  if (s.empty()) return false;
  char c = s[0];
  return std::isdigit(static_cast<unsigned char>(c)) || ((c == '-' || c == '+' || c == '.') && s.size() > 1);
}

std::string Table::str() const {
  std::vector<std::size_t> w(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  };
  widen(header_);
  for (const auto& r : rows_) widen(r);
  // Numbers right-align at the header's or the widest number's edge, whichever is wider: a long
  // text cell in the same column (a source note) does not push them to its far end.
  std::vector<std::size_t> num_edge(header_.size(), 0);
  for (std::size_t i = 0; i < header_.size(); ++i) num_edge[i] = header_[i].size();
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i)
      if (numeric(r[i])) num_edge[i] = std::max(num_edge[i], r[i].size());
  std::string out;
  auto line = [&](const std::vector<std::string>& r, bool head) {
    std::string l;
    for (std::size_t i = 0; i < w.size(); ++i) {
      std::string cell = i < r.size() ? r[i] : "";
      if (!head && numeric(cell))
        cell = std::string(num_edge[i] - std::min(num_edge[i], cell.size()), ' ') + cell;
      l += (i ? "  " : "") + cell + std::string(w[i] - std::min(w[i], cell.size()), ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header_, true);
  std::string rule;
  for (std::size_t i = 0; i < w.size(); ++i) rule += (i ? "  " : "") + std::string(w[i], '-');
  out += rule + "\n";
  for (const auto& r : rows_) line(r, false);
  return out;
}

std::string fmt(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

std::string fmt_gib(double bytes) { return fmt(bytes / 1073741824.0, 2) + " GiB"; }

std::string fmt_count(double n) {
  const char* suffix[] = {"", "K", "M", "B", "T"};
  int i = 0;
  while (std::fabs(n) >= 1000 && i < 4) {
    n /= 1000;
    ++i;
  }
  return fmt(n, i == 0 ? 0 : 2) + suffix[i];
}

std::string fmt_seconds(double s) {
  if (s < 1e-3) return fmt(s * 1e6, 1) + " us";
  if (s < 1) return fmt(s * 1e3, 2) + " ms";
  if (s < 3600) return fmt(s, 2) + " s";
  return fmt(s / 3600, 2) + " h";
}

std::string fmt_flops(double f) { return fmt(f / 1e12, 1) + " TFLOP/s"; }

}  // namespace infraplan::cli
