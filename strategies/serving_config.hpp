#pragma once
// ServingConfig: one deployment of a model for inference (replicas, parallelism per replica,
// quantization, the engine's batching limits). The serving simulator extends it with scheduler,
// prefix-cache, disaggregation and speculative-decoding settings.
#include <cstdint>
#include <string>

#include "hardware/cluster.hpp"
#include "common/json_util.hpp"
#include "model/model_spec.hpp"

namespace infraplan::strat {

/// Weight formats: bf16/fp16, fp8 (W8A8 fp8), int8 (W8A8 int8), int4 (W4A16, group scales),
/// nvfp4 (4-bit floats with fp8 block scales, Blackwell).
enum class WeightQuant { BF16, FP16, FP8, INT8, INT4, NVFP4 };
const char* weight_quant_name(WeightQuant q);
WeightQuant parse_weight_quant(const std::string& s, const std::string& field);
/// Bytes per weight, scales included (int4: one fp16 scale per `group` weights).
double weight_bytes_per_param(WeightQuant q, int group = 128);
/// The GEMM input format a weight format runs on (int4 → fp16 after dequantisation).
Dtype gemm_dtype(WeightQuant q);

struct ServingConfig {
  int replicas = 1;
  int tp = 1, pp = 1, ep = 1;
  WeightQuant weights = WeightQuant::BF16;
  Dtype kv_dtype = Dtype::BF16;
  int block_size = 16;                     ///< tokens per paged-KV block
  int max_num_seqs = 256;                  ///< running sequences per replica
  std::int64_t max_batched_tokens = 8192;  ///< tokens per engine step per replica
  double gpu_memory_utilization = 0.9;     ///< fraction of HBM the engine may use (vLLM's default)
  int quant_group = 128;                   ///< int4 group size

  int gpus_per_replica() const { return tp * pp; }
  Json to_json() const;
};

/// Parses the core keys of a "serving" object; keys owned by the serving engine are passed
/// through untouched (listed in `extra_keys`).
ServingConfig serving_from_json(const Json& j, const std::string& path = "serving",
                                const std::vector<std::string>& extra_keys = {});

/// Checks the config against the model and GPU: tp divides heads, formats the GPU can run
/// (fp8 needs sm_89+, nvfp4 needs sm_100+). Throws infraplan::Error naming the field.
void validate_serving(const ServingConfig& s, const model::ModelSpec& m, const hw::GpuSpec& g);

}  // namespace infraplan::strat

namespace infraplan::strat {
/// Keys of a "serving" object that belong to the serving engine (scheduler, cache, PD,
/// speculative decoding); serving_from_json accepts them and leaves them to the engine.
const std::vector<std::string>& serving_engine_keys();
}  // namespace infraplan::strat
