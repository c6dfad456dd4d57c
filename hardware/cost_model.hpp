#pragma once
// CostModel: how long one GPU op takes. Implementations: RooflineCostModel (datasheet peaks) and
// the calibrated model built from a measured or derived Profile. Everything that needs a kernel
// duration (training work graphs, the serving engine, the planner) goes through this interface.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.hpp"
#include "common/gemm_layout.hpp"
#include "hardware/attention_kernel.hpp"
#include "hardware/gpu_spec.hpp"

namespace infraplan::hw {

struct Profile;
class PowerModel;

/// Where an estimate came from.
enum class CostSource {
  Measured,      ///< interpolated inside a measured table
  Extrapolated,  ///< outside the measured table: roofline × fitted efficiency
  Roofline,      ///< datasheet peak only (no profile)
};
const char* cost_source_name(CostSource s);

/// The answer for one op.
struct CostEstimate {
  double seconds = 0;   ///< predicted duration of the op, launch overhead included
  double achieved = 0;  ///< achieved rate: FLOP/s for compute ops, B/s for memory-bound ops
  double ceiling = 0;   ///< the ceiling the rate is compared with (same unit as `achieved`)
  CostSource source = CostSource::Roofline;
  std::string detail;  ///< human-readable note, e.g. "bf16 table, 4 neighbours"
};

/// Operand layouts of a GEMM (TN forward, NN input gradient, NT weight gradient): common/gemm_layout.hpp.
using ::infraplan::gemm_layout_name;
using ::infraplan::GemmLayout;
using ::infraplan::parse_gemm_layout;

/// C[m,n] = A[m,k] · B[k,n], repeated `batch` times (batched GEMM), operands in `layout`.
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  Dtype dtype = Dtype::BF16;
  std::int64_t batch = 1;
  GemmLayout layout = GemmLayout::TN;
  double flops() const { return 2.0 * double(m) * double(n) * double(k) * double(batch); }
};

/// FlashAttention-style forward over `batch` sequences of `q_len` new tokens attending to
/// `kv_len` keys (kv_len ≥ q_len; the first kv_len − q_len are a cached prefix).
struct AttentionPrefillShape {
  std::int64_t batch = 1, q_len = 0, kv_len = 0;
  std::int64_t heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = true;
  Dtype dtype = Dtype::BF16;
  /// The implementation whose measured tables price it (profiles without its tables: the default).
  AttentionKernel kernel = AttentionKernel::Default;
  /// Matmul FLOPs (QKᵀ and PV), counting only the unmasked part when causal.
  double flops() const;
};

/// Paged decode attention: `batch` sequences each generating one token, with
/// `total_context_tokens` cached tokens summed over the batch.
struct AttentionDecodeShape {
  std::int64_t batch = 1, total_context_tokens = 0;
  std::int64_t heads = 0, kv_heads = 0, head_dim = 0;
  Dtype kv_dtype = Dtype::BF16;
  /// Distinct cached tokens the batch reads (sequences sharing prefix blocks read them once from
  /// HBM); -1 = every sequence's context is its own.
  std::int64_t unique_context_tokens = -1;
  /// Priced as the serving engine's own kernel runs it in a step (its split rule, KV read from HBM)
  /// where the profile measured that ("serving_attention"), else from the decode table.
  bool engine_kernel = false;
  /// Keys that would fill each sequence's last tile of the engine's decode kernel, summed over the
  /// batch (its tile: the profile's serving_attention.decode_tile_tokens); engine_kernel only.
  std::int64_t tile_padding_tokens = 0;
  /// Bytes of K and V read from HBM.
  double kv_bytes() const;
  double flops() const;
};

/// One launch of a paged prefill-attention kernel over every prefill chunk of a serving step.
struct AttentionPrefillLaunch {
  std::vector<std::array<std::int64_t, 2>> chunks;  ///< {new tokens, cached tokens} per chunk
  std::int64_t heads = 0, kv_heads = 0, head_dim = 0;
  Dtype dtype = Dtype::BF16;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  /// The GPU this model describes.
  virtual const GpuSpec& gpu() const = 0;
  virtual CostEstimate gemm(const GemmShape& s) const = 0;
  virtual CostEstimate attention_prefill(const AttentionPrefillShape& s) const = 0;
  virtual CostEstimate attention_decode(const AttentionDecodeShape& s) const = 0;
  /// One launch over several prefill chunks as a serving engine's paged kernel runs it; nullopt
  /// when the model has no measurement of that kernel (callers then price each chunk with
  /// attention_prefill).
  virtual std::optional<CostEstimate> attention_prefill_launch(const AttentionPrefillLaunch& /*l*/) const {
    return std::nullopt;
  }
  /// A memory-bound kernel moving `bytes` (read + written) through HBM.
  virtual CostEstimate memory_bound(double bytes) const = 0;
  /// Seconds to launch one kernel (host → GPU) when nothing hides it.
  virtual double launch_overhead_seconds() const = 0;

  // Kernel floors: what a kernel costs when many run back to back (serving steps, docs/serving.md).
  /// GPU time of a memory-bound kernel moving `bytes` when kernels are queued back to back (a
  /// CUDA-graph replay, or a host that runs ahead of the GPU): no launch gap, only the GPU's own
  /// minimum per kernel. Defaults to memory_bound() (which may be launch-bound at small sizes).
  virtual CostEstimate memory_bound_queued(double bytes) const { return memory_bound(bytes); }
  /// Seconds per kernel of a replayed CUDA graph with nothing to do (an empty kernel): the
  /// shortest any kernel takes in a graph. Defaults to launch_overhead_seconds().
  virtual double graph_kernel_seconds() const { return launch_overhead_seconds(); }
  /// The time factor, at the clock this model prices at, of a memory-bound kernel timed at the top
  /// clock whose time follows the clock in share `clock_share` (framework.clock_share): 1 here and
  /// in every model without a clock (the roofline); the calibrated model answers at its GEMM tables'
  /// reference clock, hw::ClockedCostModel at its own.
  virtual double memory_clock_factor(double /*clock_share*/) const { return 1.0; }
  /// GPU seconds lost between two dependent kernels issued eagerly (the host ahead of the GPU)
  /// beyond what a graph replay of the same kernels loses. 0 where not measured.
  virtual double eager_kernel_gap_seconds() const { return 0; }
  /// GPU seconds of a serving engine's row kernel (`kind`: add_rmsnorm, rope_kv_write, swiglu,
  /// argmax) over `rows` rows of `width` elements, replayed in a graph; nullopt when the
  /// profile has no measured table for it (callers then price the kernel by its bytes).
  virtual std::optional<double> row_kernel_seconds(const std::string& /*kind*/, double /*rows*/,
                                                   double /*width*/) const {
    return std::nullopt;
  }
  /// Host seconds an eager framework (PyTorch) spends issuing one op without autograd: the pace
  /// at which a Python engine's eager code can feed the GPU. Defaults to launch_overhead_seconds().
  virtual double framework_op_seconds() const { return launch_overhead_seconds(); }
  /// The measured profile behind the answers (framework costs, attention backward ratios), or
  /// nullptr (roofline). Wrappers (recording, spread) answer with their inner model's.
  virtual const Profile* measured_profile() const { return nullptr; }
  /// The SM clock (MHz) GEMM and attention times refer to; 0 when they do not depend on a clock
  /// (roofline). Wrappers answer with their inner model's.
  virtual double reference_clock_mhz() const { return 0; }
  /// How a format's GEMM time follows the clock: t(f) = t(reference) · (reference / f)^exponent.
  virtual double clock_exponent(Dtype /*d*/) const { return 0; }
  /// The board's power law (hardware/power_model.hpp) fitted on the profile's sustained-load
  /// measurements, or nullptr (no such measurement: times stay at the reference clock).
  virtual const PowerModel* power_model() const { return nullptr; }
  /// The power limiter's averaging time constant (hardware/power_limiter.hpp), fitted on the
  /// profile's GEMM-and-idle mixtures; 0 when the profile has none.
  virtual double power_limiter_tau_s() const { return 0; }
  /// True when serving steps can follow the power limiter: a power law and its time constant.
  bool has_power_limiter() const { return power_model() && power_limiter_tau_s() > 0; }
  /// Board power with nothing to run, W (0: not measured).
  virtual double idle_power_w() const { return 0; }
  /// Factor on the framework host costs of the profile (1; an uncertainty edge scales them).
  virtual double host_time_factor() const { return 1.0; }
};

}  // namespace infraplan::hw
