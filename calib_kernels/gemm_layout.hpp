#pragma once
// The leading dimensions of the three operand layouts of a linear layer's GEMMs
// (common/gemm_layout.hpp: TN forward, NN input gradient, NT weight gradient) as the timers lay
// out their buffers. In every layout operand A (the "X" buffer of the timers) holds m·k elements and operand
// B (the "W" buffer) n·k elements; only the leading dimensions differ.
#include <cstdint>

#include "common/gemm_layout.hpp"

namespace infraplan::calib {

using ::infraplan::gemm_layout_name;
using ::infraplan::GemmLayout;

/// Leading dimensions (elements) of the two row-major operands and the output.
struct LayoutLd {
  std::int64_t a = 0;  ///< A: TN/NN [m][lda ≥ k]; NT [k][lda = m]
  std::int64_t b = 0;  ///< B: TN [n][ldb ≥ k]; NN/NT [k][ldb = n]
  std::int64_t y = 0;  ///< Y [m][ldy ≥ n]
  /// Elements spanned by A, B and Y with these leading dimensions.
  std::int64_t a_elems(std::int64_t m, std::int64_t k, GemmLayout l) const { return (l == GemmLayout::NT ? k : m) * a; }
  std::int64_t b_elems(std::int64_t n, std::int64_t k, GemmLayout l) const { return (l == GemmLayout::TN ? n : k) * b; }
  std::int64_t y_elems(std::int64_t m) const { return m * y; }
};

/// The leading dimensions of layout `l`; `row_align` rounds the rows of TN operands and of the
/// output up to that many elements (16 for fp8 / int8, 1 otherwise: what a framework passes).
LayoutLd layout_ld(GemmLayout l, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t row_align);

}  // namespace infraplan::calib
