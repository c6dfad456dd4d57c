#pragma once
// Collective operations, algorithms and protocols, and the nccl-tests definitions of algorithm
// and bus bandwidth. Sizes follow nccl-tests: `bytes` is the size nccl-tests prints for the op
// (all_reduce/broadcast/reduce/sendrecv: the buffer; all_gather: the gathered output, i.e.
// per-rank count x n; reduce_scatter: the full input, per-rank output x n; alltoall: one rank's
// whole send buffer, per-peer count x n).
#include <string>
#include <string_view>
#include <vector>

namespace infraplan::coll {

enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };

/// How a collective is carried out.
///  - Ring: NCCL's ring (multi-channel, rail-aligned across nodes); also the pipelined chain used
///    for Broadcast/Reduce.
///  - Tree: NCCL's double binary tree across nodes with a chain inside each node (AllReduce).
///  - NVLS: NVSwitch multicast/in-switch reduction (AllReduce inside one NVSwitch domain).
///  - Hierarchical: reduce-scatter inside each node, all-reduce across nodes (one ring per local
///    rank), all-gather inside each node (AllReduce).
///  - Direct: point-to-point flows between the pairs that exchange data (AllToAll, SendRecv).
///  - Fit: a measured latency/bandwidth fit from the profile's `comm.fits`.
enum class Algorithm { Ring, Tree, NVLS, Hierarchical, Direct, Fit };

/// NCCL's wire protocols: LL (8-byte stores with inline flags: lowest latency, ~half bandwidth),
/// LL128 (128-byte lines with 8 flag bytes), Simple (bulk copies with fences: full bandwidth,
/// highest per-step latency).
enum class Protocol { LL, LL128, Simple };

const char* op_name(CollectiveOp op);     ///< "all_reduce", "all_gather", ... (nccl-tests names)
const char* algorithm_name(Algorithm a);  ///< "ring", "tree", "nvls", "hierarchical", ...
const char* protocol_name(Protocol p);    ///< "LL", "LL128", "Simple"
const std::vector<CollectiveOp>& all_ops();
std::vector<std::string> op_names();
/// Parses an op name (also accepts "allreduce", "all-reduce", "a2a"); throws infraplan::Error
/// naming `field` and the valid choices.
CollectiveOp parse_op(std::string_view s, std::string_view field = "op");
Algorithm parse_algorithm(std::string_view s, std::string_view field = "algorithm");
Protocol parse_protocol(std::string_view s, std::string_view field = "protocol");

/// nccl-tests busbw factor: busbw = algbw x factor for a group of n ranks.
/// all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n; others 1.
double busbw_factor(CollectiveOp op, int n);
/// Algorithm bandwidth as nccl-tests: bytes / seconds, in 1e9 B/s.
inline double algbw_GBps(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
/// Bus bandwidth as nccl-tests, in 1e9 B/s.
inline double busbw_GBps(CollectiveOp op, int n, double bytes, double seconds) {
  return algbw_GBps(bytes, seconds) * busbw_factor(op, n);
}
/// Bytes each rank sends on the wire for the bandwidth-optimal algorithm (ring/direct):
/// all_reduce 2(n-1)/n S, all_gather/reduce_scatter/alltoall (n-1)/n S, broadcast/reduce/
/// sendrecv S (the busiest rank). 0 when n == 1.
double bytes_per_rank(CollectiveOp op, int n, double bytes);

}  // namespace infraplan::coll
