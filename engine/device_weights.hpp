#pragma once
// DeviceWeights: a LLaMA decoder's weights in one bf16 device buffer laid out by WeightLayout —
// seeded random (generated on the GPU, bit-identical to WeightLayout::random_host) or read from
// local safetensors files (a Hugging Face model folder: config.json + *.safetensors; no
// downloads). Q/K/V and gate/up are fused on load.
#include <cstdint>
#include <string>
#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "engine/engine_kernels.hpp"
#include "engine/weight_layout.hpp"

namespace infraplan::engine {

class DeviceWeights {
 public:
  /// Random weights from `seed`.
  static DeviceWeights random(const LlamaConfig& c, std::uint64_t seed);
  /// Every tensor the layout needs from these safetensors files (BF16, F16 or F32). Throws
  /// infraplan::Error naming a missing tensor or a shape that does not match the config.
  static DeviceWeights from_safetensors(const LlamaConfig& c, const std::vector<std::string>& files);

  const WeightLayout& layout() const { return layout_; }
  const LlamaConfig& config() const { return layout_.config(); }
  const bf16* at(const TensorSlot& t) const { return buf_.get() + t.offset; }
  std::size_t bytes() const { return buf_.bytes(); }
  /// The whole buffer copied back (tests).
  std::vector<std::uint16_t> to_host() const;

 private:
  explicit DeviceWeights(const LlamaConfig& c);
  WeightLayout layout_;
  calib::DeviceBuffer<bf16> buf_;
};

/// A Hugging Face model folder: its config.json and its *.safetensors files (sorted).
struct HfModelDir {
  LlamaConfig config;
  std::vector<std::string> files;
};
HfModelDir read_hf_model_dir(const std::string& dir);

}  // namespace infraplan::engine
