#pragma once
// Profile: what infraplan knows about one GPU from measurement — ceilings, timing tables the
// CalibratedCostModel interpolates, held-out measurements for accuracy, per-kernel results and
// NCCL sweeps. Written by `infraplan-calibrate` (calib_kernels/), stored as JSON (schema in
// docs/calibration.md), shipped embedded for the catalog GPUs (hardware/profiles/*.json).
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "common/json_util.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/validation_error.hpp"

namespace infraplan::hw {

/// How much longer the backward layouts take than the forward one (GemmLayout) over a sub-grid of
/// a format's table: ratio = t(layout) / t(TN) of the same cell, each cell's three layouts timed
/// back to back; the median over the calibration runs that measured it.
struct LayoutRatioTable {
  std::vector<double> m, n, k;  ///< axes (elements, ascending; values of the format's grid)
  std::vector<double> nn, nt;   ///< [m][n][k] ratios (NaN = not measured)
  int runs = 0;                 ///< calibration runs (machine starts) the medians are over
  double at(const std::vector<double>& r, std::size_t i, std::size_t j, std::size_t l) const {
    return r[(i * n.size() + j) * k.size() + l];
  }
};

/// GEMM times Y[m,n] = X[m,k]·W[n,k]ᵀ over a grid; axes ascending; NaN = not measured.
struct GemmTable {
  Dtype dtype = Dtype::BF16;
  std::vector<double> m, n, k;  ///< grid axes (elements)
  std::vector<double> seconds;  ///< [m.size()][n.size()][k.size()], row-major
  double at(std::size_t i, std::size_t j, std::size_t l) const {
    return seconds[(i * n.size() + j) * k.size() + l];
  }
  /// Measured slow-down when n and k are multiples of only `mis_elements[e]` elements (rows not
  /// 16-byte aligned), over (m, n = k = nk): mis_ratio[e][m][nk], NaN = no algorithm. Optional
  /// (empty when the profile predates them): the slow-down when only n (mis_ratio_n: n = nk + e,
  /// k = nk) or only k (mis_ratio_k) is misaligned, same layout.
  std::vector<double> mis_m, mis_nk, mis_elements, mis_ratio, mis_ratio_n, mis_ratio_k;
  /// The multiprocessor clock (MHz) each cell was measured at (mean of the readings just before
  /// and just after it), same layout as `seconds`; empty when the profile has none, NaN = unknown.
  /// A GPU under its power cap runs a heavy GEMM at a clock set by what ran before it; the cost
  /// model refers every cell to one reference clock.
  std::vector<double> clock_mhz;
  /// Off-grid aligned shapes timed in the same run, for fitting the tile quanta and the clock
  /// exponent: {m, n, k, seconds, clock MHz (0 = unknown)}.
  std::vector<std::array<double, 5>> fit_points;
  /// The clock exponent the graph-timed workload rows of this format (tables.gemm_rows with "timing":
  /// "graph") are referred to the reference clock with, when measured ("rows_clock_exponent.value":
  /// the slope of log time on log clock reading of the same rows timed on several machine starts,
  /// bench/calib/merge_layout_runs.py); without it the rows take the table's fitted exponent.
  std::optional<double> rows_clock_exponent;
  /// Tile quanta (elements): between grid points m and n interpolate by whole tiles of these;
  /// 1 = none. Chosen by the CalibratedCostModel from fit_points.
  double quantum_m = 1, quantum_n = 1;
  /// NN / NT slow-down against this (TN) table ("layouts"; absent in older profiles and for
  /// formats cuBLASLt runs in TN only on Hopper: fp8, int8).
  std::optional<LayoutRatioTable> layouts;
  /// Fleet scale (> 0; 1 = none): the median of the machines the GEMMs were timed on against this
  /// table's model ("fleet.gemm.scale"); multiplies every prediction from the table.
  double fleet_scale = 1;
};

/// The timing-harness correction of GEMM tables ("fleet.gemm.timing"): graph-timed / as-tabled time
/// of the same shapes on the same machine, by the tabled time (log-interpolated, clamped).
struct GemmTimingCorrection {
  std::vector<double> seconds;  ///< ascending tabled times (s)
  std::vector<double> ratio;    ///< one per entry of `seconds`
};

/// Causal (or not) attention-prefill forward times with q_len = kv_len = seq_len, and optionally
/// the backward times of the same shapes (dQ, dK, dV from dO; what a training step pays).
struct PrefillTable {
  std::string kernel;  ///< what was timed, e.g. "own_fa2" (calib_kernels/) or "torch-sdpa"; may be empty
  int head_dim = 128;
  bool causal = true;
  int heads = 32, kv_heads = 8;  ///< heads of every measured case
  std::vector<double> seq_len;   ///< axis 0 (tokens per sequence)
  std::vector<double> batch;     ///< axis 1 (sequences)
  std::vector<double> seconds;   ///< [seq_len][batch]; NaN = not measured (too many tokens)
  /// Backward seconds, same layout as `seconds` (empty when the table has none; NaN = not measured).
  std::vector<double> backward_seconds;
  double at(std::size_t i, std::size_t j) const { return seconds[i * batch.size() + j]; }
  double backward_at(std::size_t i, std::size_t j) const { return backward_seconds[i * batch.size() + j]; }
};

/// Paged decode-attention times: batch sequences, each with `context` cached tokens.
struct DecodeTable {
  int heads = 32, kv_heads = 8, head_dim = 128, block_size = 16;
  Dtype kv_dtype = Dtype::BF16;
  std::vector<double> batch, context;  ///< axes
  std::vector<double> seconds;         ///< [batch][context]
  double at(std::size_t i, std::size_t j) const { return seconds[i * context.size() + j]; }
};

/// A memory-bound kernel (device copy) moving `bytes` (read + written).
struct MemoryTable {
  std::vector<double> bytes;  ///< ascending
  std::vector<double> seconds;
};

/// Measured ceilings (all rates in 1e9 B/s or 1e12 FLOP/s; times in µs).
struct Ceilings {
  double copy_GBps = 0;  ///< device copy, bytes read + written per second
  double read_GBps = 0;  ///< read-only stream
  double h2d_pinned_GBps = 0, d2h_pinned_GBps = 0;
  double launch_us = 0;                 ///< back-to-back kernel launches from one host thread, per launch
  double launch_sync_us = 0;            ///< one launch plus stream synchronisation
  double graph_kernel_us = 0;           ///< per kernel when replayed from a CUDA graph
  double eager_kernel_gap_us = 0;       ///< extra GPU gap per dependent kernel issued eagerly (not in a graph)
  std::map<Dtype, double> gemm_TFLOPs;  ///< best GEMM rate seen per format (1e12 FLOP/s)
};

/// Held-out measurements: shapes not on the grids, timed in the same run.
struct HoldoutGemm {
  Dtype dtype = Dtype::BF16;
  std::int64_t m = 0, n = 0, k = 0;
  GemmLayout layout = GemmLayout::TN;    ///< operand layout ("layout", default "tn")
  double seconds = 0;                    ///< median of the passes
  std::vector<double> repeats;           ///< each pass's time (may be empty)
  std::vector<double> repeat_clock_mhz;  ///< each pass's clock (empty when unknown)
};
struct HoldoutPrefill {
  int head_dim = 128, heads = 32, kv_heads = 8;
  std::int64_t batch = 1, seq_len = 0;
  bool causal = true;
  double seconds = 0;
  double backward_seconds = 0;  ///< 0 = not measured
};
struct HoldoutDecode {
  int heads = 32, kv_heads = 8, head_dim = 128;
  std::int64_t batch = 1, context = 0;  ///< context per sequence
  double seconds = 0;
};
struct HoldoutMemory {
  double bytes = 0, seconds = 0;
};

/// Host-side cost of an eager framework (PyTorch) driving the GPU, measured with
/// bench/pytorch/calibrate_framework.py: chains of ops on tiny tensors (the GPU waits on the host),
/// slope per op. All times in microseconds of host time.
struct FrameworkProfile {
  std::string name;  ///< e.g. "pytorch-eager"
  std::string torch_version, cuda_version, date, command;
  double op_dispatch_us_forward =
      0;  ///< per module-level op (Linear, LayerNorm, GELU, add) in forward, autocast + autograd
  double op_dispatch_us_backward = 0;          ///< per module-level op in backward (autograd engine)
  double checkpoint_us_forward_per_block = 0;  ///< extra per activation-checkpointed block, forward
  double checkpoint_us_backward_per_block =
      0;                               ///< extra per checkpointed block, backward (recompute not included)
  double optimizer_us_per_tensor = 0;  ///< fused AdamW step + zero_grad, per parameter tensor
  double optimizer_us_fixed = 0;       ///< fused AdamW step + zero_grad, per step
  /// Per elementwise aten op under autograd (chains of tiny ops), forward and backward; 0 when the
  /// calibration did not record them (the module-level rate then applies).
  double aten_op_us_forward = 0, aten_op_us_backward = 0;
  /// Host µs per aten op without autograd (inference, e.g. torch.no_grad): the pace of eager
  /// PyTorch code; 0 = not measured.
  double aten_op_us_nograd = 0;
  /// Host µs per module-level op by kind ("linear", "layernorm", "gelu", "add", "sdpa"): forward,
  /// backward (empty when the calibration has no per-module chains).
  std::map<std::string, std::pair<double, double>> module_us;
  /// Host µs per LLaMA-architecture block (forward, backward) by
  /// "framework/precision/plain|checkpointed|selective-op" (e.g. "pytorch-eager/amp-bf16/checkpointed";
  /// the checkpointed backward includes the recompute; selective-op: under torchtitan's op-level
  /// policy), measured on tiny shapes; empty when absent.
  std::map<std::string, std::pair<double, double>> block_us;
  /// torch.compile: host µs per call of the compiled forward / backward beyond its blocks (guards,
  /// runtime wrappers, the embedding, LM head and loss inside the graph), keyed as block_us
  /// (framework.block_host_pass_us: the block chain's intercept, median over runs); empty when absent.
  std::map<std::string, std::pair<double, double>> pass_us;
  /// Every machine start's (forward, backward) behind block_us (framework.block_host_runs; empty
  /// with one start): the spread of host costs (hw::SpreadBands::host).
  std::map<std::string, std::vector<std::pair<double, double>>> block_runs;
  /// GPU seconds of the framework's eager kernels ("cast_f32_bf16", "layer_norm_f32_bwd", ...) over
  /// `elementwise_elements` (ascending; entries may be NaN = not measured).
  std::vector<double> elementwise_elements;
  std::map<std::string, std::vector<double>> elementwise_seconds;
  /// GPU seconds of torch's fused AdamW step (torch.optim.AdamW(fused=True)) by state dtype
  /// ("fp32": AMP's fp32 parameters, gradients and states; "bf16": pure bf16): (parameters,
  /// seconds) ascending in parameters (bench/pytorch/optimizer_step.py); empty when not measured.
  std::map<std::string, std::vector<std::pair<double, double>>> fused_adamw;
  /// How much of each eager kernel's time follows the SM clock (framework.clock_share.ops, by the
  /// elementwise table's op names and "fused_adamw_fp32" / "fused_adamw_bf16"): φ in [0, 1] of
  /// t(f) = t_top · ((1 − φ) + φ · f_top / f), the tables being timed at the top clock
  /// (bench/pytorch/elementwise_clock.py); an op without an entry keeps its time (φ = 0).
  std::map<std::string, double> clock_share;
  /// The memsets cuBLAS puts on the stream ahead of some of its GEMM kernels (framework.memsets,
  /// read off profiler traces of eager steps: bench/calib/memsets_to_profile.py): per GEMM call on
  /// average (the share of calls whose kernel zeroes a workspace first), and the GPU seconds each
  /// costs an eager step beyond what the graph-replayed GEMM tables already hold (the memset and a
  /// graph's kernel boundary): the longer boundaries of eagerly issued kernels around it.
  /// Attention needs none: its tables were timed eagerly, memsets included. Absent: not priced.
  struct Memsets {
    double per_gemm = 0, seconds = 0;
  };
  std::optional<Memsets> memsets;
};

/// One measured kernel (the calibrate summary table).
struct KernelRecord {
  std::string name, group, shape, unit, ceiling_name;
  double seconds = 0, achieved = 0, ceiling = 0;
};

struct Profile {
  std::string origin;        ///< file path or "embedded:<gpu>", for messages
  std::string gpu;           ///< catalog name, e.g. "h200-sxm-141gb"
  std::string source;        ///< "measured" or "derived"
  std::string derived_from;  ///< for derived profiles: the measured profile's GPU
  std::string derivation;    ///< for derived profiles: how (one sentence)
  std::string date, command;
  std::string device_name;  ///< as the driver names it, e.g. "NVIDIA H200"
  int sms = 0;
  double memory_bytes = 0, l2_bytes = 0;
  std::string driver_version, cuda_version;
  Ceilings ceilings;
  std::vector<GemmTable> gemm;
  /// Applies to every GEMM table (absent: none).
  std::optional<GemmTimingCorrection> gemm_timing;
  std::vector<PrefillTable> prefill;
  /// The FlashAttention-2 kernels' tables, same schema ("tables.attention_prefill_flash2"; empty:
  /// none measured, training.attention_kernel flash2 then takes `prefill`).
  std::vector<PrefillTable> prefill_flash2;
  /// Prefill shapes off the tables' axes (lengths off multiples of 64), timed with the tables, from
  /// which the cost model fits the attention block size (tables.attention_prefill_fit_points).
  std::vector<HoldoutPrefill> prefill_fit_points;
  std::optional<DecodeTable> decode;
  MemoryTable memory;
  std::vector<HoldoutGemm> holdout_gemm;
  /// GEMM shapes of real workloads timed on this GPU but kept out of the tables
  /// ("holdout.gemm_workload"): the tables' accuracy where it matters.
  std::vector<HoldoutGemm> holdout_workload;
  /// Exact GEMM shapes of a workload, timed like the held-out shapes ("tables.gemm_shapes",
  /// infraplan-calibrate --shapes): the cost model answers these shapes from them.
  std::vector<HoldoutGemm> gemm_exact;
  /// A workload's (format, n, k) timed over the grid's m axis ("tables.gemm_rows", same
  /// command): the cost model interpolates these in m instead of the grid. A row runs along the
  /// token axis of its layout: m for TN and NN (fixed n, k), k for NT (fixed m, n).
  struct GemmRow {
    Dtype dtype = Dtype::BF16;
    GemmLayout layout = GemmLayout::TN;
    std::int64_t m = 0, n = 0, k = 0;  ///< the fixed sizes (m only for NT, k only for TN / NN)
    bool graph_timed = false;          ///< "timing": "graph" (CUDA-graph replays); else the older harness
    double hold_ms = 0;                ///< rows timed held: the ms each shape was held (0: not held)
    std::vector<HoldoutGemm> points;  ///< ascending along the token axis
  };
  std::vector<GemmRow> gemm_rows;
  /// The same shapes timed held ("tables.gemm_held_rows", `infraplan-calibrate layouts --hold-ms`,
  /// bench/calib/held_rows_to_profile.py): each shape replayed until the power limiter settled on it,
  /// its time as measured at the clock it held. They answer `--clock held` where they cover a shape;
  /// the reference-clock answer keeps gemm_rows.
  std::vector<GemmRow> gemm_held_rows;
  std::vector<HoldoutPrefill> holdout_prefill;
  std::vector<HoldoutPrefill> holdout_prefill_flash2;  ///< "holdout.attention_prefill_flash2"
  std::vector<HoldoutDecode> holdout_decode;
  std::vector<HoldoutMemory> holdout_memory;
  std::vector<KernelRecord> kernels;
  /// Measured spread of op times between calibration runs and machines ("spread"): a prediction t
  /// of that kind lies in [t·(1 + low), t·(1 + high)] for the central 80% of measurements.
  struct SpreadBand {
    double low = 0, high = 0;  ///< relative (low ≤ 0 ≤ high)
    int samples = 0;           ///< measurements behind it
  };
  /// By kind: "gemm", "attention", "memory" (kinds absent: no measured spread).
  std::map<std::string, SpreadBand> spread;
  std::string spread_method;  ///< how it was measured (one sentence, from the profile)
  /// Measured / predicted quantiles over validation rows, by prediction kind ("training_step",
  /// "gemm", "serving_ttft", "serving_tpot"; kinds absent: not validated with this profile). See
  /// hardware/validation_error.hpp.
  std::map<std::string, ValidationError> validation_error;
  Json comm;  ///< the NCCL section as written (null when absent); see docs/calibration.md
  std::optional<FrameworkProfile> framework;  ///< eager-framework host costs (absent in older profiles)
  /// Matmul kernels' slowdown while a communication kernel runs beside them on the same GPU
  /// (profile "contention": bench/pytorch/gemm_contention.py, a copy kernel holding as many SMs as
  /// NCCL's channels and streaming HBM on another stream): time beside / time alone, >= 1; 1 when
  /// the profile has no such measurement.
  double gemm_slowdown_under_comm = 1;
  /// The serving engine's row kernels (one block per row: fused add + RMSNorm, RoPE with the KV
  /// write, SwiGLU, greedy argmax) timed over rows at one or more widths ("serving_kernels",
  /// infraplan-bench kernels). Key: kernel name; each width's seconds follow `rows`.
  struct RowKernelTable {
    std::vector<double> rows;
    std::map<std::string, std::vector<std::pair<double, std::vector<double>>>> kernels;  // by ascending width
    std::string source;
  };
  std::optional<RowKernelTable> serving_kernels;
  /// The serving engine's paged attention kernels in the shapes a step gives them ("serving_attention",
  /// infraplan-bench attention): prefill launches of one or more chunks after cached prefixes, and
  /// decode batches whose sequences share prefix blocks beside the same batch without sharing.
  struct ServingAttention {
    struct Prefill {
      int heads = 0, kv_heads = 0;
      std::vector<std::array<std::int64_t, 2>> chunks;  ///< {new tokens, cached tokens} per chunk
      double seconds = 0;
    };
    struct Decode {
      int heads = 0, kv_heads = 0;
      std::int64_t batch = 0, context = 0, shared_prefix = 0, groups = 0;
      std::int64_t unique_blocks = 0;  ///< distinct 16-token KV blocks the batch reads
      double seconds = 0;
    };
    std::vector<Prefill> prefill;
    std::vector<Decode> decode;
    std::string source;
    /// Keys per tile of the decode kernel that was timed (0: not recorded): a context ending inside
    /// a tile pays part of a whole tile (hardware/paged_attention_model.hpp).
    int decode_tile_tokens = 0;
    /// The timed prefill kernel's geometry: keys per tile a CTA walks at a time, and CTAs resident
    /// per multiprocessor (the mma.sync kernel's 64 and 2 when not recorded; the wgmma kernel's
    /// 128 and 1; bench/calib/attention_to_profile.py writes them).
    int prefill_key_tile = 64;
    int prefill_ctas_per_sm = 2;
    /// Groups of a CTA's 128 query rows that each stop at their own last position (mma.sync: 1 as
    /// modelled; wgmma: 2 warpgroups).
    int prefill_row_groups = 1;
  };
  std::optional<ServingAttention> serving_attention;
  /// Sustained load ("power", infraplan-calibrate --only power): workloads held back to back for
  /// seconds, with the clock and board power they settled at, beside the same workload timed in a
  /// burst. hw::PowerModel fits the board's power law on the "fit" points; "holdout" points check it.
  struct PowerPoint {
    std::string label;         ///< e.g. "gemm bf16 8192x8192x8192 tn", "copy", "mixed bf16 ... idle"
    std::string role;          ///< "fit" or "holdout"
    bool eight_bit = false;    ///< an fp8 or int8 GEMM (its own energy per operation)
    bool attention = false;    ///< attention: its FLOPs take the law's attention term
    double flops = 0;          ///< per unit (one GEMM, one copy, one period of a mixture)
    double bytes = 0;          ///< operand / copy bytes per unit
    double elementwise_bytes = 0;  ///< bytes of elementwise kernels (fp32 math per element) per unit
    double burst_seconds = 0;  ///< per unit, timed as the grids time a cell, after an idle GPU
    double burst_clock_mhz = 0;  ///< the SM clock read around the burst (0: not recorded)
    double sustained_seconds = 0;
    double clock_mhz = 0;      ///< sustained SM clock
    double power_w = 0;        ///< sustained board power
    double period_s = 0;       ///< a mixture's period (0: a single workload)
    double gemm_share = 1;     ///< a mixture's share of time in its GEMM
    /// Mixtures: what alternates with the GEMM ("idle", "copy", "elementwise"), the GEMM phase and the
    /// other phase per period at the top clock (gemms_per_period × gemm_burst_seconds,
    /// other_burst_seconds; 0 when not recorded), and the label of the GEMM run on its own.
    std::string mix_with;
    double gemm_phase_seconds = 0, other_phase_seconds = 0;
    std::string gemm_label;
  };
  /// A serving engine's decode step held under sustained load (infraplan-bench step --hold): what
  /// the board drew and the clock it settled at while the step ran back to back as the engine runs
  /// it. The draw the power law gives a step's work is scaled to these (simulator/engine_step_draw.hpp).
  struct EngineStepPoint {
    Json model;                ///< a preset name or a model object, as a scenario's "model"
    std::string name;          ///< how tables name the model ("name"; empty: the model's own name)
    std::int64_t batch = 0;    ///< decoding sequences
    std::int64_t context = 0;  ///< KV length of each, tokens
    std::string role;          ///< "fit" or "holdout"
    double gpu_seconds = 0;    ///< GPU time of one held step
    double wall_seconds = 0;   ///< wall time per held step (the host's part included)
    double clock_mhz = 0;      ///< SM clock while held
    double power_w = 0;        ///< mean board power while held
  };
  struct PowerSection {
    double limit_w = 0;        ///< the enforced board power limit
    double max_clock_mhz = 0;  ///< the highest SM clock
    double idle_w = 0;         ///< board power with nothing to run (0: not read)
    std::vector<PowerPoint> points;
    std::vector<EngineStepPoint> engine_steps;  ///< "engine_steps" (optional)
    /// What the GEMM points' operands were drawn from ("gemm_operands": "uniform" in ±1, as every
    /// probe before the choice existed, or "normal" as torch.randn and roughly a training step's
    /// activations).
    std::string gemm_operands = "uniform";
    /// "normal_operands.clock_ratio": the clock a power-capped GEMM settles at with normal operands
    /// over its clock with uniform ones, measured on the same shapes (0: not measured). The power law
    /// prices framework GEMMs with normal operands (hardware/power_model.hpp).
    double normal_operand_clock_ratio = 0;
  };
  std::optional<PowerSection> power;
  /// The clock the GEMM tables refer to, for profiles whose tables carry no clock readings (derived
  /// profiles): time × (reference / clock)^exponent per format ("gemm_clock").
  struct GemmClock {
    double reference_mhz = 0;
    std::map<Dtype, double> exponent;
  };
  std::optional<GemmClock> gemm_clock;

  /// The GEMM table for `d`, or nullptr.
  const GemmTable* gemm_table(Dtype d) const;
  /// The prefill table of `kernel` whose head_dim is closest to `head_dim`: from `prefill_flash2`
  /// for AttentionKernel::Flash2 when the profile has it, else from `prefill` (nullptr when none).
  const PrefillTable* prefill_table(int head_dim, AttentionKernel kernel = AttentionKernel::Default) const;
  /// Whether the profile has measured tables of `kernel` (the default's: any prefill table).
  bool has_prefill_kernel(AttentionKernel kernel) const;
};

/// Parses and validates a profile. Errors are infraplan::Error naming `origin` and the field
/// (e.g. "p.json: tables.gemm.bf16.seconds: expected 1024 entries (16×8×8), got 1000").
Profile parse_profile(const Json& j, const std::string& origin);
/// Reads a profile file (missing file or malformed JSON → infraplan::Error naming the path).
Profile load_profile_file(const std::string& path);
/// Throws infraplan::Error when `p` describes another GPU than `gpu_name`, unless `force`.
void check_profile_gpu(const Profile& p, const std::string& gpu_name, bool force = false);
/// Loads a profile file meant for `gpu_name` (refused for another GPU unless `force`).
Profile load_profile_for(const std::string& path, const std::string& gpu_name, bool force = false);

/// Catalog names that ship an embedded default profile (sorted).
std::vector<std::string> default_profile_gpus();
/// True when `gpu_name` has an embedded default profile.
bool has_default_profile(const std::string& gpu_name);
/// The embedded default profile for `gpu_name`; throws infraplan::Error listing the GPUs that
/// have one otherwise.
Profile default_profile(const std::string& gpu_name);
/// The embedded JSON text for `gpu_name` (empty when none).
std::string default_profile_json(const std::string& gpu_name);

/// Builds a derived profile for `target` from a measured one: every measured time keeps its
/// efficiency relative to the roofline (datasheet peak per format for GEMMs and attention, HBM
/// bandwidth for memory-bound work), the launch part stays as measured. GEMM formats the target
/// lacks are dropped; held-out data, kernel results and NCCL sweeps are not carried over.
Json derive_profile(const Json& measured, const GpuSpec& measured_gpu, const GpuSpec& target);

}  // namespace infraplan::hw
