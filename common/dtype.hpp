#pragma once
// Numeric formats used by weights, activations, KV cache and GEMMs.
#include <string>
#include <string_view>
#include <vector>

namespace infraplan {

/// A storage / compute format. Sub-byte formats report fractional bytes.
enum class Dtype { FP64, FP32, TF32, BF16, FP16, FP8, INT8, INT4, FP4 };

/// Bytes per element (0.5 for 4-bit formats; TF32 is stored as 4 bytes).
double dtype_bytes(Dtype d);
/// Canonical lower-case name: "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4".
std::string_view dtype_name(Dtype d);
/// Parses a canonical name (also "e4m3" for fp8, "nvfp4" for fp4); throws infraplan::Error naming
/// `field` and the valid choices on anything else.
Dtype parse_dtype(std::string_view s, std::string_view field);
/// All formats in declaration order.
const std::vector<Dtype>& all_dtypes();

}  // namespace infraplan
