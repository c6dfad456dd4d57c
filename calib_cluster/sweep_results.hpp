#pragma once
// From the per-rank timings of a sweep to the rows of a profile: each group's time is the mean of
// its ranks' times (nccl-tests), concurrent groups of a phase give a median and a spread, and
// each (phase, op) gets a latency/bandwidth fit.
#include <cstddef>
#include <vector>

#include "calib_cluster/sweep_plan.hpp"
#include "common/json_util.hpp"

namespace infraplan::ccal {

/// One rank's timing of one call size.
struct PointRecord {
  int phase = 0;  ///< index into the phases
  int group = 0;  ///< index into the phase's groups
  int rank = 0;   ///< world rank that timed it
  coll::CollectiveOp op = coll::CollectiveOp::AllReduce;
  std::size_t bytes = 0;  ///< nccl-tests size
  double seconds = 0;     ///< per call on that rank
};

Json records_to_json(const std::vector<PointRecord>& r);
std::vector<PointRecord> records_from_json(const Json& j);

/// One measured size of one op on one phase.
struct SweepRow {
  int phase = 0;
  coll::CollectiveOp op = coll::CollectiveOp::AllReduce;
  std::size_t bytes = 0;
  double seconds = 0;      ///< median over the phase's groups of the group's mean over its ranks
  double seconds_min = 0;  ///< fastest group
  double seconds_max = 0;  ///< slowest group
  int groups = 0;          ///< groups measured
};

/// Aggregates the records; throws infraplan::Error when a group misses a rank's record.
std::vector<SweepRow> aggregate_records(const std::vector<PointRecord>& records,
                                        const std::vector<SweepPhase>& phases);

/// Rows as the profile's comm.rows: {op, phase, scope, placement, ranks, nodes, bytes, time_us,
/// time_us_min, time_us_max, groups, algbw_GBps, busbw_GBps}.
Json rows_json(const std::vector<SweepRow>& rows, const std::vector<SweepPhase>& phases);

/// Per (phase, op): time = latency_us + bytes x busbw factor / (busbw_GBps x 1e9), latency the
/// median of the calls <= 4 KiB, busbw from the largest call; `max_rel_error` of that line over
/// every size. As comm.fits: {op, phase, scope, placement, ranks, nodes, latency_us, bw_GBps,
/// busbw_GBps, points, max_rel_error}.
Json group_fits_json(const std::vector<SweepRow>& rows, const std::vector<SweepPhase>& phases);

}  // namespace infraplan::ccal
