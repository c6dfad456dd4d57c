#include "report/palette.hpp"

#include <array>
#include <map>

namespace infraplan::report {

namespace {

// Okabe–Ito (blue, orange, bluish green, vermillion, reddish purple, sky blue, yellow, black),
// then Tol muted (indigo, wine, olive, teal).
constexpr std::array<const char*, 12> kPalette = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                  "#CC79A7", "#56B4E9", "#F0E442", "#000000",
                                                  "#332288", "#882255", "#999933", "#44AA99"};

}  // namespace

std::string series_color(int i) {
  if (i < 0) i = -i;
  return kPalette[std::size_t(i) % kPalette.size()];
}

std::string category_color(std::string_view c) {
  static const std::map<std::string_view, const char*> fixed = {
      {"compute", "#0072B2"}, {"recompute", "#56B4E9"}, {"optimizer", "#009E73"}, {"host", "#F0E442"},
      {"bubble", "#BBBBBB"},  {"tp", "#E69F00"},        {"cp", "#CC79A7"},        {"ep", "#D55E00"},
      {"pp", "#332288"},      {"dp", "#882255"},
  };
  if (auto it = fixed.find(c); it != fixed.end()) return it->second;
  unsigned h = 0;
  for (char ch : c) h = h * 31 + static_cast<unsigned char>(ch);
  return series_color(int(h % 12));
}

}  // namespace infraplan::report
