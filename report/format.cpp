#include "report/format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace infraplan::report {

namespace {

// Groups the integer digits of a plain decimal string by three with a thin space (U+2009).
std::string group_thousands(const std::string& s) {
  std::size_t start = (s[0] == '-') ? 1 : 0;
  std::size_t dot = s.find('.');
  std::size_t int_end = dot == std::string::npos ? s.size() : dot;
  if (int_end - start <= 4) return s;  // 1234 stays as it is; 12 345 is grouped
  std::string out = s.substr(0, start);
  for (std::size_t i = start; i < int_end; ++i) {
    if (i > start && (int_end - i) % 3 == 0) out += "\u2009";
    out += s[i];
  }
  out += s.substr(int_end);
  return out;
}

std::string with_unit(double v, const char* unit) { return fmt_sig(v) + " " + unit; }

}  // namespace

std::string fmt_sig(double v, int sig) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "∞" : "−∞");
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a < 1e-4 || a >= 1e15) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", sig - 1, v);
    return buf;
  }
  // Decimals so that `sig` significant digits show; integers need none.
  int magnitude = int(std::floor(std::log10(a)));
  int decimals = std::max(0, sig - 1 - magnitude);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  // Rounding may carry into a new digit (9.9996 → "10.000"): drop the extra decimal.
  std::string s = buf;
  if (decimals > 0) {
    double r = std::fabs(std::strtod(buf, nullptr));
    if (r > 0 && int(std::floor(std::log10(r))) > magnitude) {
      std::snprintf(buf, sizeof buf, "%.*f", decimals - 1, v);
      s = buf;
    }
  }
  return group_thousands(s);
}

std::string fmt_seconds(double s) {
  const double a = std::fabs(s);
  if (s == 0) return "0 s";
  if (a >= 48 * 3600.0) return with_unit(s / 86400, "d");
  if (a >= 3600) return with_unit(s / 3600, "h");
  if (a >= 1) return with_unit(s, "s");
  if (a >= 1e-3) return with_unit(s * 1e3, "ms");
  if (a >= 1e-6) return with_unit(s * 1e6, "µs");
  return with_unit(s * 1e9, "ns");
}

std::string fmt_ms(double ms) { return with_unit(ms, "ms"); }

std::string fmt_bytes(double b) {
  const double a = std::fabs(b);
  if (a >= 1099511627776.0) return with_unit(b / 1099511627776.0, "TiB");
  if (a >= 1073741824.0) return with_unit(b / 1073741824.0, "GiB");
  if (a >= 1048576.0) return with_unit(b / 1048576.0, "MiB");
  if (a >= 1024.0) return with_unit(b / 1024.0, "KiB");
  return fmt_sig(b) + " B";
}

std::string fmt_percent(double fraction, int decimals) {
  if (!std::isfinite(fraction)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals, 100 * fraction);
  return buf;
}

std::string fmt_rate(double v, std::string_view unit) { return fmt_sig(v) + " " + std::string(unit); }

std::string fmt_flops(double f) {
  const double a = std::fabs(f);
  if (a >= 1e15) return with_unit(f / 1e15, "PFLOP/s");
  if (a >= 1e12) return with_unit(f / 1e12, "TFLOP/s");
  if (a >= 1e9) return with_unit(f / 1e9, "GFLOP/s");
  return with_unit(f, "FLOP/s");
}

std::string fmt_int(long long v) { return group_thousands(std::to_string(v)); }

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string md_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '|' || c == '*' || c == '_' || c == '`' || c == '[' || c == ']' || c == '<' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

std::string exact_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace infraplan::report
