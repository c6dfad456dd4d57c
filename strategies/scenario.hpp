#pragma once
// Scenario: the one file format every command reads (see docs/scenario.md):
// {"name", "model", "cluster", "profile", "seed", "training": {...}, "serving": {...},
//  "workload": {...}}.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "common/json_util.hpp"
#include "model/model_spec.hpp"
#include "strategies/serving_config.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::strat {

struct Scenario {
  std::string name;
  std::string origin;  ///< file path or "inline"
  model::ModelSpec model;
  hw::Cluster cluster;
  std::string profile;  ///< profile file path; empty = the GPU's embedded default
  std::uint64_t seed = 1;
  std::optional<TrainingConfig> training;
  std::optional<ServingConfig> serving;
  Json serving_raw;  ///< the "serving" object as written (engine keys included)
  Json workload;     ///< the "workload" object as written (null when absent)
  Json raw;          ///< the whole file
  /// Files this scenario was read from: the scenario itself and the model, cluster, profile,
  /// trace and draft-model files it names (an output of the same run may not overwrite them).
  std::vector<std::string> input_files;
};

/// Parses a scenario object; relative file paths inside it resolve against `base_dir`.
Scenario scenario_from_json(const Json& j, const std::string& origin, const std::string& base_dir = "");
/// Reads and parses a scenario file.
Scenario load_scenario(const std::string& path);

/// The framework a profile calibrated from a profiler trace names ("trace_calibration.framework",
/// infraplan calibrate --from-trace), or Auto (no such profile, or one measured otherwise). A
/// scenario whose training names no framework runs the one its profile was traced in.
Framework traced_framework(const std::string& profile_path);

}  // namespace infraplan::strat
