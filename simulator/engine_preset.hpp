#pragma once
// Engine presets: what an inference engine runs around a model's math, as data — how many
// kernels a decoder layer launches (which ops are fused), which steps replay CUDA graphs and at
// which captured batch sizes, how fast the host issues eager kernels, its per-step host work and
// whether that overlaps the GPU, and its default admission policy. Scenario key
// `serving.engine` picks one ("infraplan", "vllm", "tensorrt-llm", "sglang"); every value can be
// overridden by its own key. Values and their public sources: docs/serving.md ("Engine presets").
// Times are never here: kernel durations and launch floors come from the cost model (profile).
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "simulator/scheduler.hpp"

namespace infraplan::sim::serve {

/// vLLM's default capture sizes: 1, 2, 4, then multiples of 8 below 256, then of 16 up to
/// min(2 · max_num_seqs, 512). The infraplan engine captures the same sizes.
std::vector<int> vllm_capture_sizes(int max_num_seqs);

/// Launches of one decoder layer besides its GEMMs and attention core (dense LLaMA-style layer).
/// The defaults are the infraplan engine's.
struct LayerKernels {
  int norms = 2;                 ///< RMSNorm launches (pre-attention, pre-FFN)
  bool residual_in_norm = true;  ///< residual add fused into the norm; false: 2 separate add kernels
  int qkv_gemms = 1;             ///< 1 = fused QKV projection, 3 = separate Q, K, V GEMMs
  int rope = 1;                  ///< rotary-embedding launches (0 = fused into the attention kernel)
  int kv_write = 0;              ///< KV-cache write launches (0 = fused into RoPE or attention)
  int gate_up_gemms = 1;         ///< 1 = fused gate/up projection, 2 = separate (SwiGLU)
  int activation = 1;            ///< SiLU·mul (or GELU) launches (0 = fused into a GEMM epilogue)
  /// With 8-bit weights (W8A8): launches that quantize the layer's GEMM inputs with a dynamic
  /// scale — the infraplan engine: one quantize kernel per GEMM input (4) and one amax reduction
  /// of the attention output (the other inputs' amax is folded into the norm and SwiGLU kernels)
  /// = 5. 0 where the preset does not know it (not priced). No effect with 16-bit weights.
  int activation_quant = 0;
  /// Launches per layer outside the GEMMs and attention core (16-bit weights).
  int memory_kernels() const { return norms + (residual_in_norm ? 0 : 2) + rope + kv_write + activation; }
};

/// Which steps replay captured CUDA graphs.
struct CudaGraphs {
  bool enabled = true;
  /// Captured sizes in tokens per step (decode-only steps: one token per sequence, 1 + k with
  /// speculative decoding), ascending; a step of more tokens than the largest runs eagerly.
  std::vector<int> sizes = vllm_capture_sizes(256);
  /// true: a step runs the smallest captured size ≥ its tokens, padding rows included (vLLM,
  /// SGLang); false: only exactly captured sizes replay, others run eagerly (TensorRT-LLM's
  /// default enable_padding = false).
  bool padding = true;
  /// Steps with prompt tokens: false = eager; true = piecewise (everything but attention replays
  /// a graph padded to a captured size, attention runs eagerly; vLLM V1 FULL_AND_PIECEWISE).
  bool piecewise_mixed = false;
  /// The captured size a step of `tokens` tokens replays: 0 when it runs eagerly.
  int captured_size(long long tokens) const;
};

/// How fast eager kernels are issued: by a C++ runtime (the profile's back-to-back launch time)
/// or by eager PyTorch (the profile's per-op dispatch time).
enum class EagerIssue { Cuda, Framework };

/// An engine; the defaults are the infraplan engine's (engine_preset("infraplan", 256)).
struct EnginePreset {
  std::string name = "infraplan";
  LayerKernels layer;
  CudaGraphs graphs;
  EagerIssue eager_issue = EagerIssue::Cuda;
  int sampling_kernels = 1;  ///< launches after the LM head (logits → token), per step
  /// Greedy sampling by the mini-engine's own argmax kernel (one block per row), priced from
  /// the profile's serving_kernels.argmax table when present.
  bool argmax_sampling = false;
  /// Attention by the mini-engine's own paged kernels, priced from the profile's serving_attention
  /// measurements when present: every prefill chunk of a step in one launch (the launch model),
  /// decode as the engine splits it with the KV in HBM (the measured grid). Otherwise, and for the
  /// other engines, prefill chunk by chunk from the attention-prefill tables and decode from the
  /// decode table.
  bool own_paged_attention = false;
  double host_step_us = 50;  ///< host work per step (scheduling, input preparation), µs
  double host_seq_us = 0;    ///< host work per scheduled sequence, µs
  /// The host prepares step n + 1 while step n runs (SGLang's overlap scheduler, TensorRT-LLM's
  /// overlap scheduler, vLLM --async-scheduling): a step takes max(GPU, host) instead of the sum.
  bool host_overlap = false;
  /// The default of SchedulerConfig::admission when a scenario does not set serving.admission.
  Admission admission = Admission::OnDemand;
  Json to_json() const;
};

/// Names of the presets.
const std::vector<std::string>& engine_preset_names();
/// The preset `name` with capture sizes for `max_num_seqs`; throws infraplan::Error naming
/// `field`, the value and the valid names.
EnginePreset engine_preset(const std::string& name, int max_num_seqs,
                           const std::string& field = "serving.engine");
/// The preset named by `serving.engine` (default "infraplan") with the overrides of
/// `serving.kernels` ({norms, residual_in_norm, qkv_gemms, rope, kv_write, gate_up_gemms,
/// activation, sampling}), `serving.cuda_graph` ({enabled, sizes, max_size, padding,
/// piecewise_mixed}), `serving.eager_issue` ("cuda" | "framework"), `serving.host_overhead_us`,
/// `serving.host_us_per_seq`, `serving.host_overlap` and `serving.admission`. Throws
/// infraplan::Error naming the field.
EnginePreset engine_preset_from_json(const JsonObject& serving, int max_num_seqs);

}  // namespace infraplan::sim::serve
