#pragma once
// CudaModel: a LLaMA decoder on one GPU running engine steps. A step (StepPlan) is uploaded in
// one copy (token ids, positions, KV slots, block tables, chunk offsets, sample rows), then per
// layer: fused residual add + RMSNorm, the QKV GEMM (cuBLASLt), fused RoPE + paged KV write, paged
// decode attention for the decode rows (calib_kernels' split-K kernel) and paged FlashAttention
// for the prefill chunks, the O GEMM, add + norm, the gate/up GEMM, SwiGLU, the down GEMM; then the
// final norm of the sampled rows only, the LM head in fp32 and a greedy argmax on the GPU; the
// sampled ids come back in one copy. Decode-only steps are padded to a captured batch size and
// replayed as a CUDA graph (one per batch size, captured by warm_up() or on first use; the decode
// kernel divides each sequence's context among a split count fixed by the batch size, so no
// context needs a new capture). The KV cache holds `num_blocks` blocks for the block manager plus one scratch
// block that padding rows read.
//
// With fp8 weights (DeviceWeights in WeightFormat::FP8) the four GEMMs of a layer run W8A8 on
// cuBLASLt's E4M3 kernels. Each GEMM input gets one dynamic scale per step: its amax over the
// step's real rows (graph padding rows excluded) is folded into a device slot by the kernel that
// produces it — the fused add + RMSNorm for the QKV and gate/up inputs, the SwiGLU kernel for the
// down input, a separate reduction over the attention output for the O input (the attention
// kernels are shared with calibration and stay bf16) — and a quantize kernel turns the bf16
// input into E4M3 with scale amax / 448, written to device memory for the GEMM to read. A
// per-tensor scale needs the whole tensor's amax before any element is quantized, so the
// quantization cannot be fused into the producing kernel without a grid-wide barrier: fp8 adds
// one quantize kernel per GEMM and one reduction per layer, and one memset of every amax slot per step.
//
// With an fp8 KV cache (CudaModelOptions::kv_format, engine/kv_format.hpp) the cache holds E4M3
// codes, one byte per element, under static per-layer key and value scales: the RoPE kernel
// quantizes what it writes, both attention kernels widen the codes to bf16 as they read them, and
// a block holds half the bytes, so the same memory holds twice the blocks. Independent of the
// weight format; the same code paths (graphs, prefix-cache copy-on-write, recompute) for both.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "engine/device_weights.hpp"
#include "engine/kv_format.hpp"
#include "engine/lt_gemm.hpp"
#include "engine/prefill_kernel.hpp"
#include "engine/step_plan.hpp"

namespace infraplan::engine {

struct CudaModelOptions {
  int max_tokens = 8192;        ///< rows of one step (max_batched_tokens), ≥ max_seqs
  int max_seqs = 256;           ///< sequences of one step (max_num_seqs)
  std::int32_t num_blocks = 0;  ///< KV blocks of 16 tokens for the block manager
  KvFormat kv_format = KvFormat::BF16;  ///< the KV cache's element type
  KvScales kv_scales;                   ///< fp8 KV: per-layer key and value scales (default 1)
  bool cuda_graphs = true;      ///< replay decode-only steps as CUDA graphs
  int max_graph_batch = 256;    ///< largest captured decode batch (≤ max_seqs is used)
  bool keep_logits = false;     ///< copy the sampled rows' logits back each step (tests)
  /// fp8: copy each step's activation scales back ([layers][kFp8Gemms], tests).
  bool keep_activation_scales = false;
  /// fp8, eager steps only (cuda_graphs off): copy every fp8 GEMM's bf16 input and output back
  /// each step (tests: each GEMM checked against the host's E4M3 product of its own input).
  bool keep_fp8_gemm_io = false;
  /// Time cuBLASLt's ranked algorithms at start-up (every graph batch size and a full
  /// max_tokens chunk) and keep the fastest; other shapes take the heuristic's first choice.
  bool autotune_gemms = false;
  PrefillKernel prefill_kernel = PrefillKernel::automatic;  ///< paged prefill attention's path
};

/// One fp8 GEMM of a step as it ran (CudaModelOptions::keep_fp8_gemm_io): its bf16 input before
/// quantization and its bf16 output, row-major bf16 bits.
struct Fp8GemmIo {
  int layer = 0;
  LayerTensor tensor = LayerTensor::Qkv;
  int rows = 0, n = 0, k = 0;
  std::vector<std::uint16_t> x;  ///< [rows][k]
  std::vector<std::uint16_t> y;  ///< [rows][n]
};

/// Counters of what the model ran.
struct CudaModelStats {
  std::int64_t eager_steps = 0, graph_steps = 0, graph_captures = 0, block_copies = 0;
  std::int64_t tuned_gemms = 0;  ///< GEMM shapes autotuned
  std::int64_t bucket_queries = 0;  ///< heuristic queries for 64-row buckets at warm-up
  double tuned_heuristic_s = 0;  ///< their summed time with the heuristic's first algorithm, seconds
  double tuned_best_s = 0;       ///< and with the chosen one
};

class CudaModel {
 public:
  CudaModel(DeviceWeights weights, const CudaModelOptions& o);
  ~CudaModel();
  CudaModel(const CudaModel&) = delete;
  CudaModel& operator=(const CudaModel&) = delete;

  const LlamaConfig& config() const { return w_.config(); }
  const CudaModelOptions& options() const { return o_; }
  int max_blocks_per_seq() const { return mb_; }
  std::int32_t scratch_block() const { return o_.num_blocks; }
  /// Runs one step to completion and returns the greedy token of each sample row (a decode-only
  /// plan may be padded in place to a graph size; its extra results are padding).
  const std::vector<std::int32_t>& run(StepPlan& plan);
  /// Runs an eager prefill once and captures every decode graph, so that a timed run pays
  /// neither module loading nor graph captures.
  void warm_up();
  /// [sample rows][vocab] logits of the last step (keep_logits only).
  const std::vector<float>& logits() const { return logits_host_; }
  /// fp8: [layers][kFp8Gemms] activation scales of the last step (keep_activation_scales only).
  const std::vector<float>& activation_scales() const { return act_scales_host_; }
  /// fp8: every fp8 GEMM of the last step, in order (keep_fp8_gemm_io only).
  const std::vector<Fp8GemmIo>& fp8_gemm_io() const { return fp8_io_; }
  const CudaModelStats& stats() const { return stats_; }
  /// Captured decode batch sizes: 1, 2, 4, 8, then every multiple of 8 up to `max`.
  static std::vector<int> graph_sizes(int max);
  /// KV-cache bytes of one block over all layers (bf16: 2 bytes per element, fp8: 1).
  static std::int64_t block_bytes(const LlamaConfig& c, KvFormat f = KvFormat::BF16);
  /// Device bytes the model needs besides weights and KV cache (activations, workspaces; fp8 adds
  /// the E4M3 copy of the widest GEMM input).
  static std::int64_t workspace_bytes(const LlamaConfig& c, const CudaModelOptions& o,
                                      WeightFormat f = WeightFormat::BF16);
  /// Synchronises the model's stream (timing).
  void synchronize() const;
  /// GPU time of the last step, seconds: from its upload to its sampled ids (CUDA events).
  double last_gpu_seconds() const { return last_gpu_s_; }
  /// Turns GEMM autotuning on and rebuilds: tunes every graph batch size and a max_tokens chunk,
  /// recaptures the graphs (benchmarks: before/after).
  void enable_autotune();
  /// Switches CUDA-graph replay of decode steps on or off (benchmarks).
  void set_cuda_graphs(bool on) { o_.cuda_graphs = on; }
  /// Fills the whole KV cache with random values in [−1, 1) (benchmarks never time zeros).
  void fill_kv_random(std::uint64_t seed);
  /// Kernel breakdown (bench step --kernels): while on, steps run eagerly, queued behind a 5 ms
  /// wait kernel so the host is ahead of the GPU, and forward() records a CUDA event after
  /// each kernel (group). kernel_times() then gives, per label, the summed GPU seconds and the
  /// count of the last step, in first-seen order.
  void set_kernel_marks(bool on) { marks_on_ = on; }
  struct KernelTime {
    std::string label;
    double seconds = 0;
    int count = 0;
  };
  std::vector<KernelTime> kernel_times() const;

 private:
  struct Offsets;
  class Graph;
  int decode_splits(int batch) const;
  Offsets offsets(int rows, int decodes, int chunks, int samples, int copies) const;
  /// Uploads the plan; `live_rows`: its rows before graph padding (fp8 scales count those only).
  void pack(const StepPlan& p, const Offsets& off, int live_rows);
  void forward(const Offsets& off, int rows, int decodes, int chunks, int samples, int max_q);
  void finish(int samples);
  std::unique_ptr<Graph> capture(int batch);
  void mark(const char* label);
  void tune_gemms(int rows);
  /// The GEMM of layer `l`'s linear weight `t` on the step's rows: bf16, or (fp8) the input's
  /// quantization with its step scale and the E4M3 GEMM.
  void linear(int l, LayerTensor t, const bf16* X, bf16* Y, int rows, const char* label);
  float* amax_slot(int l, LayerTensor t) const;
  float* scale_slot(int l, LayerTensor t) const;
  bool is_fp8() const { return w_.format() == WeightFormat::FP8; }
  bool kv_fp8() const { return o_.kv_format == KvFormat::FP8; }
  /// Layer l's key and value planes (bf16 or E4M3 codes, per kv_format).
  unsigned char* k_plane(int l) const;
  unsigned char* v_plane(int l) const { return k_plane(l) + plane_bytes_; }

  DeviceWeights w_;
  CudaModelOptions o_;
  int mb_ = 0;  // blocks per sequence
  std::int64_t plane_bytes_ = 0, block_bytes_ = 0;  // one layer's K (or V) plane, one block of it
  calib::Stream stream_;
  LtGemm gemm_;
  calib::DeviceBuffer<unsigned char> kv_;  // [layers][K, V][num_blocks + 1][kv_heads][16][128] elements
  calib::DeviceBuffer<float2> rope_;
  calib::DeviceBuffer<bf16> resid_, x_, delta_, qkv_, q_, attn_, gu_, act_, xs_;
  calib::DeviceBuffer<float> logits_, partial_o_, partial_lse_;
  calib::DeviceBuffer<int> out_tokens_, meta_;
  calib::DeviceBuffer<fp8> x8_;           // fp8: the E4M3 GEMM input
  calib::DeviceBuffer<float> act_amax_;   // fp8: [layers][kFp8Gemms] per step
  calib::DeviceBuffer<float> act_scale_;  // fp8: the same, kFp8ScaleStride floats apart
  std::vector<float> act_scales_host_;
  std::vector<Fp8GemmIo> fp8_io_;
  std::unique_ptr<calib::PinnedBuffer<int>> meta_host_, tokens_host_;
  std::vector<int> graph_sizes_;
  std::map<int, std::unique_ptr<Graph>> graphs_;  // by padded batch size
  std::vector<std::int32_t> result_;
  std::vector<float> logits_host_;
  CudaModelStats stats_;
  calib::Event ev_start_, ev_end_;
  double last_gpu_s_ = 0;
  int slots_ = 0;  // resident decode CTAs on the GPU
  bool marks_on_ = false;
  std::vector<const char*> mark_labels_;  // of the last step; mark_events_[i + 1] ends label i
  std::vector<std::unique_ptr<calib::Event>> mark_events_;
  std::size_t marks_used_ = 0;
};

}  // namespace infraplan::engine
