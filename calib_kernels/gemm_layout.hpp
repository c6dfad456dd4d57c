#pragma once
// The three operand layouts of a linear layer's GEMMs in a training step, as a framework hands
// them to cuBLAS (PyTorch's F.linear and its autograd backward; row-major tensors, output [m, n],
// reduction over k). Names are cuBLAS's column-major operation pairs (op(A), op(B)) of the call:
//   TN — forward,          Y[m,n]  = X[m,k] · W[n,k]ᵀ     (both operands k-contiguous)
//   NN — input gradient,   dX[m,n] = dY[m,k] · W[k,n]      (W n-contiguous)
//   NT — weight gradient,  dW[m,n] = dY[k,m]ᵀ · X[k,n]     (both operands reduced over rows: k = tokens)
// In every layout operand A (the "X" buffer of the timers) holds m·k elements and operand B (the
// "W" buffer) n·k elements; only the leading dimensions differ.
#include <cstdint>
#include <string>

namespace infraplan::calib {

enum class GemmLayout { TN, NN, NT };

/// "tn", "nn", "nt".
const char* gemm_layout_name(GemmLayout l);
/// Parses "tn", "nn" or "nt" (lower case); false otherwise.
bool parse_gemm_layout(const std::string& s, GemmLayout* out);

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
