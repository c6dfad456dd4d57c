#include "report/svg_canvas.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/format.hpp"
#include "report/palette.hpp"

namespace infraplan::report::svg {

std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  // Trim trailing zeros: "12.50" → "12.5", "3.00" → "3".
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

Canvas::Canvas(double width, double height, std::string_view title, std::string_view description)
    : w_(width), h_(height) {
  head_ = "<svg viewBox=\"0 0 " + num(width) + " " + num(height) + "\" role=\"img\" class=\"chart\"><title>" +
          html_escape(title) + "</title>";
  if (!description.empty()) head_ += "<desc>" + html_escape(description) + "</desc>";
}

void Canvas::rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra) {
  body_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.0, w)) +
           "\" height=\"" + num(std::max(0.0, h)) + "\" fill=\"" + std::string(fill) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += "/>";
}

void Canvas::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
                  std::string_view extra) {
  body_ += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
           "\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + num(width) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += "/>";
}

static std::string points(const std::vector<double>& xs, const std::vector<double>& ys) {
  std::string p;
  const std::size_t n = std::min(xs.size(), ys.size());
  p.reserve(n * 14);
  for (std::size_t i = 0; i < n; ++i) {
    if (i) p += ' ';
    p += num(xs[i]) + "," + num(ys[i]);
  }
  return p;
}

void Canvas::polyline(const std::vector<double>& xs, const std::vector<double>& ys, std::string_view stroke,
                      double width, std::string_view extra) {
  body_ += "<polyline fill=\"none\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + num(width) +
           "\" stroke-linejoin=\"round\" points=\"" + points(xs, ys) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += "/>";
}

void Canvas::polygon(const std::vector<double>& xs, const std::vector<double>& ys, std::string_view fill,
                     std::string_view extra) {
  body_ += "<polygon fill=\"" + std::string(fill) + "\" points=\"" + points(xs, ys) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += "/>";
}

void Canvas::circle(double cx, double cy, double r, std::string_view fill, std::string_view extra) {
  body_ += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) + "\" fill=\"" +
           std::string(fill) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += "/>";
}

void Canvas::text(double x, double y, std::string_view s, std::string_view anchor, double size,
                  std::string_view extra) {
  body_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(size) + "\"";
  if (anchor != "start") body_ += " text-anchor=\"" + std::string(anchor) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += ">" + html_escape(s) + "</text>";
}

void Canvas::open_group(std::string_view cls, std::string_view tooltip) {
  body_ += "<g";
  if (!cls.empty()) body_ += " class=\"" + std::string(cls) + "\"";
  body_ += ">";
  if (!tooltip.empty()) body_ += "<title>" + html_escape(tooltip) + "</title>";
}

void Canvas::close_group() { body_ += "</g>"; }

std::string Canvas::str() const {
  return head_ + "<g font-family=\"inherit\" fill=\"" + kInkColor + "\">" + body_ + "</g></svg>";
}

Scale::Scale(double lo, double hi, double p0, double p1, bool log)
    : lo_(lo), hi_(hi), p0_(p0), p1_(p1), log_(log) {
  if (log_) {
    if (!(lo_ > 0)) lo_ = 1e-9;
    if (!(hi_ > lo_)) hi_ = lo_ * 10;
  } else if (!(hi_ > lo_)) {
    hi_ = lo_ + 1;
  }
}

double Scale::operator()(double v) const {
  double f;
  if (log_) {
    f = (std::log10(std::max(v, lo_ * 1e-3)) - std::log10(lo_)) / (std::log10(hi_) - std::log10(lo_));
  } else {
    f = (v - lo_) / (hi_ - lo_);
  }
  return p0_ + f * (p1_ - p0_);
}

static double nice_step(double range, int target) {
  const double raw = range / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10) * mag;
}

std::vector<double> Scale::ticks(int target) const {
  std::vector<double> t;
  if (log_) {
    const int d0 = int(std::floor(std::log10(lo_) + 1e-9)), d1 = int(std::ceil(std::log10(hi_) - 1e-9));
    const bool dense = d1 - d0 <= 2;
    for (int d = d0; d <= d1; ++d)
      for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        const double v = m * std::pow(10.0, d);
        if (v >= lo_ * (1 - 1e-9) && v <= hi_ * (1 + 1e-9)) t.push_back(v);
      }
    return t;
  }
  const double step = nice_step(hi_ - lo_, target);
  for (double v = std::ceil(lo_ / step - 1e-9) * step; v <= hi_ + step * 1e-9; v += step)
    t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return t;
}

std::pair<double, double> nice_domain(double lo, double hi, bool log, bool from_zero) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (log) {
    lo = std::max(lo, 1e-12);
    hi = std::max(hi, lo * 1.0001);
    return {std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi)))};
  }
  if (from_zero) lo = std::min(0.0, lo);
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1);
  const double step = nice_step(hi - lo, 6);
  return {std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step};
}

std::string tick_label(double v) {
  const double a = std::fabs(v);
  if (a == 0) return "0";
  auto trim = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", x);
    return std::string(buf);
  };
  if (a >= 1e9) return trim(v / 1e9) + "G";
  if (a >= 1e6) return trim(v / 1e6) + "M";
  if (a >= 1e4) return trim(v / 1e3) + "k";
  if (a >= 1e-3) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);  // 2500, 0.25, 12.5: no exponent below 1e4
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0e", v);
  return buf;
}

void draw_axes(Canvas& c, const Frame& f, const Scale& x, const Axis& xa, const Scale& y, const Axis& ya) {
  const double X0 = f.x0(), X1 = f.x1(c.width()), Y0 = f.y0(), Y1 = f.y1(c.height());
  auto xl = xa.tick_format ? xa.tick_format : tick_label;
  auto yl = ya.tick_format ? ya.tick_format : tick_label;
  c.open_group("axes");
  for (double t : y.ticks(5)) {
    const double py = y(t);
    c.line(X0, py, X1, py, kGridColor);
    c.text(X0 - 6, py + 4, yl(t), "end", 11);
  }
  for (double t : x.ticks(8)) {
    const double px = x(t);
    c.line(px, Y1, px, Y1 + 4, kInkColor);
    c.text(px, Y1 + 17, xl(t), "middle", 11);
  }
  c.line(X0, Y1, X1, Y1, kInkColor);
  c.line(X0, Y0, X0, Y1, kInkColor);
  if (!xa.title.empty()) c.text((X0 + X1) / 2, Y1 + 38, xa.title, "middle", 12);
  if (!ya.title.empty())
    c.text(16, (Y0 + Y1) / 2, ya.title, "middle", 12,
           "transform=\"rotate(-90 16 " + num((Y0 + Y1) / 2) + ")\"");
  c.close_group();
}

static double label_width(const std::string& s) {
  // Approximate advance of a 12-unit sans-serif font; multi-byte characters count once.
  double n = 0;
  for (unsigned char ch : s)
    if ((ch & 0xC0) != 0x80) n += 1;
  return 6.6 * n;
}

double legend_height(double max_width, const std::vector<LegendItem>& items) {
  if (items.empty()) return 0;
  double cx = 0, rows = 1;
  for (const auto& it : items) {
    const double w = 22 + label_width(it.label) + 14;
    if (cx > 0 && cx + w > max_width) {
      cx = 0;
      ++rows;
    }
    cx += w;
  }
  return 18 * rows;
}

double draw_legend(Canvas& c, double x, double y, double max_width, const std::vector<LegendItem>& items) {
  if (items.empty()) return 0;
  double cx = x, cy = y;
  const double row = 18;
  c.open_group("legend");
  for (const auto& it : items) {
    const double w = 22 + label_width(it.label) + 14;
    if (cx > x && cx + w > x + max_width) {
      cx = x;
      cy += row;
    }
    if (it.style == "line" || it.style == "dash") {
      c.line(cx, cy - 4, cx + 16, cy - 4, it.color, 2.5,
             it.style == "dash" ? "stroke-dasharray=\"5 3\"" : "");
    } else if (it.style == "dot") {
      c.circle(cx + 8, cy - 4, 4.5, it.color);
    } else {
      c.rect(cx, cy - 10, 16, 12, it.color, "stroke=\"#555\" stroke-width=\"0.5\"");
    }
    c.text(cx + 22, cy, it.label, "start", 12);
    cx += w;
  }
  c.close_group();
  return cy - y + row;
}

}  // namespace infraplan::report::svg
