#pragma once
// DeviceWeights: a LLaMA decoder's weights on the device, laid out by WeightLayout — seeded random
// (generated on the GPU, bit-identical to WeightLayout::random_host) or read from local
// safetensors files (a Hugging Face model folder: config.json + *.safetensors; no downloads).
// Q/K/V and gate/up are fused on load.
//
// Formats (engine/weight_format.hpp): bf16 keeps every tensor in one bf16 buffer at its layout
// offset. fp8 quantizes each layer's QKV, O, gate/up and down weight once at load, on the GPU, to
// E4M3 with one fp32 scale per tensor (amax / 448, engine/fp8_kernels.hpp), into an E4M3 buffer;
// the embedding, norms and LM head stay bf16 in a compact bf16 buffer. The bf16 weights are made
// first and freed after quantization, so loading needs both for a moment.
#include <cstdint>
#include <string>
#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "engine/engine_kernels.hpp"
#include "engine/fp8_kernels.hpp"
#include "engine/weight_format.hpp"
#include "engine/weight_layout.hpp"

namespace infraplan::engine {

class DeviceWeights {
 public:
  /// Random weights from `seed` (fp8: the same bf16 values, then quantized).
  static DeviceWeights random(const LlamaConfig& c, std::uint64_t seed, WeightFormat f = WeightFormat::BF16);
  /// Every tensor the layout needs from these safetensors files (BF16, F16 or F32). Throws
  /// infraplan::Error naming a missing tensor or a shape that does not match the config.
  static DeviceWeights from_safetensors(const LlamaConfig& c, const std::vector<std::string>& files,
                                        WeightFormat f = WeightFormat::BF16);

  const WeightLayout& layout() const { return layout_; }
  const LlamaConfig& config() const { return layout_.config(); }
  WeightFormat format() const { return format_; }
  /// A bf16 tensor (every tensor in bf16; in fp8 the embedding, norms and LM head). Throws
  /// std::logic_error for a tensor stored in E4M3.
  const bf16* at(const TensorSlot& t) const;
  /// fp8: a layer's linear weight in E4M3 and its dequantization scale (device fp32). Throw
  /// std::logic_error for other tensors or formats.
  const fp8* fp8_at(const TensorSlot& t) const;
  const float* fp8_scale(const TensorSlot& t) const;
  /// Device bytes of all weights (bf16 and E4M3 buffers and the scales).
  std::size_t bytes() const { return buf_.bytes() + fp8_buf_.bytes() + scales_.bytes(); }
  /// bf16 only: the whole buffer copied back, in WeightLayout order (tests).
  std::vector<std::uint16_t> to_host() const;
  /// fp8 only: per TensorSlot id, the E4M3 bits and scale of each quantized tensor (empty bits
  /// and scale 0 for bf16 tensors), copied back (tests).
  struct Fp8HostTensor {
    std::vector<std::uint8_t> bits;
    float scale = 0;
  };
  std::vector<Fp8HostTensor> fp8_to_host() const;

 private:
  explicit DeviceWeights(const LlamaConfig& c);
  /// Quantizes the layers' linear weights of this (bf16) buffer into E4M3, keeps the others in
  /// a compact bf16 buffer and frees the full one.
  void convert_to_fp8();

  WeightLayout layout_;
  WeightFormat format_ = WeightFormat::BF16;
  calib::DeviceBuffer<bf16> buf_;
  calib::DeviceBuffer<fp8> fp8_buf_;
  calib::DeviceBuffer<float> scales_;
  std::vector<std::int64_t> bf16_offset_;  // per TensorSlot id: element offset in buf_, −1 if E4M3
  std::vector<std::int64_t> fp8_offset_;   // per TensorSlot id: byte offset in fp8_buf_, −1 if bf16
  std::vector<int> scale_index_;  // per TensorSlot id: scale i at scales_[i · kFp8ScaleStride], −1 if bf16
};

/// A Hugging Face model folder: its config.json and its *.safetensors files (sorted).
struct HfModelDir {
  LlamaConfig config;
  std::vector<std::string> files;
};
HfModelDir read_hf_model_dir(const std::string& dir);

}  // namespace infraplan::engine
