#pragma once
// The framework a training step runs in: which kernels surround the GEMMs and the attention.
// Frameworks are data where they can be (the profile's per-framework kernel tables, docs/training.md)
// and an op list here where the kernels differ in kind:
//   pytorch-eager  PyTorch eager with torch's own modules and functions (nn.Linear, F.rms_norm /
//                  nn.LayerNorm, F.scaled_dot_product_attention, elementwise RoPE, K/V heads repeated
//                  before attention, logits upcast to fp32 for the loss, fused AdamW);
//   transformers   PyTorch eager with Hugging Face transformers' modules: as pytorch-eager, but
//                  its own RMSNorm (fp32 statistics in five kernels) and GQA inside SDPA
//                  (enable_gqa, no repeated K/V);
//   torch-compile  the same model under torch.compile: Inductor fuses the elementwise chains
//                  (norm + cast, RoPE, SiLU·mul, residual add + next norm) into single kernels;
//   megatron       Megatron-LM / Transformer Engine: fused norms, fused QKV and gate/up GEMMs,
//                  fused RoPE and cross-entropy, gradient-accumulation fusion (16-bit weights with
//                  fp32 main gradients).
// Default when a scenario names none: pytorch-eager for the PyTorch recipes (amp-bf16,
// bf16-pure), megatron for the others (bf16-mixed, fp16-mixed, fp8-mixed).
#include <string>
#include <vector>

namespace infraplan::strat {

enum class Framework { Auto, PytorchEager, Transformers, TorchCompile, Megatron };

/// Scenario spelling ("auto", "pytorch-eager", "transformers", "torch-compile", "megatron").
const char* framework_name(Framework f);
/// The names a scenario may use (without "auto").
std::vector<std::string> framework_names();
/// Parses a name; throws infraplan::Error naming `path`, the value and the valid choices.
Framework parse_framework(const std::string& s, const std::string& path);

/// True for the eager PyTorch frameworks (pytorch-eager, transformers).
inline bool is_eager(Framework f) { return f == Framework::PytorchEager || f == Framework::Transformers; }

}  // namespace infraplan::strat
