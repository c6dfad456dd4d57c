#include "common/gemm_layout.hpp"

#include <cctype>
#include <string>

namespace infraplan {

const char* gemm_layout_name(GemmLayout l) {
  switch (l) {
    case GemmLayout::TN:
      return "tn";
    case GemmLayout::NN:
      return "nn";
    case GemmLayout::NT:
      return "nt";
  }
  return "?";
}

std::optional<GemmLayout> parse_gemm_layout(std::string_view s) {
  std::string low(s);
  for (char& c : low) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (GemmLayout l : {GemmLayout::TN, GemmLayout::NN, GemmLayout::NT})
    if (low == gemm_layout_name(l)) return l;
  return std::nullopt;
}

}  // namespace infraplan
