#pragma once
// KvFormat: how the engine stores its paged KV cache. bf16: 2 bytes per element. fp8: FP8 E4M3
// (1 byte per element, the same [block][kv_head][16][128] layout), so the same memory holds twice
// the blocks. An fp8 element's value is its E4M3 value times a static scale: one for the keys
// and one for the values of each layer (KvScales). The cache write quantizes x to E4M3(x / scale)
// (round to nearest even, saturate to ±448: engine/fp8_e4m3.hpp); attention reads the E4M3 codes,
// widens them to bf16 (exact: E4M3 has 3 mantissa bits) and applies the key scale to the scores
// and the value scale to the output in fp32. CUDA-free.
#include <cstdint>
#include <string>
#include <vector>

namespace infraplan::engine {

enum class KvFormat { BF16, FP8 };

/// "bf16", "fp8".
const char* kv_format_name(KvFormat f);
/// Parses "bf16" or "fp8"; throws infraplan::Error naming `field`, the value and the choices.
KvFormat parse_kv_format(const std::string& s, const std::string& field);
/// Bytes of one cached element: 2 (bf16) or 1 (fp8).
inline int kv_element_bytes(KvFormat f) { return f == KvFormat::FP8 ? 1 : 2; }

/// The fp8 cache's dequantization scales, [layers][2] (key, value). The default is 1 for every
/// layer (what vLLM and TensorRT-LLM use when a checkpoint carries no KV scales): E4M3's relative
/// precision is the same everywhere in its normal range, so a scale only has to keep the cached
/// values below 448 · scale and the ones that matter above 2⁻⁶ · scale; LLaMA keys and values
/// (and this engine's random weights, whose projections have unit variance) lie well inside
/// [2⁻⁶, 448] at scale 1, and a static scale cannot be outgrown by a later prompt the way a scale
/// taken from the first prefill's amax can (docs/serving.md, "fp8 KV cache").
struct KvScales {
  std::vector<float> kv;  ///< [layers][2]; empty: 1 everywhere

  /// Layer l's key scale / value scale.
  float k(int layer) const { return kv.empty() ? 1.0f : kv[std::size_t(2 * layer)]; }
  float v(int layer) const { return kv.empty() ? 1.0f : kv[std::size_t(2 * layer + 1)]; }
  /// Throws infraplan::Error unless empty or [layers][2] positive finite scales.
  void validate(int layers) const;
};

}  // namespace infraplan::engine
