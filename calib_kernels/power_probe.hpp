#pragma once
// Sustained load: what clock and board power a GPU settles at when one workload runs back to back
// for seconds, as it does inside a training step, against the same workload timed in a short burst
// as the calibration grids time it. Under a power cap the clock of a heavy GEMM falls until the
// board draws its limit; a light kernel keeps the highest clock. The cost model turns these
// readings into a clock per workload (hardware/power_model.hpp).
//
// Power, the enforced limit, the clock NVML reports and the clock-event (throttle) reasons are read
// through NVML, loaded at run time (libnvidia-ml.so.1 comes with the driver); without it the
// multiprocessor clock is still measured on the GPU (clock_meter) and power is left out.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calib_kernels/cublas_gemm.hpp"
#include "calib_kernels/gemm_layout.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {

/// One workload held back to back. A GEMM (kind "gemm"), a device-to-device copy of `copy_bytes`
/// per side (kind "copy"), a SwiGLU over an 8192 × 2·14336 bf16 tensor (kind "elementwise"), causal
/// prefill attention over 4 × 4,096 tokens (kind "attention"), paged decode attention over 256 ×
/// 1,024 cached tokens (kind "decode"), or a
/// GEMM alternating with a copy, an elementwise kernel or an idle GPU (kind "mixed"): `gemm_share`
/// of each period in the GEMM, the rest in the copies / elementwise kernels (`mix_with` "copy",
/// "elementwise") or in a one-block wait kernel (`mix_with` "idle", a pipeline bubble's load).
struct PowerWorkload {
  std::string kind = "gemm";
  std::string role = "fit";  ///< "fit" (the model's parameters come from these) or "holdout"
  GemmDtype dtype = GemmDtype::BF16;
  GemmLayout layout = GemmLayout::TN;
  std::int64_t m = 0, n = 0, k = 0;
  double copy_bytes = 0;
  double gemm_share = 1.0;
  std::string mix_with;
  double period_s = 4e-3;  ///< a mixture's period
};

/// The workloads `infraplan-calibrate --only power` and the full calibration hold: square and
/// transformer GEMMs in bf16 (one fp8), weight-streaming GEMMs, a copy, and two mixtures (held out).
std::vector<PowerWorkload> default_power_workloads();

/// Holds each workload for `hold_s` seconds (the first half settles, the second is measured) and
/// times it in a burst after `rest_s` of idle GPU, the GEMMs' operands drawn from `fill`. Returns the
/// profile's "power" section: {limit_w, idle_w, max_clock_mhz, hold_s, nvml, gemm_operands, points: [{kind,
/// role, dtype, layout, m, n, k, copy_bytes, gemm_share, mix_with, burst: {seconds, clock_mhz}, sustained:
/// {seconds, clock_mhz, nvml_clock_mhz, power_w, temperature_c, clock_event_reasons}, flops, bytes}]};
/// seconds are per launch of the workload's unit (one GEMM, one copy, or one period of a mixture). A mixture
/// also has {period_s, gemms_per_period, gemm_burst_seconds (one GEMM), other_burst_seconds (the copies or
/// the idle wait of one period)}: how much its GEMMs slowed under sustained load, and so the power limiter's
/// averaging time, follow from them.
nlohmann::ordered_json measure_power(const LtHandle& lt, cudaStream_t stream, double l2_bytes,
                                     const std::vector<PowerWorkload>& workloads, double hold_s,
                                     double rest_s, std::uint64_t seed,
                                     FillDistribution fill = FillDistribution::Uniform);

}  // namespace infraplan::calib
