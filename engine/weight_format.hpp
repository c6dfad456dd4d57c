#pragma once
// WeightFormat: how the engine stores the weights of the transformer layers' linear layers
// (fused QKV, O, fused gate/up, down) and runs their GEMMs. bf16: bf16 weights and activations.
// fp8 (W8A8): those four weights quantized once at load to FP8 E4M3 with one fp32 scale per
// (fused) weight tensor, amax / 448; their GEMM inputs quantized to E4M3 at every step with one
// dynamic scale per tensor (the step's rows); fp32 accumulation, bf16 outputs. The embedding,
// the LM head and the norms stay bf16 in both. CUDA-free.
#include <string>

#include "engine/weight_layout.hpp"

namespace infraplan::engine {

enum class WeightFormat { BF16, FP8 };

/// "bf16", "fp8".
const char* weight_format_name(WeightFormat f);
/// Parses "bf16" or "fp8"; throws infraplan::Error naming `field`, the value and the choices.
WeightFormat parse_weight_format(const std::string& s, const std::string& field);

/// The GEMMs of a layer whose inputs fp8 quantizes, in the order a layer runs them.
constexpr int kFp8Gemms = 4;
/// Index of a layer tensor among those GEMMs: Qkv 0, O 1, GateUp 2, Down 3; −1 for the norms.
int fp8_gemm_index(LayerTensor t);
/// True for the tensors that fp8 stores as E4M3 (the four linear layers of every layer).
inline bool is_fp8_linear(LayerTensor t) { return fp8_gemm_index(t) >= 0; }

}  // namespace infraplan::engine
