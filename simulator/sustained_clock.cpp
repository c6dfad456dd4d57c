#include "simulator/sustained_clock.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace infraplan::sim {

StepClock step_clock(const hw::PowerModel& pm, double reference_mhz, double flops, bool eight_bit, double bytes,
                     double seconds) {
  StepClock c;
  c.reference_mhz = reference_mhz;
  c.max_mhz = pm.max_clock_mhz();
  c.limit_w = pm.limit_w();
  c.operand_energy_factor = pm.normal_operand_factor();
  if (seconds > 0) {
    (eight_bit ? c.demand.tflops8 : c.demand.tflops16) = flops * 1e-12 / seconds;
    // A training step's memory-bound kernels are norms, activations, casts and optimizer updates:
    // elementwise kernels, priced as such when the law knows them.
    (pm.knows_elementwise() ? c.demand.ew_TBps : c.demand.TBps) = bytes * 1e-12 / seconds;
  }
  c.mhz = pm.sustained_clock_mhz(c.demand);
  c.power_w = pm.power_w(c.demand, c.mhz);
  return c;
}

Json StepClock::to_json() const {
  return {{"clock_mhz", mhz},
          {"reference_clock_mhz", reference_mhz},
          {"max_clock_mhz", max_mhz},
          {"power_w", power_w},
          {"limit_w", limit_w},
          {"power_capped", capped()},
          {"demand",
           {{"tflops16", demand.tflops16},
            {"tflops8", demand.tflops8},
            {"attention_tflops16", demand.attn_tflops16},
            {"TBps", demand.TBps},
            {"elementwise_TBps", demand.ew_TBps}}},
          {"time_constant_s", time_constant_s},
          {"operand_energy_factor", operand_energy_factor},
          {"source",
           std::string(
               time_constant_s > 0
                   ? "the board's power limiter (running average of power, time constant from the profile's "
                     "power probe mixtures) walking the busiest GPU's compute ops of the step priced at the "
                     "top clock, each op drawing what the profile's power law gives its matmul FLOPs "
                     "(attention's at the law's attention rate) and memory-bound bytes; "
                     "the one clock that gives the lane's compute the limiter's time"
                   : "the profile's power law (power section, hardware/power_model.hpp) on the busiest GPU's "
                     "matmul FLOPs and memory-bound bytes over the step priced at the top clock") +
               (operand_energy_factor != 1 ? "; matmul energy for a framework's normal operands "
                                             "(power.normal_operands: the probe's GEMMs were uniform)"
                                           : "")}};
}

std::string StepClock::summary() const {
  char b[256];
  if (capped() && time_constant_s > 0)
    std::snprintf(b, sizeof b,
                  "%.0f MHz for the compute under the power limiter (%.0f W, averaged over %.0f ms; GEMM tables refer "
                  "to %.0f MHz)",
                  mhz, limit_w, 1e3 * time_constant_s, reference_mhz);
  else if (capped())
    std::snprintf(b, sizeof b, "%.0f MHz sustained (power-capped at %.0f W; GEMM tables refer to %.0f MHz)", mhz,
                  limit_w, reference_mhz);
  else
    std::snprintf(b, sizeof b, "%.0f MHz (top clock: %.0f W of %.0f W; GEMM tables refer to %.0f MHz)", mhz,
                  power_w, limit_w, reference_mhz);
  return b;
}

}  // namespace infraplan::sim
