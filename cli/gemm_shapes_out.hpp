#pragma once
// --gemm-shapes-out FILE (simulate train|serve): the run's cost model answers through a recorder,
// and the distinct GEMM shapes it was asked for are written to FILE after the run (for
// infraplan calibrate --shapes; docs/calibration.md).
#include <optional>
#include <string>

#include "cli/args.hpp"
#include "common/output_files.hpp"
#include "hardware/recording_cost_model.hpp"

namespace infraplan::cli {

class GemmShapesOut {
 public:
  static OptionSpec option();
  GemmShapesOut(const Args& a, const hw::CostModel& cost);
  /// The cost model the run should use: the recorder when a file is asked for.
  const hw::CostModel& cost() const { return path_ ? static_cast<const hw::CostModel&>(recorder_) : inner_; }
  /// Writes the file (atomically) and says so on stderr; nothing without the option.
  void write() const;
  /// With several outputs: registers the file with `out` (checked before the run) ...
  void declare(OutputFiles& out) const;
  /// ... and after the run hands it its content (written by out.commit()); says so on stderr.
  void stage(OutputFiles& out) const;

 private:
  std::optional<std::string> path_;
  const hw::CostModel& inner_;
  hw::RecordingCostModel recorder_;
};

}  // namespace infraplan::cli
