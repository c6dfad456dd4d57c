#pragma once
// Faults on purpose, for the tests of the launcher path: INFRAPLAN_CALIB_FAULT names one rank and
// what goes wrong there, so that the failure handling (a clear message naming the rank, no
// partial profile) can be checked without a broken cluster:
//   rank=R,device=NAME        rank R reports GPU model NAME (mismatched models across ranks)
//   rank=R,fail=OP[@BYTES]    rank R throws at the first call of OP (of BYTES or more)
//   rank=R,exit=OP[@BYTES]    rank R's process is killed there (SIGKILL: a node lost mid-sweep)
// Unset: no fault. A malformed value is an error naming the variable.
#include <cstddef>
#include <optional>
#include <string>

#include "calib_cluster/launch_env.hpp"
#include "collectives/collective.hpp"

namespace infraplan::ccal {

struct Fault {
  int rank = -1;
  std::string device;  ///< device name to report instead of the real one ("" none)
  std::optional<coll::CollectiveOp> op;
  std::size_t bytes = 0;  ///< from this size on
  bool exit = false;      ///< kill the process (SIGKILL) instead of failing the call
  /// True when this fault fires for `rank` calling `op` of `bytes`.
  bool fires(int r, coll::CollectiveOp o, std::size_t b) const {
    return r == rank && op && *op == o && b >= bytes;
  }
};

/// Reads INFRAPLAN_CALIB_FAULT through `env`; nullopt when unset.
std::optional<Fault> read_fault(const EnvLookup& env = process_env());

}  // namespace infraplan::ccal
