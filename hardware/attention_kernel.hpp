#pragma once
// Which fused-attention implementation a training step runs: the profile's default attention tables
// (what PyTorch's scaled_dot_product_attention picks on the calibrated GPU: cuDNN's fused attention
// on the H200) or the FlashAttention-2 kernels (the flash-attn library, SDPA's flash backend), which
// on Hopper run without its warpgroup MMA and reach 1.6-1.8x less throughput at long sequences
// (docs/calibration.md, "Attention kernels"). Scenario key training.attention_kernel.
#include <string>
#include <vector>

namespace infraplan::hw {

enum class AttentionKernel { Default, Flash2 };

/// "default" or "flash2" (the scenario value and the profile's table suffix).
const char* attention_kernel_name(AttentionKernel k);
/// Every valid scenario value, in order.
const std::vector<std::string>& attention_kernel_names();
/// The kernel named `name`; throws infraplan::Error naming `field` and the valid choices.
AttentionKernel parse_attention_kernel(const std::string& name, const std::string& field);

}  // namespace infraplan::hw
