#pragma once
// What a serving engine's decode steps draw from the board, from the steps themselves.
//
// The power law (hardware/power_model.hpp) is fitted on the power probe's GEMMs, copies and
// elementwise kernels. A decode step of a hundred or more sequences draws more than the law gives
// its matmul FLOPs and bytes: held back to back on the H200 (infraplan-bench step --hold) a
// LLaMA-3-8B step of 256 sequences settles at 1,642 MHz at the 700 W cap where the law gives its
// work 1,800+ MHz (docs/serving.md, "Decode steps held under load"). The profile's
// power.engine_steps record such held steps; for each, the step is priced as the simulator prices
// it (a SimulatedBackend of its model at the top clock), and κ — the switching draw the board
// showed over the law's for that work — follows from its measured clock and power:
//     P_busy = P0 + κ · (e16·F16 + e8·F8 + eb·B + eew·E) · (f / fmax)^γ,
// P_busy being the measured mean power with the host's gaps between steps counted at the idle
// draw. The serving backend scales a step's demand by κ at its number of decoding sequences,
// weighted by their share of the step's tokens (a prefill chunk keeps the law's draw).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hardware/cost_model.hpp"
#include "hardware/power_model.hpp"
#include "simulator/engine_preset.hpp"

namespace infraplan::sim::serve {

/// One held decode step against the law.
struct EngineStepDraw {
  std::string model;  ///< the model's name
  std::int64_t batch = 0, context = 0;
  std::string role;           ///< "fit" or "holdout"
  double measured_mhz = 0;    ///< clock while held
  double measured_w = 0;      ///< mean board power while held
  double busy_fraction = 1;   ///< GPU time / wall time per held step
  double step_seconds = 0;    ///< the step as the simulator prices it at the top clock
  hw::PowerDemand demand;     ///< its work's rates at the top clock (what the law prices)
  double law_mhz = 0;         ///< the clock the law gives the step's work (κ = 1)
  double scale = 1;           ///< κ
};

/// κ of every power.engine_steps point of `cm`'s profile (empty without a power law or points):
/// each priced as the engine that was held runs it (the `infraplan` preset, CUDA graphs up to the
/// largest held batch) on one GPU in bf16 weights and KV. Throws infraplan::Error naming the point
/// when its model does not resolve.
std::vector<EngineStepDraw> engine_step_draws(const hw::CostModel& cm);

/// `d` with its switching draw scaled by `k` (the law is linear in its rates).
hw::PowerDemand with_draw_scale(hw::PowerDemand d, double k);

/// κ as a function of the decoding sequences of a step, from the fit points: the median κ of the
/// points at each batch size, linear in log(batch) between them, held flat beyond the ends.
class DecodeDrawScale {
 public:
  DecodeDrawScale() = default;
  explicit DecodeDrawScale(const std::vector<EngineStepDraw>& draws);
  bool empty() const { return pts_.empty(); }
  /// κ for a step with `rows` decoding sequences (1 when empty).
  double at(double rows) const;

 private:
  std::vector<std::pair<double, double>> pts_;  // (log batch, κ), ascending
};

}  // namespace infraplan::sim::serve
