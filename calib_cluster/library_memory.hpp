#pragma once
// The device memory the communication library (NCCL) holds on each rank, read at the end of every
// phase's sweep: the world communicator and the phase's group communicator with the channels,
// protocol buffers and connections its calls opened (the sweep's own buffers excluded). The
// largest figure over the phases with groups of 2+ ranks becomes the measured cluster's
// `nccl_buffer_bytes`, the ledger line `nccl_buffers` of scenarios that name the profile.
#include <vector>

#include "calib_cluster/sweep_plan.hpp"
#include "common/json_util.hpp"

namespace infraplan::ccal {

/// What one rank's library held at the end of one phase, bytes.
struct LibraryMemoryRecord {
  int phase = 0;  ///< index into the phases
  int rank = 0;   ///< world rank
  double bytes = 0;
};

Json memory_records_to_json(const std::vector<LibraryMemoryRecord>& r);
/// Throws infraplan::Error on a malformed record.
std::vector<LibraryMemoryRecord> memory_records_from_json(const Json& j);

/// Per phase in phase order, as comm.library_memory: {phase, ranks, ranks_measured, bytes_min,
/// bytes_median, bytes_max}; phases nobody measured are left out.
Json library_memory_json(const std::vector<LibraryMemoryRecord>& r, const std::vector<SweepPhase>& phases);

/// The bytes one rank's NCCL holds in a job on this cluster: the largest per-rank figure over
/// the phases whose groups have 2+ ranks (one rank alone opens no connection); 0 when none.
double nccl_buffer_bytes(const std::vector<LibraryMemoryRecord>& r, const std::vector<SweepPhase>& phases);

}  // namespace infraplan::ccal
