#include "engine/weight_format.hpp"

#include "common/error.hpp"

namespace infraplan::engine {

const char* weight_format_name(WeightFormat f) { return f == WeightFormat::FP8 ? "fp8" : "bf16"; }

WeightFormat parse_weight_format(const std::string& s, const std::string& field) {
  if (s == "bf16") return WeightFormat::BF16;
  if (s == "fp8") return WeightFormat::FP8;
  throw Error(field + "='" + s + "': " + unknown_name_message("weight format", s, {"bf16", "fp8"}));
}

int fp8_gemm_index(LayerTensor t) {
  switch (t) {
    case LayerTensor::Qkv:
      return 0;
    case LayerTensor::O:
      return 1;
    case LayerTensor::GateUp:
      return 2;
    case LayerTensor::Down:
      return 3;
    case LayerTensor::AttnNorm:
    case LayerTensor::FfnNorm:
      return -1;
  }
  return -1;
}

}  // namespace infraplan::engine
