#pragma once
// What the published validation rows say about a GPU whose profile is derived (hardware/
// profile_derive.cpp) rather than measured on it: one sentence for a prediction's warnings, so that
// a number from a derived profile never reads as if it had been calibrated.
#include <string>

#include "hardware/cost_model.hpp"
#include "hardware/profile.hpp"

namespace infraplan::hw {

/// What the caveat speaks of: training steps or serving latencies.
enum class CaveatFor { Training, Serving };

/// The caveat for a derived profile (naming the GPU, the profile it comes from, and what the
/// published rows on that GPU found; docs/accuracy.md, docs/serving.md); empty for a measured
/// profile.
std::string derived_profile_caveat(const Profile& p, CaveatFor what = CaveatFor::Training);
/// The same for the profile behind a cost model (empty without one: the roofline).
std::string derived_profile_caveat(const CostModel& cost, CaveatFor what = CaveatFor::Training);

}  // namespace infraplan::hw
