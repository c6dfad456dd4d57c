#include "report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "report/format.hpp"
#include "report/palette.hpp"

namespace infraplan::report::svg {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Range {
  double lo = kInf, hi = -kInf;
  void add(double v, bool positive_only) {
    if (!std::isfinite(v) || (positive_only && v <= 0)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

Scale make_scale(const Axis& a, Range r, double p0, double p1) {
  if (a.max > a.min) return Scale(a.min, a.max, p0, p1, a.log);
  if (r.empty()) r = {a.log ? 1.0 : 0.0, a.log ? 10.0 : 1.0};
  auto [lo, hi] = nice_domain(r.lo, r.hi, a.log, a.from_zero);
  return Scale(lo, hi, p0, p1, a.log);
}

std::string ref_color(const RefLine& r) { return r.color.empty() ? kReferenceColor : r.color; }

void draw_refs(Canvas& c, const std::vector<RefLine>& refs, const Scale& x, const Scale& y, double X0,
               double X1, double Y0, double Y1) {
  int i = 0;
  for (const auto& r : refs) {
    if (r.vertical) {
      const double px = x(r.value);
      if (px < X0 - 0.5 || px > X1 + 0.5) continue;
      c.line(px, Y0, px, Y1, ref_color(r), 2, "stroke-dasharray=\"6 4\"");
      c.text(px + (px > X1 - 160 ? -4 : 4), Y0 + 12 + 14 * (i++ % 3), r.label,
             px > X1 - 160 ? "end" : "start", 11, "fill=\"" + ref_color(r) + "\"");
    } else {
      const double py = y(r.value);
      if (py < Y0 - 0.5 || py > Y1 + 0.5) continue;
      c.line(X0, py, X1, py, ref_color(r), 2, "stroke-dasharray=\"6 4\"");
      c.text(X1 - 4, py - 4, r.label, "end", 11, "fill=\"" + ref_color(r) + "\"");
    }
  }
}

void chart_title(Canvas& c, const std::string& t) { c.text(12, 20, t, "start", 14, "font-weight=\"600\""); }

/// Where a chart's legend goes: at x over width w, below the title; `gap` is the space between it
/// and the plot frame.
struct LegendPlace {
  double x, w, gap;
};

/// A chart's canvas, `height` tall plus the legend's height, with its title and legend drawn; sets
/// the frame's top below the legend.
Canvas titled_canvas(const std::string& title, const std::vector<LegendItem>& legend, LegendPlace at,
                     double height, Frame& f) {
  const double lh = legend_height(at.w, legend);
  f.top = 30 + lh + at.gap;
  Canvas c(kWidth, height + lh, title, "");
  chart_title(c, title);
  draw_legend(c, at.x, 30 + 12, at.w, legend);
  return c;
}

/// The legend over the frame's width (line, scatter and column charts).
LegendPlace over_frame(const Frame& f, double gap) { return {f.left, kWidth - f.left - f.right, gap}; }

/// The legend over the canvas's width (bar and timeline charts, whose frame leaves room for labels).
LegendPlace over_canvas(double gap) { return {12, kWidth - 24 - 12, gap}; }

}  // namespace

std::string line_chart(const LineChart& ch) {
  std::vector<LegendItem> legend;
  for (const auto& s : ch.series) legend.push_back({s.name, s.color, s.dashed ? "dash" : "line"});
  for (const auto& r : ch.refs)
    if (!r.label.empty()) legend.push_back({r.label, ref_color(r), "dash"});
  Frame f;
  Canvas c = titled_canvas(ch.title, legend, over_frame(f, 8), ch.height, f);
  Range rx, ry;
  for (const auto& s : ch.series) {
    for (double v : s.x) rx.add(v, ch.x.log);
    for (double v : s.y) ry.add(v, ch.y.log);
    for (double v : s.low) ry.add(v, ch.y.log);
    for (double v : s.high) ry.add(v, ch.y.log);
  }
  for (const auto& r : ch.refs) (r.vertical ? rx : ry).add(r.value, r.vertical ? ch.x.log : ch.y.log);
  const double X0 = f.x0(), X1 = f.x1(c.width()), Y0 = f.y0(), Y1 = f.y1(c.height());
  Scale x = make_scale(ch.x, rx, X0, X1), y = make_scale(ch.y, ry, Y1, Y0);
  draw_axes(c, f, x, ch.x, y, ch.y);
  auto clampx = [&](double v) { return std::clamp(x(v), X0, X1); };
  auto clampy = [&](double v) { return std::clamp(y(v), Y0, Y1); };
  for (const auto& s : ch.series) {
    const std::size_t n = std::min(s.x.size(), s.y.size());
    c.open_group("series", s.name);
    if (s.low.size() == n && s.high.size() == n && n > 0) {
      std::vector<double> px, py;
      for (std::size_t i = 0; i < n; ++i) px.push_back(clampx(s.x[i])), py.push_back(clampy(s.high[i]));
      for (std::size_t i = n; i-- > 0;) px.push_back(clampx(s.x[i])), py.push_back(clampy(s.low[i]));
      c.polygon(px, py, s.color, "fill-opacity=\"0.18\"");
    }
    std::vector<double> px, py;
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      if ((ch.x.log && s.x[i] <= 0) || (ch.y.log && s.y[i] <= 0)) continue;
      if (s.step && !px.empty()) px.push_back(clampx(s.x[i])), py.push_back(py.back());
      px.push_back(clampx(s.x[i]));
      py.push_back(clampy(s.y[i]));
    }
    c.polyline(px, py, s.color, 2.2, s.dashed ? "stroke-dasharray=\"7 4\"" : "");
    c.close_group();
  }
  draw_refs(c, ch.refs, x, y, X0, X1, Y0, Y1);
  return c.str();
}

std::string stacked_bars(const StackedBars& ch) {
  std::vector<LegendItem> legend;
  for (std::size_t k = 0; k < ch.categories.size(); ++k)
    legend.push_back({ch.categories[k], ch.colors[k], "box"});
  for (const auto& r : ch.refs)
    if (!r.label.empty()) legend.push_back({r.label, ref_color(r), "dash"});
  double label_w = 60;
  for (const auto& l : ch.bar_labels) label_w = std::max(label_w, 7.0 * double(l.size()) + 12);
  Frame f;
  f.left = std::min(label_w, 260.0);
  f.right = ch.bar_notes.empty() ? 24 : 130;
  const double bar_h = ch.bar_labels.size() > 16 ? 14 : 26, gap = ch.bar_labels.size() > 16 ? 4 : 10;
  const double plot_h = double(ch.bar_labels.size()) * (bar_h + gap) + gap;
  Canvas c = titled_canvas(ch.title, legend, over_canvas(10), 30 + 10 + plot_h + f.bottom, f);
  Range r;
  r.add(0, false);
  for (const auto& bar : ch.values) {
    double s = 0;
    for (double v : bar) s += std::max(0.0, v);
    r.add(s, false);
  }
  for (const auto& ref : ch.refs) r.add(ref.value, false);
  const double X0 = f.x0(), X1 = f.x1(c.width()), Y0 = f.y0(), Y1 = f.y1(c.height());
  Scale x = make_scale(ch.value_axis, r, X0, X1);
  Scale y(0, 1, Y1, Y0);
  // Value axis ticks and grid (no y ticks: the bars carry labels).
  c.open_group("axes");
  auto xl = ch.value_axis.tick_format ? ch.value_axis.tick_format : tick_label;
  for (double t : x.ticks(8)) {
    c.line(x(t), Y0, x(t), Y1, kGridColor);
    c.text(x(t), Y1 + 17, xl(t), "middle", 11);
  }
  c.line(X0, Y1, X1, Y1, kInkColor);
  c.line(X0, Y0, X0, Y1, kInkColor);
  c.text((X0 + X1) / 2, Y1 + 38, ch.value_axis.title, "middle", 12);
  c.close_group();
  for (std::size_t b = 0; b < ch.values.size(); ++b) {
    const double top = Y0 + gap + double(b) * (bar_h + gap);
    c.text(X0 - 8, top + bar_h / 2 + 4, b < ch.bar_labels.size() ? ch.bar_labels[b] : "", "end", 12);
    double acc = 0;
    for (std::size_t k = 0; k < ch.values[b].size(); ++k) {
      const double v = std::max(0.0, ch.values[b][k]);
      if (v <= 0) continue;
      const double a = x(acc), e = x(acc + v);
      c.open_group("segment", (b < ch.bar_labels.size() ? ch.bar_labels[b] + " · " : "") +
                                  (k < ch.categories.size() ? ch.categories[k] : "") + ": " + fmt_sig(v));
      c.rect(std::min(a, X1), top, std::min(e, X1) - std::min(a, X1), bar_h, ch.colors[k % ch.colors.size()],
             "stroke=\"#FFFFFF\" stroke-width=\"0.6\"");
      c.close_group();
      acc += v;
    }
    if (b < ch.bar_notes.size())
      c.text(std::min(x(acc), X1) + 6, top + bar_h / 2 + 4, ch.bar_notes[b], "start", 11);
  }
  draw_refs(c, ch.refs, x, y, X0, X1, Y0, Y1);
  return c.str();
}

std::string grouped_columns(const GroupedColumns& ch) {
  std::vector<LegendItem> legend;
  for (std::size_t k = 0; k < ch.series_names.size(); ++k)
    legend.push_back({ch.series_names[k], ch.colors[k], "box"});
  for (const auto& r : ch.refs)
    if (!r.label.empty()) legend.push_back({r.label, ref_color(r), "dash"});
  Frame f;
  const bool rotate = ch.labels.size() > 12;
  f.bottom = rotate ? 90 : 56;
  Canvas c = titled_canvas(ch.title, legend, over_frame(f, 10), 300 + (rotate ? 34 : 0), f);
  Range r;
  r.add(0, false);
  for (const auto& s : ch.values)
    for (double v : s) r.add(v, false);
  for (const auto& ref : ch.refs) r.add(ref.value, false);
  const double X0 = f.x0(), X1 = f.x1(c.width()), Y0 = f.y0(), Y1 = f.y1(c.height());
  Scale y = make_scale(ch.value_axis, r, Y1, Y0);
  auto yl = ch.value_axis.tick_format ? ch.value_axis.tick_format : tick_label;
  c.open_group("axes");
  for (double t : y.ticks(5)) {
    c.line(X0, y(t), X1, y(t), kGridColor);
    c.text(X0 - 6, y(t) + 4, yl(t), "end", 11);
  }
  c.line(X0, Y1, X1, Y1, kInkColor);
  c.line(X0, Y0, X0, Y1, kInkColor);
  c.text(16, (Y0 + Y1) / 2, ch.value_axis.title, "middle", 12,
         "transform=\"rotate(-90 16 " + num((Y0 + Y1) / 2) + ")\"");
  c.close_group();
  const double n = std::max<double>(1, double(ch.labels.size()));
  const double slot = (X1 - X0) / n, ns = std::max<double>(1, double(ch.values.size()));
  const double col = std::min(48.0, slot * 0.8 / ns);
  for (std::size_t i = 0; i < ch.labels.size(); ++i) {
    const double cx = X0 + slot * (double(i) + 0.5);
    if (rotate)
      c.text(cx, Y1 + 14, ch.labels[i], "end", 11,
             "transform=\"rotate(-40 " + num(cx) + " " + num(Y1 + 14) + ")\"");
    else
      c.text(cx, Y1 + 17, ch.labels[i], "middle", 11);
    for (std::size_t s = 0; s < ch.values.size(); ++s) {
      if (i >= ch.values[s].size()) continue;
      const double v = ch.values[s][i];
      const double x0 = cx - col * ns / 2 + col * double(s);
      c.open_group("column", ch.labels[i] + " · " + (s < ch.series_names.size() ? ch.series_names[s] : "") +
                                 ": " + fmt_sig(v));
      c.rect(x0, y(std::max(0.0, v)), col - 2, Y1 - y(std::max(0.0, v)), ch.colors[s % ch.colors.size()]);
      c.close_group();
    }
  }
  Scale x(0, 1, X0, X1);
  draw_refs(c, ch.refs, x, y, X0, X1, Y0, Y1);
  return c.str();
}

std::string timeline(const Timeline& ch) {
  std::vector<LegendItem> legend;
  for (std::size_t k = 0; k < ch.categories.size(); ++k)
    legend.push_back({ch.categories[k], ch.colors[k], "box"});
  if (!ch.bands.empty()) legend.push_back({ch.band_label, "#999999", "box"});
  Frame f;
  double label_w = 60;
  for (const auto& l : ch.rows) label_w = std::max(label_w, 7.0 * double(l.size()) + 12);
  f.left = std::min(label_w, 200.0);
  const double row_h = ch.rows.size() > 16 ? 12 : 28, gap = ch.rows.size() > 16 ? 3 : 8;
  const double plot_h = double(ch.rows.size()) * (row_h + gap) + gap;
  Canvas c = titled_canvas(ch.title, legend, over_canvas(10), 30 + 10 + plot_h + f.bottom, f);
  Range r;
  r.add(0, false);
  for (const auto& s : ch.spans) r.add(s.end, false);
  for (const auto& b : ch.bands) r.add(b.second, false);
  const double X0 = f.x0(), X1 = f.x1(c.width()), Y0 = f.y0(), Y1 = f.y1(c.height());
  Axis ta = ch.time_axis;
  Scale x = make_scale(ta, r, X0, X1);
  auto xl = ta.tick_format ? ta.tick_format : tick_label;
  c.open_group("axes");
  for (double t : x.ticks(8)) {
    c.line(x(t), Y0, x(t), Y1, kGridColor);
    c.text(x(t), Y1 + 17, xl(t), "middle", 11);
  }
  c.line(X0, Y1, X1, Y1, kInkColor);
  c.text((X0 + X1) / 2, Y1 + 38, ta.title, "middle", 12);
  for (std::size_t i = 0; i < ch.rows.size(); ++i)
    c.text(X0 - 8, Y0 + gap + double(i) * (row_h + gap) + row_h / 2 + 4, ch.rows[i], "end", 11);
  c.close_group();
  for (const auto& b : ch.bands) {
    c.open_group("band", ch.band_label);
    c.rect(x(b.first), Y0, std::max(1.0, x(b.second) - x(b.first)), Y1 - Y0, "#999999",
           "fill-opacity=\"0.25\"");
    c.close_group();
  }
  // One group per category keeps the markup small for many spans.
  for (std::size_t k = 0; k < ch.categories.size(); ++k) {
    c.open_group("spans", ch.categories[k]);
    for (const auto& s : ch.spans) {
      if (s.category != int(k)) continue;
      const double a = x(s.start), e = std::max(x(s.end), a + 0.4);
      c.rect(a, Y0 + gap + double(s.row) * (row_h + gap), e - a, row_h, ch.colors[k]);
    }
    c.close_group();
  }
  return c.str();
}

std::string scatter(const Scatter& ch) {
  std::vector<LegendItem> legend;
  for (const auto& g : ch.groups) legend.push_back({g.name, g.color, g.connect ? "line" : "dot"});
  Frame f;
  Canvas c = titled_canvas(ch.title, legend, over_frame(f, 8), ch.height, f);
  Range rx, ry;
  for (const auto& g : ch.groups) {
    for (double v : g.x) rx.add(v, ch.x.log);
    for (double v : g.y) ry.add(v, ch.y.log);
  }
  const double X0 = f.x0(), X1 = f.x1(c.width()), Y0 = f.y0(), Y1 = f.y1(c.height());
  Scale x = make_scale(ch.x, rx, X0, X1), y = make_scale(ch.y, ry, Y1, Y0);
  draw_axes(c, f, x, ch.x, y, ch.y);
  for (const auto& g : ch.groups) {
    const std::size_t n = std::min(g.x.size(), g.y.size());
    c.open_group("points", g.name);
    if (g.connect && n > 1) {
      std::vector<std::size_t> idx(n);
      std::iota(idx.begin(), idx.end(), 0);
      std::sort(idx.begin(), idx.end(), [&](auto a, auto b) { return g.x[a] < g.x[b]; });
      std::vector<double> px, py;
      for (auto i : idx) px.push_back(x(g.x[i])), py.push_back(y(g.y[i]));
      c.polyline(px, py, g.color, 2);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(g.x[i]) || !std::isfinite(g.y[i])) continue;
      const std::string tip =
          (i < g.labels.size() ? g.labels[i] + ": " : "") + fmt_sig(g.x[i]) + ", " + fmt_sig(g.y[i]);
      c.open_group("point", tip);
      c.circle(x(g.x[i]), y(g.y[i]), g.connect ? 5 : 4, g.color, "stroke=\"#FFFFFF\" stroke-width=\"1\"");
      c.close_group();
      if (g.connect && i < g.labels.size() && n <= 8) {
        // Labels near the right edge run leftwards so they stay inside the plot.
        const bool right = x(g.x[i]) > X1 - 220;
        c.text(x(g.x[i]) + (right ? -7 : 7), y(g.y[i]) - 7, g.labels[i], right ? "end" : "start", 10);
      }
    }
    c.close_group();
  }
  return c.str();
}

}  // namespace infraplan::report::svg
