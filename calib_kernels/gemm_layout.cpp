#include "calib_kernels/gemm_layout.hpp"

namespace infraplan::calib {

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

bool parse_gemm_layout(const std::string& s, GemmLayout* out) {
  for (GemmLayout l : {GemmLayout::TN, GemmLayout::NN, GemmLayout::NT})
    if (s == gemm_layout_name(l)) {
      *out = l;
      return true;
    }
  return false;
}

LayoutLd layout_ld(GemmLayout l, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t row_align) {
  auto up = [&](std::int64_t x) { return (x + row_align - 1) / row_align * row_align; };
  LayoutLd ld;
  ld.y = up(n);
  switch (l) {
    case GemmLayout::TN:
      ld.a = up(k), ld.b = up(k);
      break;
    case GemmLayout::NN:
      ld.a = up(k), ld.b = up(n);
      break;
    case GemmLayout::NT:
      ld.a = up(m), ld.b = up(n);
      break;
  }
  return ld;
}

}  // namespace infraplan::calib
