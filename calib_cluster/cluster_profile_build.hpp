#pragma once
// The cluster profile ("schema": "infraplan-cluster-profile/1") a communication calibration
// writes, and the merge of it with single-GPU profiles into one file that scenarios name under
// `cluster` (docs/calibration.md, "On your cluster"):
//   {"schema", "name", "date", "command",
//    "cluster": {gpu, nodes, gpus_per_node, intra, inter, nccl_buffer_bytes}
//                                                            (hw::resolve_cluster reads it),
//    "topology": {"derivation", "layout", "ranks": [...], "nodes": [...]},
//    "comm": {transport, launcher, library, sizes, phases, rows, fits, library_memory, model,
//             report, notes},
//    "gpu_profiles": [profile, ...]}                         (one per GPU model)
// `comm.model` holds the refitted collective model (collectives/comm_refit.hpp), `comm.fits` the
// per-(phase, op) latency/bandwidth lines, `comm.report` measured vs modelled per op and size.
#include <string>
#include <utility>
#include <vector>

#include "calib_cluster/library_memory.hpp"
#include "calib_cluster/rank_facts.hpp"
#include "calib_cluster/sweep_plan.hpp"
#include "calib_cluster/sweep_results.hpp"
#include "hardware/cluster.hpp"
#include "common/json_util.hpp"

namespace infraplan::ccal {

/// Everything one communication calibration gathered on rank 0.
struct CommRun {
  ClusterLayout layout;
  std::vector<RankFacts> ranks;
  std::vector<NodeFacts> nodes;  ///< one per node, in layout order
  std::vector<SweepPhase> phases;
  std::vector<std::size_t> sizes;
  std::vector<SweepRow> rows;
  std::vector<LibraryMemoryRecord> library_memory;  ///< every rank's, every phase it took part in
  std::string transport, library, launcher, command, date;
  double run_seconds = 0;
};

/// Builds the profile of a run. With a GPU transport the cluster is described, the model refitted
/// and the report written; with the host transport (no GPU) only rows, fits and topology.
Json build_cluster_profile(const CommRun& run);

/// Measured vs modelled (default constants and refitted) per row, and per (op, scope, size
/// class) the median |error| of each: {"rows": [...], "summary": [...]}.
Json comm_report(const hw::Cluster& cluster, const Json& comm_rows, const Json& refit_model);

/// Merges profiles into one cluster profile. Each input is (file name, JSON): a single-GPU
/// profile (has "tables"), a cluster profile (its GPU profiles and comm section), or a
/// single-process comm file (a "comm" section from `infraplan-calibrate comm` on one machine).
/// Throws infraplan::Error naming the file when two inputs give a profile of the same GPU model,
/// when two give a comm section, or when the comm run's GPU model has no GPU profile among them
/// (while some were given). Nothing is written by this function.
Json merge_cluster_profiles(const std::vector<std::pair<std::string, Json>>& inputs,
                            const std::string& command);

}  // namespace infraplan::ccal
