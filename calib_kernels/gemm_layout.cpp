#include "calib_kernels/gemm_layout.hpp"

namespace infraplan::calib {

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
