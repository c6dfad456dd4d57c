#include "strategies/serving_config.hpp"

#include "common/limits.hpp"
#include "common/error.hpp"

namespace infraplan::strat {

const char* weight_quant_name(WeightQuant q) {
  switch (q) {
    case WeightQuant::BF16:
      return "bf16";
    case WeightQuant::FP16:
      return "fp16";
    case WeightQuant::FP8:
      return "fp8";
    case WeightQuant::INT8:
      return "int8";
    case WeightQuant::INT4:
      return "int4";
    case WeightQuant::NVFP4:
      return "nvfp4";
  }
  return "?";
}

WeightQuant parse_weight_quant(const std::string& s, const std::string& field) {
  for (auto q : {WeightQuant::BF16, WeightQuant::FP16, WeightQuant::FP8, WeightQuant::INT8, WeightQuant::INT4,
                 WeightQuant::NVFP4})
    if (s == weight_quant_name(q)) return q;
  if (s == "w8a8") return WeightQuant::INT8;
  if (s == "w4a16" || s == "awq" || s == "gptq") return WeightQuant::INT4;
  throw Error(field + "='" + s +
              "' is not a known weight format; valid: bf16, fp16, fp8, int8 (W8A8), int4 (W4A16), nvfp4");
}

double weight_bytes_per_param(WeightQuant q, int group) {
  switch (q) {
    case WeightQuant::BF16:
    case WeightQuant::FP16:
      return 2;
    case WeightQuant::FP8:
    case WeightQuant::INT8:
      return 1;  // per-channel scales are negligible
    case WeightQuant::INT4:
      return 0.5 + 2.0 / double(group);
    case WeightQuant::NVFP4:
      return 0.5 + 1.0 / 16.0;  // one fp8 scale per 16 values
  }
  return 2;
}

Dtype gemm_dtype(WeightQuant q) {
  switch (q) {
    case WeightQuant::BF16:
      return Dtype::BF16;
    case WeightQuant::FP16:
      return Dtype::FP16;
    case WeightQuant::FP8:
      return Dtype::FP8;
    case WeightQuant::INT8:
      return Dtype::INT8;
    case WeightQuant::INT4:
      return Dtype::INT4;
    case WeightQuant::NVFP4:
      return Dtype::FP4;
  }
  return Dtype::BF16;
}

Json ServingConfig::to_json() const {
  return {{"replicas", replicas},
          {"tp", tp},
          {"pp", pp},
          {"ep", ep},
          {"weights", weight_quant_name(weights)},
          {"kv_dtype", dtype_name(kv_dtype)},
          {"block_size", block_size},
          {"max_num_seqs", max_num_seqs},
          {"max_batched_tokens", max_batched_tokens},
          {"gpu_memory_utilization", gpu_memory_utilization},
          {"quant_group", quant_group}};
}

ServingConfig serving_from_json(const Json& j, const std::string& path,
                                const std::vector<std::string>& extra_keys) {
  JsonObject o(j, path);
  std::vector<std::string> known = {"replicas",
                                    "tp",
                                    "pp",
                                    "ep",
                                    "weights",
                                    "kv_dtype",
                                    "block_size",
                                    "max_num_seqs",
                                    "max_batched_tokens",
                                    "gpu_memory_utilization",
                                    "quant_group"};
  known.insert(known.end(), extra_keys.begin(), extra_keys.end());
  o.reject_unknown(known);
  ServingConfig s;
  namespace L = limits;
  s.replicas = int(o.get_int_min("replicas", 1, 1, L::kMaxGpus));
  s.tp = int(o.get_int_min("tp", 1, 1, L::kMaxGpus));
  s.pp = int(o.get_int_min("pp", 1, 1, L::kMaxGpus));
  s.ep = int(o.get_int_min("ep", 1, 1, L::kMaxGpus));
  s.weights = parse_weight_quant(o.get_string("weights", "bf16"), o.field("weights"));
  std::string kv = o.get_choice("kv_dtype", "bf16", {"bf16", "fp16", "fp8", "int8", "int4"});
  s.kv_dtype = parse_dtype(kv, o.field("kv_dtype"));
  s.block_size = int(o.get_int_min("block_size", 16, 1, L::kMaxBlockSize));
  s.max_num_seqs = int(o.get_int_min("max_num_seqs", 256, 1, L::kMaxNumSeqs));
  s.max_batched_tokens = o.get_int_min("max_batched_tokens", 8192, 1, L::kMaxBatchedTokens);
  s.gpu_memory_utilization = o.get_number("gpu_memory_utilization", 0.9);
  if (!(s.gpu_memory_utilization > 0 && s.gpu_memory_utilization <= 1))
    throw Error(o.field("gpu_memory_utilization") + "=" + number_text(s.gpu_memory_utilization) +
                " is invalid: must be in (0, 1]");
  s.quant_group = int(o.get_int_min("quant_group", 128, 1, L::kMaxQuantGroup));
  return s;
}

void validate_serving(const ServingConfig& s, const model::ModelSpec& m, const hw::GpuSpec& g) {
  if (s.tp > m.heads)
    throw Error("serving.tp=" + std::to_string(s.tp) + " exceeds heads=" + std::to_string(m.heads));
  if (m.heads % s.tp != 0)
    throw Error("serving.tp=" + std::to_string(s.tp) + " does not divide heads=" + std::to_string(m.heads));
  if (s.pp > m.layers)
    throw Error("serving.pp=" + std::to_string(s.pp) + " exceeds layers=" + std::to_string(m.layers));
  if (s.ep > 1 && (!m.moe.enabled() || m.moe.experts % s.ep != 0))
    throw Error("serving.ep=" + std::to_string(s.ep) +
                (m.moe.enabled() ? " does not divide experts=" + std::to_string(m.moe.experts)
                                 : " needs a MoE model"));
  auto refuse = [&](const std::string& field, const std::string& what, const std::string& needs) {
    throw Error(field + "=" + what + " is not supported on " + g.name + ": " + needs +
                "; valid here: bf16, fp16, int8 (W8A8), int4 (W4A16)" +
                (g.supports(Dtype::FP8) ? ", fp8" : ""));
  };
  if (s.weights == WeightQuant::FP8 && !g.supports(Dtype::FP8))
    refuse("serving.weights", "fp8", "its tensor cores have no fp8 (needs Ada/Hopper or newer)");
  if (s.weights == WeightQuant::NVFP4 && !g.supports(Dtype::FP4))
    refuse("serving.weights", "nvfp4", "fp4 tensor cores need Blackwell (sm_100) or newer");
  if (s.weights == WeightQuant::INT8 && !g.supports(Dtype::INT8))
    refuse("serving.weights", "int8", "no int8 tensor cores");
  if (s.kv_dtype == Dtype::FP8 && !g.supports(Dtype::FP8))
    refuse("serving.kv_dtype", "fp8", "fp8 attention kernels need Ada/Hopper or newer");
}

}  // namespace infraplan::strat

namespace infraplan::strat {
const std::vector<std::string>& serving_engine_keys() {
  static const std::vector<std::string> k = {
      "scheduler",       "batching",     "prefix_cache",   "chunked_prefill", "chunk_tokens",
      "preemption",      "routing",      "disaggregation", "speculative",     "host_overhead_us",
      "swap_space_GiB",  "watermark",    "priority",       "engine",          "cuda_graph",
      "host_us_per_seq", "host_overlap", "admission",      "kernels",         "eager_issue"};
  return k;
}
}  // namespace infraplan::strat
