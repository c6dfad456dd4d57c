#pragma once
// NCCL collective sweeps on the local GPUs (nccl-tests definitions of algbw and busbw).
#include <nlohmann/json.hpp>

namespace infraplan::calib {

struct CommOptions {
  bool quick = false;                  ///< fewer sizes (8 B … 1 GiB, ×8 steps)
  bool try_multi_rank_one_gpu = true;  ///< also try 2 ranks on GPU 0 and report what NCCL says
};

/// Runs the sweeps and returns the profile's "comm" section:
/// {"nccl_version", "gpus", "rows": [{op, ranks, bytes, time_us, algbw_GBps, busbw_GBps}],
///  "fits": [{op, ranks, scope: "intra", latency_us, bw_GBps, busbw_GBps}], "notes": [...]}.
/// Sets NCCL_NVLS_ENABLE=0 before any NCCL call. Prints nccl-tests-style tables on stdout.
nlohmann::ordered_json run_comm_sweeps(const CommOptions& opt);

}  // namespace infraplan::calib
