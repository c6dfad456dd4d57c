#pragma once
// Low-level SVG drawing for the report's charts: a string builder with the few elements the
// charts use, axis scales (linear or log) with readable tick values, and the plot frame (grid,
// axes, tick labels, axis titles, legend). Coordinates are SVG user units in a viewBox 960 wide;
// the page scales the chart to its column. Numbers are written with two decimals so the same
// chart gives the same bytes.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace infraplan::report::svg {

/// Width of every chart's viewBox, user units.
inline constexpr double kWidth = 960;

/// Formats a coordinate with two decimals ("12.35").
std::string num(double v);

/// Accumulates SVG markup.
class Canvas {
 public:
  Canvas(double width, double height, std::string_view title, std::string_view description);
  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra = "");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            std::string_view extra = "");
  /// A polyline through points (xs[i], ys[i]).
  void polyline(const std::vector<double>& xs, const std::vector<double>& ys, std::string_view stroke,
                double width = 2, std::string_view extra = "");
  /// A closed polygon (bands).
  void polygon(const std::vector<double>& xs, const std::vector<double>& ys, std::string_view fill,
               std::string_view extra = "");
  void circle(double cx, double cy, double r, std::string_view fill, std::string_view extra = "");
  /// Text; `anchor` is "start", "middle" or "end".
  void text(double x, double y, std::string_view s, std::string_view anchor = "start", double size = 12,
            std::string_view extra = "");
  /// A tooltip for the last element drawn is not possible in plain SVG; titles go on groups.
  void open_group(std::string_view cls, std::string_view tooltip = "");
  void close_group();
  /// Raw markup (already escaped).
  void raw(std::string_view s) { body_ += s; }
  double width() const { return w_; }
  double height() const { return h_; }
  /// The finished <svg> element.
  std::string str() const;

 private:
  double w_, h_;
  std::string head_, body_;
};

/// Maps data values to a pixel range; linear or base-10 logarithmic.
class Scale {
 public:
  Scale() = default;
  /// Domain [lo, hi] onto pixels [p0, p1] (p1 < p0 for a y axis). Log scales need lo > 0.
  Scale(double lo, double hi, double p0, double p1, bool log = false);
  double operator()(double v) const;
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  bool log() const { return log_; }
  /// Tick values: 1-2-5 steps (about `target` of them) for linear scales, decades (and 2, 5
  /// between them when few decades) for log scales.
  std::vector<double> ticks(int target = 6) const;

 private:
  double lo_ = 0, hi_ = 1, p0_ = 0, p1_ = 1;
  bool log_ = false;
};

/// A "nice" axis domain covering [lo, hi]: linear ends rounded to the tick step (lo clamped to
/// 0 when `from_zero`), log ends to decades.
std::pair<double, double> nice_domain(double lo, double hi, bool log, bool from_zero);

/// Axis description shared by the chart types.
struct Axis {
  std::string title;  ///< with its unit, e.g. "time to first token (ms)"
  bool log = false;
  bool from_zero = true;                           ///< linear axes start at 0 unless false
  std::function<std::string(double)> tick_format;  ///< default: compact number
  double min = 0, max = 0;                         ///< fixed domain when max > min
};

/// A compact tick label: "0", "2.5", "10k", "1.5M", "0.001".
std::string tick_label(double v);

/// The plot area inside a chart: margins for axis labels and a legend row on top.
struct Frame {
  double left = 78, right = 24, top = 40, bottom = 52;
  double x0() const { return left; }
  double x1(double width) const { return width - right; }
  double y0() const { return top; }
  double y1(double height) const { return height - bottom; }
};

/// Draws grid lines, ticks, tick labels and axis titles for a 2-D plot.
void draw_axes(Canvas& c, const Frame& f, const Scale& x, const Axis& xa, const Scale& y, const Axis& ya);

/// A legend entry: swatch colour, label, and the swatch style ("box", "line", "dash", "dot").
struct LegendItem {
  std::string label, color, style = "box";
};
/// Height a legend of `items` takes when wrapped at `max_width`.
double legend_height(double max_width, const std::vector<LegendItem>& items);
/// Draws a legend as one or more rows starting at (x, y); returns the height used.
double draw_legend(Canvas& c, double x, double y, double max_width, const std::vector<LegendItem>& items);

}  // namespace infraplan::report::svg
