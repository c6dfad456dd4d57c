#pragma once
// The clock a GPU sustains under its board power limit, from the profile's sustained-load
// measurements ("power", infraplan-calibrate --only power).
//
// Law: a workload that would do F16 TFLOP/s of 16-bit matmul work, F8 TFLOP/s of 8-bit work, move
// B TB/s of operands or copies and E TB/s through elementwise kernels at the top clock fmax draws,
// at clock f,
//     P(f) = P0 + (e16·F16 + e8·F8 + ea·A + eb·B + eew·E) · (f / fmax)^γ
// watts (A: the 16-bit matmul TFLOP/s of attention kernels, whose softmax work on the FMA and SFU
// pipes draws beyond their matmul FLOPs; ea is fitted on the attention fit points alone, the other
// parameters held, and equals e16 without such points) (a base that does not follow the clock, and the
// switching power of the work, whose energy per operation and rate both fall with the clock and the voltage
// that goes with it). Above the limit the GPU lowers its clock until P(f) = limit. P0, e16, e8, eb and γ are
// fitted on the profile's "fit" points only: the clock of each power-capped point and the power of each point
// that kept the top clock. A step of many kernels draws the time average of its kernels' draw (the
// power limiter averages over far longer than a kernel: a GEMM alternating with an idle GPU every
// few ms keeps the top clock where the GEMM alone is capped), so its work is summed over the step.
//
// Operands: a GEMM's switching energy depends on its data. With normal operands (torch.randn, and
// roughly a training step's activations) a power-capped GEMM settles at a lower clock than with the
// uniform ±1 operands the calibrator's power probe used (cycles per GEMM unchanged: the data moves the
// draw, not the work). When the section's GEMM points are uniform and it records that clock ratio
// ("normal_operands.clock_ratio", c), the law prices matmul work (16-bit, 8-bit, and attention's where no
// attention points fitted its own) with e · c^(−γ): the energy that puts a capped GEMM c times lower.
#include <string>
#include <vector>

#include "hardware/profile.hpp"

namespace infraplan::hw {

/// A workload's rates at the top clock.
struct PowerDemand {
  double tflops16 = 0;  ///< 16-bit (bf16/fp16/tf32) matmul TFLOP/s
  double tflops8 = 0;   ///< fp8/int8 matmul TFLOP/s
  double attn_tflops16 = 0;  ///< 16-bit matmul TFLOP/s of attention kernels (QKᵀ and PV)
  double TBps = 0;      ///< operand and copy traffic, 1e12 B/s
  double ew_TBps = 0;   ///< traffic of elementwise kernels (fp32 math per element), 1e12 B/s
};

class PowerModel {
 public:
  struct Params {
    double base_w = 0;        ///< P0
    double w_per_tflops16 = 0;  ///< e16 (J per 1e12 16-bit FLOP)
    double w_per_tflops8 = 0;   ///< e8
    double w_per_TBps = 0;      ///< eb (J per 1e12 B)
    double w_per_ew_TBps = 0;   ///< eew (J per 1e12 B of elementwise kernels; eb without such points)
    double exponent = 0;        ///< γ
    double w_per_attn_tflops16 = 0;  ///< ea (J per 1e12 attention FLOP; e16 without attention points)
  };
  /// A measured point against the law: the clock it settled at and the clock the law gives it
  /// (from its burst rates), and its power.
  struct Check {
    std::string label, role;
    double measured_mhz = 0, modelled_mhz = 0, power_w = 0;
    /// False for mixtures whose GEMM phases outlast the limiter's averaging (kept out of the fit
    /// and of max_clock_error: the law does not describe them).
    bool averaged = true;
  };

  /// Fits the law on `p`'s fit points (at least 3, one of them power-capped); throws Error otherwise.
  explicit PowerModel(const Profile::PowerSection& p);

  /// The law's parameters for framework workloads (e16 and e8 for normal operands when the section says so).
  const Params& params() const { return params_; }
  /// The parameters as fitted on the section's points (their own operands' e16 and e8).
  const Params& fitted_params() const { return fitted_; }
  /// Matmul energy (e16, e8) of normal operands over the fit points' (1 when the same or not measured).
  double normal_operand_factor() const { return operand_factor_; }
  double limit_w() const { return limit_w_; }
  double max_clock_mhz() const { return max_mhz_; }
  /// P(f) for demand `d` (rates at the top clock).
  double power_w(const PowerDemand& d, double mhz) const;
  /// The clock at which `d` draws the limit; the top clock when it stays under.
  double sustained_clock_mhz(const PowerDemand& d) const;
  /// True when the fit had elementwise points (eew is then its own; else it equals eb).
  bool knows_elementwise() const { return elementwise_; }
  /// True when the profile had attention fit points (ea is then its own; else it equals e16).
  bool knows_attention() const { return attention_; }
  /// Every point of the section (fit and held out), measured vs modelled.
  const std::vector<Check>& checks() const { return checks_; }
  /// Largest |modelled / measured − 1| of the clock over the averaged points of `role`.
  double max_clock_error(const std::string& role) const;

 private:
  /// Sum of squared residuals of `points` under `p` (the fit's objective).
  double residuals(const Params& p, const std::vector<const Profile::PowerPoint*>& points) const;

  Params params_, fitted_;
  double operand_factor_ = 1;
  double limit_w_ = 0, max_mhz_ = 0;
  bool elementwise_ = false;
  bool attention_ = false;
  std::vector<Check> checks_;
};

/// The demand of one point's burst (its rates at the top clock).
PowerDemand burst_demand(const Profile::PowerPoint& p);
/// A mixture's GEMM phase is short enough for the law's average draw (see power_model.cpp).
bool phase_is_averaged(const Profile::PowerPoint& p);

}  // namespace infraplan::hw
