#pragma once
// The three operand layouts of a linear layer's GEMMs in a training step, as a framework hands
// them to cuBLAS (row-major tensors, output [m, n], reduction over k); names are cuBLAS's
// column-major operation pairs of that call:
//   TN — forward of a linear layer,   Y[m,n]  = X[m,k] · W[n,k]ᵀ   (m = tokens)
//   NN — its input gradient,          dX[m,n] = dY[m,k] · W[k,n]   (m = tokens, k = out features)
//   NT — its weight gradient,         dW[m,n] = dY[k,m]ᵀ · X[k,n]  (m = out, n = in features, k = tokens)
// The same FLOPs, other kernels: cuBLAS picks per layout (docs/calibration.md, "GEMM layouts").
// One definition for the cost models (hardware/) and the calibration kernels (calib_kernels/).
#include <optional>
#include <string_view>

namespace infraplan {

enum class GemmLayout { TN, NN, NT };

/// "tn", "nn", "nt".
const char* gemm_layout_name(GemmLayout l);
/// Parses "tn", "nn", "nt" (case-insensitive); nullopt otherwise.
std::optional<GemmLayout> parse_gemm_layout(std::string_view s);

}  // namespace infraplan
