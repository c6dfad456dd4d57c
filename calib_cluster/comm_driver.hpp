#pragma once
// The multi-process communication calibration: `mpirun -np N infraplan-calibrate comm ...` or
// `srun ... infraplan-calibrate comm ...`, one process per GPU.
//
// Every rank: reads its launcher's variables and checks them against MPI (missing ranks stop
// the run), opens its GPU from its local rank, reports its facts; the facts are gathered and
// checked (one GPU model, one GPU per rank, the same ranks per node); each node's first rank
// probes the node (NICs, nvidia-smi topo -m); the transport sets up the world (NCCL: rank 0's
// unique id broadcast over MPI); then the phases of sweep_plan.hpp run with an agreement after
// every call size: when any rank fails, every rank stops and rank 0 prints one message naming
// the failed rank(s) with host and local rank. Rank 0 gathers the timings and writes the cluster
// profile (cluster_profile_build.hpp) at the very end, through a temporary file: a failed run
// leaves no profile, partial or whole.
#include <string>
#include <vector>

#include "calib_cluster/mpi_world.hpp"
#include "calib_cluster/sweep_plan.hpp"
#include "calib_cluster/sweep_transport.hpp"

namespace infraplan::ccal {

struct ClusterCommOptions {
  SweepOptions sweep;
  std::string out;                 ///< profile file to write (rank 0)
  double point_timeout_s = 300;    ///< a call size that takes longer on a rank fails that rank
  std::string command;             ///< the command line, for the profile
  std::string transport = "nccl";  ///< "nccl" or "host"
  bool single_process = false;     ///< --single-process: the one-machine path even under a launcher
};

/// Parses the `comm` arguments shared by both builds of infraplan-calibrate:
///   --out FILE [--quick] [--transport nccl|host] [--ops a,b,...] [--min-bytes B] [--max-bytes B]
///   [--size-factor F] [--max-nodes N] [--point-timeout S] [--single-process]
/// (the leading "comm" already removed). Throws infraplan::Error naming the flag and the valid
/// values.
ClusterCommOptions parse_comm_args(const std::vector<std::string>& args);

/// The `comm` usage lines.
std::string comm_usage();

/// Runs the calibration on every rank; returns the process exit code (0 written, 1 failed: the
/// message is printed by rank 0 on stderr).
int run_cluster_comm(MpiWorld& world, SweepTransport& transport, const ClusterCommOptions& opt);

}  // namespace infraplan::ccal
