#include "gui/palette.hpp"

#include <array>

namespace infraplan::gui {

QColor series_color(int i) {
  // Tableau 10 plus two greys: distinguishable, print-safe.
  static constexpr std::array<unsigned, 12> kColors = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2,
                                                       0x59a14f, 0xedc948, 0xb07aa1, 0xff9da7,
                                                       0x9c755f, 0xbab0ac, 0x5f6b6d, 0x8cd17d};
  return QColor::fromRgb(kColors[std::size_t(i) % kColors.size()]);
}

QColor category_color(const QString& c) {
  if (c == "compute") return QColor::fromRgb(0x4e79a7);
  if (c == "recompute") return QColor::fromRgb(0x76b7b2);
  if (c == "optimizer") return QColor::fromRgb(0x59a14f);
  if (c == "bubble") return QColor::fromRgb(0xbab0ac);
  if (c == "host") return QColor::fromRgb(0x5f6b6d);
  if (c == "tp") return QColor::fromRgb(0xf28e2b);
  if (c == "cp") return QColor::fromRgb(0xedc948);
  if (c == "ep") return QColor::fromRgb(0xb07aa1);
  if (c == "pp") return QColor::fromRgb(0xe15759);
  if (c == "dp") return QColor::fromRgb(0x9c755f);
  return QColor::fromRgb(0x8cd17d);
}

}  // namespace infraplan::gui
