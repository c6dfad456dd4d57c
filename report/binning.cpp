// Binning long series for charts: a 100,000-request run samples its engine every half second of
// simulated time; the chart needs a few hundred points. Each bin keeps the mean x and the mean,
// minimum and maximum y, so spikes stay visible as a band.
#include <algorithm>
#include <limits>

#include "report/sections.hpp"

namespace infraplan::report {

Binned bin_series(const std::vector<double>& x, const std::vector<double>& y, std::size_t bins) {
  Binned b;
  const std::size_t n = std::min(x.size(), y.size());
  if (n <= bins || bins == 0) {
    b.x.assign(x.begin(), x.begin() + long(n));
    b.mean.assign(y.begin(), y.begin() + long(n));
    b.min = b.mean;
    b.max = b.mean;
    return b;
  }
  // Equal counts per bin (samples are evenly spaced in time, so this is equal time too).
  for (std::size_t i = 0; i < bins; ++i) {
    const std::size_t lo = i * n / bins, hi = (i + 1) * n / bins;
    if (hi <= lo) continue;
    double sx = 0, sy = 0, mn = std::numeric_limits<double>::infinity(), mx = -mn;
    for (std::size_t j = lo; j < hi; ++j) {
      sx += x[j];
      sy += y[j];
      mn = std::min(mn, y[j]);
      mx = std::max(mx, y[j]);
    }
    const double c = double(hi - lo);
    b.x.push_back(sx / c);
    b.mean.push_back(sy / c);
    b.min.push_back(mn);
    b.max.push_back(mx);
  }
  return b;
}

}  // namespace infraplan::report
