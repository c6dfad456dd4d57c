#pragma once
// Colours of the report's charts. The qualitative palette is Okabe & Ito's ("Color Universal
// Design", 2008), chosen to stay distinguishable under the common colour-vision deficiencies;
// categories that need more than its eight colours continue with Paul Tol's "muted" scheme
// (personal.sron.nl/~pault), which has the same property. A category keeps its colour in every
// chart of a report.
#include <string>
#include <string_view>

namespace infraplan::report {

/// The i-th colour of the qualitative palette ("#RRGGBB"; cycles after 12).
std::string series_color(int i);

/// The colour of a training time category: "compute", "recompute", "optimizer", "host",
/// "bubble", or a communication kind ("tp", "cp", "ep", "pp", "dp"); others by a stable hash.
std::string category_color(std::string_view category);

/// Colour of reference lines (capacity, SLO targets).
inline constexpr const char* kReferenceColor = "#D55E00";
/// Text and axis colour.
inline constexpr const char* kInkColor = "#222222";
/// Grid line colour.
inline constexpr const char* kGridColor = "#E3E3E3";

}  // namespace infraplan::report
