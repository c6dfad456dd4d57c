#pragma once
// CalibratedCostModel: op durations from a Profile. Inside a measured table: interpolation in
// log space (log seconds, or log achieved rate, linear in the logs of the shape's coordinates);
// exact at grid points. Outside: the nearest table point's efficiency applied to the roofline
// of the actual shape ("roofline × fitted efficiency"), with the measured launch time as a floor.
// Every estimate says which of the two it is (CostSource::Measured / Extrapolated).
// GEMMs: m and n beyond one tile are rounded up to the table's tile quanta before interpolation;
// 16-byte-aligned shapes whose n or k is off the grid's multiples of 64 elements are scaled by a
// per-format off-grid factor; unaligned rows by the profile's measured misalignment ratio. Quanta
// and factor are fitted in the constructor on the table's fit points only (never on held-out data).
// The tables are TN (forward); NN and NT shapes take the measured layout ratio of the format
// (tables.gemm.<fmt>.layouts), and every table prediction the fleet scale (fleet.gemm.scale).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hardware/cost_model.hpp"
#include "hardware/paged_attention_model.hpp"
#include "hardware/power_limiter.hpp"
#include "hardware/power_model.hpp"
#include "hardware/profile.hpp"

namespace infraplan::hw {

class CalibratedCostModel final : public CostModel {
 public:
  /// `gpu` supplies datasheet facts (memory size, formats the chip supports); the profile
  /// supplies every time. Throws infraplan::Error when the profile is for another GPU.
  CalibratedCostModel(Profile profile, GpuSpec gpu);

  const GpuSpec& gpu() const override { return gpu_; }
  /// GEMM from the format's table; a format without a table (fp32, fp4, int4) uses the bf16
  /// table's efficiency on its own roofline. `batch` > 1 costs batch × one GEMM.
  CostEstimate gemm(const GemmShape& s) const override;
  /// gemm() without the profile's exact workload shapes: what the tables alone predict.
  /// `as_tabled`: without the fleet corrections, i.e. the table's own machine and timing harness
  /// (how held-out shapes timed with the tables are compared).
  CostEstimate gemm_from_tables(const GemmShape& s, bool as_tabled = false) const;
  /// gemm() from the grid alone (no exact shapes, no rows): the TN table, its layout ratio and
  /// fleet corrections, corrections for alignment.
  CostEstimate gemm_from_grid(const GemmShape& s) const;
  /// gemm() without the fleet corrections (see gemm_from_tables).
  CostEstimate gemm_as_tabled(const GemmShape& s) const;
  /// t(layout) / t(TN) the model applies to a table prediction of `s` (1 for TN, and for formats
  /// without a layout table of their own or bf16's: fp8 and int8 run TN on Hopper).
  double layout_ratio(const GemmShape& s, std::string* detail = nullptr) const;
  /// The timing-harness correction (fleet.gemm.timing) at a tabled time of `seconds` (1 without).
  double timing_ratio(double seconds) const;
  /// Prefill from the table of the nearest head_dim, keyed by (q_len, batch·heads / table heads);
  /// achieved FLOP/s is interpolated and applied to s.flops().
  CostEstimate attention_prefill(const AttentionPrefillShape& s) const override;
  /// Decode from the table keyed by (batch, per-sequence context in the table's KV bytes per token).
  CostEstimate attention_decode(const AttentionDecodeShape& s) const override;
  /// Device-copy table keyed by bytes moved (read + written).
  CostEstimate memory_bound(double bytes) const override;
  /// Measured back-to-back launch time per kernel.
  double launch_overhead_seconds() const override { return profile_.ceilings.launch_us * 1e-6; }
  /// From the framework section's elementwise GPU times (bf16 add: 3 operands × 2 B × elements,
  /// calls queued behind a GPU sleep, so no launch gaps), interpolated in log space and held at
  /// its smallest time below its smallest size; memory_bound() when the profile has none.
  CostEstimate memory_bound_queued(double bytes) const override;
  /// ceilings.graph_kernel_us (launch_overhead_seconds() when not measured).
  double graph_kernel_seconds() const override;
  /// ceilings.eager_kernel_gap_us (0 when not measured).
  double eager_kernel_gap_seconds() const override { return profile_.ceilings.eager_kernel_gap_us * 1e-6; }
  /// At the reference clock the GEMM tables refer to (this model's one clock), an eager kernel
  /// timed at the top clock slows by its clock share: (1 − φ) + φ · f_top / f_ref.
  double memory_clock_factor(double clock_share) const override;
  /// serving_kernels: log-log interpolation over rows (linear beyond the last), then linear in
  /// width between the two nearest measured widths (proportional with one width); at least the
  /// graph floor.
  std::optional<double> row_kernel_seconds(const std::string& kind, double rows, double width) const override;
  /// framework.aten_op_us_nograd (launch_overhead_seconds() when not measured).
  double framework_op_seconds() const override;

  const Profile& profile() const { return profile_; }
  const Profile* measured_profile() const override { return &profile_; }
  /// Fitted slow-down (≥ 0, 1 = none) of 16-byte-aligned GEMMs whose n or k is not a multiple of
  /// 64 elements, relative to interpolation between the grid's sizes (all multiples of 64); 1 for
  /// a format without a table.
  double offgrid_factor(Dtype d) const;
  /// Query and key blocks (tokens) of the prefill kernels the tables describe: an attention costs
  /// its number of whole (query block × key block) score tiles. Fitted on the profile's prefill fit
  /// points (the pair with the least median error); (1, 1), exact causal pairs, when it has none.
  std::pair<double, double> attention_blocks() const { return {block_q_, block_k_}; }
  /// The clock (MHz) GEMM predictions refer to: the median of the clocks the profile's GEMM cells
  /// were measured at; 0 when the profile records none (times then stand as measured).
  double reference_clock_mhz() const override { return reference_clock_mhz_; }
  /// The fitted exponent β of the clock referral t_ref = t · (clock / reference)^β for a format's
  /// table (0 without clock readings or without a table).
  double clock_exponent(Dtype d) const override;
  /// The paged prefill launch model (hardware/paged_attention_model.hpp) for bf16, head_dim 128,
  /// the engine kernel's shapes; nullopt without a "serving_attention" section.
  std::optional<CostEstimate> attention_prefill_launch(const AttentionPrefillLaunch& l) const override;
  /// Fitted on the profile's "serving_attention" section; nullptr without one.
  const PagedAttentionModel* paged_attention() const { return paged_ ? &*paged_ : nullptr; }
  /// Fitted on the profile's "power" section; nullptr without one.
  const PowerModel* power_model() const override { return power_ ? &*power_ : nullptr; }
  double power_limiter_tau_s() const override { return limiter_tau_s_; }
  double idle_power_w() const override { return profile_.power ? profile_.power->idle_w : 0.0; }
  /// The profile's mixtures against the fitted limiter (empty without one).
  const std::vector<PowerLimiter::Check>& power_limiter_checks() const { return limiter_checks_; }
  /// (mhz / reference)^β: how a time measured at `mhz` compares with the prediction (1 when either
  /// clock is unknown). A GEMM measured at `mhz` is predicted as gemm(s).seconds / clock_factor.
  double clock_factor(Dtype d, double mhz) const;
  /// The exponent a GEMM's time follows between its burst and its held clock, measured by the power
  /// section's fit GEMMs of the format's width (16- or 8-bit): each one's log(held / burst time) over
  /// log(burst / held clock), where its held clock is at least 3% below its burst clock; their median.
  /// The table's clock_exponent(d) where no such point exists.
  double held_clock_exponent(Dtype d) const;
  /// (mhz / reference)^held_clock_exponent(d): clock_factor for a GEMM held at `mhz`.
  double held_clock_factor(Dtype d, double mhz) const;
  /// The SM clock (MHz) the power law gives `s` run back to back on its own, as a benchmark that
  /// holds each shape measures it: the clock at which its draw (its FLOPs and operand bytes at its
  /// predicted rate) meets the board's limit, the top clock when it draws less; 0 without a power
  /// law or a reference clock. With `duty` < 1 the GEMM runs that share of the time and the GPU idles
  /// the rest (a benchmark's gaps between samples, a GEMM between lighter work): the limiter averages
  /// the draw, so the demand is scaled by it. `duty` must be in (0, 1].
  double gemm_held_clock_mhz(const GemmShape& s, double duty = 1.0) const;
  /// A GEMM held back to back as the profile's rows timed held measured it (tables.gemm_held_rows):
  /// the time as measured at the clock it held, log-space interpolation along the row's token axis,
  /// and that clock (MHz, 0 = not recorded); nullopt where no held row covers the shape (another
  /// format, layout or fixed size, batched, or tokens outside the row).
  struct HeldGemm {
    double seconds = 0, clock_mhz = 0;
    double hold_ms = 0;  ///< > 0: from a row timed held, as measured; 0: the power law's clock
  };
  std::optional<HeldGemm> gemm_held_measured(const GemmShape& s) const;
  /// The answer `--clock held [--duty F]`: a held row as measured where one covers `s` and duty is 1,
  /// else gemm(s) at the power law's held clock (gemm_held_clock_mhz) with the held exponent.
  HeldGemm gemm_held(const GemmShape& s, double duty = 1.0) const;
  /// The fastest HBM streaming (bytes/s) the table of `d` measured (cells of at least 4× the L2, as
  /// timed); 0 without one. Corrected GEMM predictions whose operands exceed the L2 never beat it.
  double gemm_stream_Bps(Dtype d) const;
  /// A timed shape's time at the reference clock: each pass referred by the clock it ran at, then
  /// the median; its `seconds` when the passes carry no clock readings. `beta` >= 0 refers with that
  /// exponent instead of the format's (a workload row's measured one).
  double at_reference_clock(const HoldoutGemm& h, double beta = -1) const;

 private:
  CostEstimate gemm_impl(const GemmShape& s, bool use_exact, bool use_rows, bool use_fleet = true) const;
  Profile profile_;
  GpuSpec gpu_;
  std::vector<double> offgrid_factor_;  ///< per profile_.gemm table, fitted on its fit points
  std::vector<double> clock_exponent_;  ///< per profile_.gemm table, fitted on its fit points
  /// held_clock_exponent of 16- and 8-bit GEMMs (< 0: no power point measured it).
  double held_exponent16_ = -1, held_exponent8_ = -1;
  /// Per profile_.gemm table: the fastest rate (bytes/s) at which its cells read and wrote their
  /// operands from HBM (cells of at least 4× the L2); 0 = none. The fleet and timing corrections
  /// never make a GEMM move its operands faster than this.
  std::vector<double> stream_Bps_;
  double l2_bytes_ = 0;  ///< the GPU's L2 (64 MiB where the catalog does not say)
  /// profile_.gemm_exact by (format, layout, m, n, k): seconds at the reference clock.
  std::map<std::tuple<int, int, std::int64_t, std::int64_t, std::int64_t>, double> exact_;
  /// profile_.gemm_rows by (format, layout, fixed sizes: n, k for TN / NN, m, n for NT): the token
  /// axis values (m, or k for NT) and seconds at the reference clock.
  std::map<std::tuple<int, int, std::int64_t, std::int64_t>, std::pair<std::vector<double>, std::vector<double>>>
      rows_;
  /// profile_.gemm_held_rows, keyed as rows_: token axis values, seconds as measured held and the
  /// clock each point held (MHz, 0 = unknown).
  struct HeldRow {
    std::vector<double> tok, seconds, clock_mhz;
    double hold_ms = 0;
  };
  std::map<std::tuple<int, int, std::int64_t, std::int64_t>, HeldRow> held_rows_;
  double reference_clock_mhz_ = 0;
  std::optional<PowerModel> power_;
  double limiter_tau_s_ = 0;
  std::vector<PowerLimiter::Check> limiter_checks_;
  std::optional<PagedAttentionModel> paged_;
  /// Fleet scale and timing correction apply (off while the constructor fits on the fit points,
  /// which were timed with the tables).
  bool fleet_ = false;
  double block_q_ = 1, block_k_ = 1;  ///< attention blocks, fitted on the prefill fit points

  /// Score elements computed in whole tiles for q_len queries over kv_len keys (the last q_len
  /// keys are the queries' own, causal or not).
  double tile_work(double q_len, double kv_len, bool causal) const;
};

/// The model for catalog GPU `gpu_name`: from `profile_path` when given (refused if it names
/// another GPU, unless `force`), else from the embedded default profile.
std::unique_ptr<CalibratedCostModel> make_calibrated_cost_model(const std::string& gpu_name,
                                                                const std::string& profile_path = "",
                                                                bool force = false);

/// One held-out measurement against the model's prediction.
struct HoldoutRow {
  std::string kind;   ///< "gemm" (n, k multiples of 64), "gemm_odd" (other sizes): measured times
                      ///< referred to the model's reference clock by each pass's clock reading;
                      ///< "gemm_as_measured", "gemm_odd_as_measured": the same shapes as measured
                      ///< (the GPU's clock state unknown to the model); "attention_prefill",
                      ///< "attention_decode", "memory_bound"; "gemm_workload": GEMM shapes of real
                      ///< workloads against the tables alone
  std::string shape;  ///< e.g. "bf16 777x5120x3000"
  std::int64_t m = 0, n = 0, k = 0;  ///< GEMM rows: the shape's sizes (0 for other kinds)
  double measured_seconds = 0, predicted_seconds = 0;
  double rel_error = 0;  ///< |predicted − measured| / measured
  CostSource source = CostSource::Measured;
};

/// Error statistics of one kind.
struct HoldoutStats {
  std::string kind;
  std::size_t count = 0;
  double median = 0, p90 = 0, max = 0;  ///< of rel_error
};

/// Predicts every held-out measurement of `p` with `cm`. GEMMs and memory-bound kernels shorter
/// than `min_gemm_seconds` are left out (launch-bound, timed within the host's launch jitter: the
/// accuracy target applies to kernels > 10 µs).
std::vector<HoldoutRow> holdout_rows(const CostModel& cm, const Profile& p, double min_gemm_seconds = 10e-6);
/// Median, 90th percentile and max relative error per kind (kinds in a fixed order).
std::vector<HoldoutStats> holdout_stats(const std::vector<HoldoutRow>& rows);

}  // namespace infraplan::hw
