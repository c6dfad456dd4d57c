#pragma once
// The cost model a run uses (CLI and desktop planner alike): the scenario's profile, else the GPU's embedded
// profile, else the datasheet roofline (or the roofline on request).
#include <map>
#include <memory>
#include <string>

#include "collectives/comm_profile.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/gpu_spec.hpp"
#include "common/json_util.hpp"
#include "hardware/spread_cost_model.hpp"

namespace infraplan::sim {

struct CostSetup {
  std::unique_ptr<hw::CostModel> cost;
  std::string name;        ///< "profile FILE", "embedded measured profile", "datasheet roofline"
  coll::CommProfile comm;  ///< the profile's NCCL fits, or documented defaults
  /// Where the numbers come from, for provenance: {"kind": "measured"|"derived"|"roofline",
  /// "gpu", "origin" (file or "embedded:<gpu>"), "date", "device", "derived_from", "description"}.
  Json provenance;
  /// The measured spread predictions carry (the profile's; a profile without one takes the
  /// embedded profile's of the same GPU; none for the roofline).
  hw::SpreadBands spread;
  /// How far the profile's predictions fell from its validation rows, by kind ("training_step",
  /// "gemm"): the profile's own record (none for a profile without one, or the roofline).
  std::map<std::string, hw::ValidationError> validation_error;
};

CostSetup make_cost_setup(const hw::GpuSpec& gpu, const std::string& profile_path, bool roofline);

}  // namespace infraplan::sim
