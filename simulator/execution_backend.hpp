#pragma once
// ExecutionBackend: how long one engine step takes. The simulated backend prices the step as the
// kernels an engine launches (engine_preset.hpp): per layer the TP-split GEMMs in the weight
// format's GEMM dtype, attention per prefill chunk and one paged-decode kernel for all decodes,
// the norm / RoPE / KV-write / activation kernels, two TP all-reduces; then embedding, final
// norm, LM head and sampling. A decode step the engine has captured replays its CUDA graph at the
// captured size (padding rows computed): its kernels run back to back at their GPU times. An
// eager step runs each layer at the slower of its kernels' GPU time and the host's issue time
// (launches × the profile's launch or framework-dispatch time); a piecewise step replays all but
// attention. Host work per step (scheduling, input preparation) adds to the step, or overlaps it
// for engines that schedule one step ahead. A CUDA backend that runs a real model
// (engine/cuda_backend.hpp) implements the same interface: it reads the sequences' block tables
// and tokens, runs the step on the GPU and reports the measured time.
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "hardware/cost_model.hpp"
#include "hardware/power_limiter.hpp"
#include "model/model_spec.hpp"
#include "simulator/block_copy.hpp"
#include "simulator/engine_preset.hpp"
#include "simulator/engine_step_draw.hpp"
#include "strategies/serving_config.hpp"

namespace infraplan::sim::serve {

class Sequence;

/// One sequence's part of a step, as the backend sees it.
struct BatchItem {
  std::int64_t q_tokens = 0;  ///< new tokens computed (prefill chunk, 1 for a decode, 1 + k to verify)
  std::int64_t context = 0;   ///< KV length after the step, tokens
  bool prefill = false;
  bool samples = false;  ///< logits and sampling needed
  /// The sequence (its id, request, block table and num_computed before the step). Real
  /// backends read it; the simulated one only needs the counts above. May be null in tests.
  const Sequence* seq = nullptr;
};

/// What a step computes.
struct BatchShape {
  std::vector<BatchItem> items;
  std::int64_t padding_seqs = 0;     ///< static batching: finished members still computed (1 token each)
  std::int64_t padding_context = 0;  ///< their KV length, tokens
  std::vector<BlockCopy> block_copies;  ///< copy-on-write copies planned with this step
  /// When the step starts, simulated seconds (< 0: straight after the previous one). A backend
  /// that follows the board's power limiter counts the time between steps as idle.
  double start_s = -1;
};

/// Time split of one step, seconds: total = gemm + attention + comm + other + launch + host.
struct StepCost {
  double total_s = 0;
  double gemm_s = 0, attention_s = 0, comm_s = 0;
  double other_s =
      0;  ///< memory-bound kernels (norms, RoPE, KV write, activation, embedding, sampling), LM head
  double launch_s = 0;   ///< GPU idle waiting for the host to issue eager kernels
  double host_s = 0;     ///< per-step host work not hidden behind the GPU
  int graph_tokens = 0;  ///< captured size a graph replay computed (padding included); 0 = eager
  int launches = 0;      ///< kernels launched (graph replays count their kernels)
  double clock_mhz = 0;  ///< mean SM clock of the step under the power limiter; 0 = the tables' clock
};

class ExecutionBackend {
 public:
  virtual ~ExecutionBackend() = default;
  /// Duration of one step over `b`. A real backend runs the step (synchronously) and returns
  /// the measured time; its sampled tokens are its own business (it keeps them per sequence).
  virtual StepCost step(const BatchShape& b) = 0;
  /// Sequence `id` finished or was dropped: state kept for it (tokens) may go.
  virtual void forget(std::int64_t /*id*/) {}
};

/// All-reduce time inside a TP group; plug in the collectives library's model here.
class TpCommModel {
 public:
  virtual ~TpCommModel() = default;
  /// Seconds for an all-reduce of `bytes` (nccl-tests size) over `ranks` GPUs of one replica.
  virtual double all_reduce_seconds(double bytes, int ranks) const = 0;
};

/// Alpha-beta ring all-reduce on the node's GPU interconnect: 2(n−1)/n · bytes / bw + a fixed
/// latency per step. `GBps`: per-GPU bandwidth, 1e9 B/s; `efficiency`: achievable fraction.
class AlphaBetaTpComm final : public TpCommModel {
 public:
  AlphaBetaTpComm(double GBps, double step_latency_s, double base_latency_s = 8e-6, double efficiency = 0.8)
      : GBps_(GBps), step_(step_latency_s), base_(base_latency_s), eff_(efficiency) {}
  double all_reduce_seconds(double bytes, int ranks) const override;

 private:
  double GBps_, step_, base_, eff_;
};

/// What the backend runs around the model's math.
struct BackendOptions {
  EnginePreset engine;                 ///< kernels per layer, CUDA graphs, host costs (default: infraplan)
  int quant_group = 128;               ///< int4 group size (dequantisation cost)
  double w4a16_dequant_factor = 1.15;  ///< compute-bound W4A16 GEMMs run this much slower than fp16
  /// The default engine without per-step host work (a proposer's steps run inside the target's).
  /// Follow the board's power limiter (hardware/power_limiter.hpp): each step at the top clock until
  /// the running average of power reaches the limit, then at the clock the power law gives its work.
  /// Needs a cost model with a power law and a limiter time constant; otherwise steps stay at the
  /// clock the GEMM tables refer to.
  bool power_limited = false;
  /// Under the limiter: the draw of decoding sequences over the power law's (simulator/
  /// engine_step_draw.hpp, from the profile's held engine steps); null or empty: the law's.
  std::shared_ptr<const DecodeDrawScale> decode_draw;
  static BackendOptions without_host() {
    BackendOptions o;
    o.engine.host_step_us = o.engine.host_seq_us = 0;
    return o;
  }
};

/// CostModel-priced step of a model on one replica (tp GPUs, pp stages run back to back).
class SimulatedBackend final : public ExecutionBackend {
 public:
  SimulatedBackend(const model::ModelSpec& m, const strat::ServingConfig& s, const hw::CostModel& cm,
                   const TpCommModel* comm, BackendOptions o = {});
  StepCost step(const BatchShape& b) override;

  /// Per-layer GPU time of the dense kernels (GEMMs, norms and other memory-bound kernels,
  /// all-reduces) for `tokens` tokens, memoised; seconds.
  double dense_layer_seconds(std::int64_t tokens);
  /// One GEMM in the configured weight format: activations [m, k] × weights [k, n].
  double weight_gemm_seconds(std::int64_t m, std::int64_t n, std::int64_t k) const;
  const model::ModelSpec& model() const { return m_; }
  const EnginePreset& engine() const { return o_.engine; }
  /// A step at the top clock of the profile's power law, as the law sees it: GPU seconds, matmul
  /// FLOPs, operand and KV bytes, bytes through memory-bound kernels. Needs a power law.
  struct TopClockWork {
    double gpu_s = 0, flops = 0, bytes = 0, memory_bytes = 0;
  };
  TopClockWork top_clock_work(const BatchShape& b);

 private:
  struct Dense {  // one layer's kernels besides attention, GPU seconds
    double gemm = 0, comm = 0, memory = 0;
    int launches = 0;
    double flops = 0, gemm_bytes = 0, memory_bytes = 0;  // what the board's power follows
  };
  struct Head {  // the step's kernels outside the layers (embedding, final norm, LM head, sampling)
    double gemm = 0, comm = 0, memory = 0;
    int launches = 0;
    double flops = 0, gemm_bytes = 0, memory_bytes = 0;
  };
  /// Work of a step the board's power follows: matmul FLOPs, operand and KV bytes, bytes through
  /// memory-bound kernels.
  struct Work {
    double flops = 0, bytes = 0, memory_bytes = 0;
  };
  /// Prices at one clock: the cost model at that clock and the memoised per-layer costs.
  struct Pricing {
    std::unique_ptr<hw::CostModel> clocked;  // null: the tables' clock (cm_)
    const hw::CostModel* cm = nullptr;
    std::unordered_map<std::int64_t, Dense> dense_cache;
    std::unordered_map<std::int64_t, Head> head_cache;            // key: tokens·2^32 + rows
    std::unordered_map<std::int64_t, double> prefill_attn_cache;  // key: q_len·2^32 + context
  };
  const Dense& dense(std::int64_t tokens);
  const Head& head(std::int64_t tokens, std::int64_t rows);
  /// One layer's prefill attention with every chunk of `l` priced on its own (memoised).
  double chunk_by_chunk_prefill_seconds(const hw::AttentionPrefillLaunch& l);
  /// A memory-bound kernel's GPU time with no launch gap, at least the graph floor.
  double kernel_seconds(double bytes) const;
  /// Weights in fp8 or int8: the GEMMs run in 8 bits (W8A8).
  bool eight_bit_weights() const;
  /// A row kernel (one block per row) from the profile's measured serving_kernels table, else
  /// priced by its bytes as kernel_seconds() does.
  double row_kernel_seconds(const char* kind, double rows, double width, double bytes) const;
  /// Host work of a step (scheduling, input preparation, output processing), seconds.
  double host_seconds(const BatchShape& b) const;
  /// The step priced at the current clock (cur_), and its work.
  StepCost price(const BatchShape& b, Work& work);
  /// Makes the prices at `mhz` current (0: the tables' clock).
  void use_clock(double mhz);

  model::ModelSpec m_;
  strat::ServingConfig s_;
  const hw::CostModel& cm_;
  const TpCommModel* comm_;
  BackendOptions o_;
  std::int64_t tp_heads_, tp_kv_heads_;
  std::int64_t decode_tile_tokens_ = 0;  ///< the engine's decode kernel tile (the profile's; 0: none)
  std::unordered_map<int, Pricing> pricing_;  // by clock in MHz (0: the tables')
  Pricing* cur_ = nullptr;
  std::optional<hw::PowerLimiter> limiter_;
  double last_end_s_ = -1;
};

}  // namespace infraplan::sim::serve
