#pragma once
// How the board's power limiter moves the clock over time, for work whose phases last as long as
// the limiter's averaging (serving steps of 10–200 ms, a GEMM alternating with idle time).
//
// The limiter keeps a running average of board power, P̄, that follows the drawn power with time
// constant τ (dP̄/dt = (P − P̄) / τ). While P̄ is below the limit the GPU runs at the top clock,
// whatever it draws; once P̄ reaches the limit the clock falls to where the drawn power equals
// the limit (the law's sustained clock, hw::PowerModel) and stays there while the phase lasts; a
// phase that draws less lets P̄ fall again. τ is fitted on the profile's mixtures of a heavy GEMM
// and an idle GPU (fit points; the other mixtures are held out): at periods well below τ the
// GEMM phases see the average draw, at periods well above they settle on their own.
#include <optional>
#include <string>
#include <vector>

#include "hardware/power_model.hpp"
#include "hardware/profile.hpp"

namespace infraplan::hw {

class PowerLimiter {
 public:
  /// One phase of work: its draw at the top clock, its seconds at the top clock and at the clock
  /// the limiter holds it to once capped (equal when it draws less than the limit).
  struct Phase {
    double top_power_w = 0;
    double top_seconds = 0;
    double capped_seconds = 0;
  };
  struct Run {
    double seconds = 0;       ///< the phase's duration
    double top_fraction = 1;  ///< share of its work done at the top clock
  };
  /// A mixture of the profile against the limiter: measured and modelled seconds per period.
  struct Check {
    std::string label, role;
    double measured_s = 0, modelled_s = 0;
  };

  /// `limit_w` > 0, `idle_w` ≥ 0 (what the board draws with nothing to run), `tau_s` > 0.
  PowerLimiter(double limit_w, double idle_w, double tau_s);

  double time_constant_s() const { return tau_; }
  double average_power_w() const { return avg_w_; }
  /// Nothing runs for `seconds` (≥ 0): P̄ falls toward the idle draw.
  void idle(double seconds);
  /// Runs one phase and advances P̄.
  Run run(const Phase& p);

  /// τ fitted on `s`'s idle mixtures with role "fit" (their GEMM's draw and slow-down from the law
  /// and the GEMM measured alone); nullopt when the section has fewer than two such mixtures with
  /// recorded phases or no GEMM measured alone for them. `checks` (optional) receives every
  /// mixture with recorded phases, fit and held out.
  static std::optional<double> fit_time_constant(const PowerModel& law, const Profile::PowerSection& s,
                                                 std::vector<Check>* checks = nullptr);

 private:
  double limit_w_, idle_w_, tau_;
  double avg_w_;
};

}  // namespace infraplan::hw
