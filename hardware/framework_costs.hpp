#pragma once
// What a training step pays beyond the kernel times of the cost model, read from the measured
// profile: the attention backward / forward time ratio of the profile's prefill table (when it
// records backward times) and the eager framework's host-side costs (profile "framework").
#include <optional>
#include <string>
#include <utility>

#include "hardware/cost_model.hpp"
#include "hardware/profile.hpp"

namespace infraplan::hw {

/// The measured profile behind `cost` (a CalibratedCostModel, or a wrapper of one), or nullptr.
const Profile* profile_of(const CostModel& cost);

/// Backward / forward time ratio of causal attention at shape `s`, from the prefill table of its kernel with
/// the closest head_dim: the ratio at the table points, interpolated linearly over log seq_len and log(batch
/// · heads / table heads) among the measured cells (clamped at the edges). nullopt when the table records no
/// backward times.
std::optional<double> attention_backward_ratio(const Profile& p, const AttentionPrefillShape& s);

/// GPU seconds of the framework's eager kernel `op` (framework.elementwise, e.g. "cast_f32_bf16")
/// over `elements`: log-log interpolation between the measured counts; above the largest, time
/// grows in proportion; below the smallest, the smallest count's time (launch-bound). nullopt
/// when the profile has no such table.
std::optional<double> eager_op_seconds(const Profile& p, const std::string& op, double elements);
/// The share of an eager kernel's time that follows the SM clock (framework.clock_share; 0 when the
/// profile has none for `op`).
double eager_op_clock_share(const Profile& p, const std::string& op);
/// The time factor of a kernel timed at `top_mhz` whose time follows the clock in share
/// `clock_share` (clamped to [0, 1]), run at `mhz`: (1 − φ) + φ · top / mhz; 1 at or above the top
/// clock or without clocks.
double clock_share_factor(double clock_share, double top_mhz, double mhz);

/// GPU seconds cuBLAS's memsets add to one GEMM call of an eager PyTorch step beyond the GEMM
/// tables (framework.memsets: the mean count per call times each one's eager cost); 0 when the
/// profile has none.
double memset_seconds_per_gemm(const Profile& p);

/// Host µs (forward, backward) of module kind `kind` ("linear", "layernorm", ...), or nullopt.
std::optional<std::pair<double, double>> module_host_us(const Profile& p, const std::string& kind);

}  // namespace infraplan::hw
