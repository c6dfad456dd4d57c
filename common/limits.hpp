#pragma once
// The limits of every input: the largest (and smallest) values infraplan accepts, in one place so
// that the parsers, the command-line flags and the documentation (docs/reliability.md,
// docs/scenario.md) agree. Each limit is far beyond any real deployment and small enough that
// every command answers within seconds and a few GB of memory at the limit; a value beyond it is
// refused with a message naming the key, the value and the allowed range.
#include <cstdint>

namespace infraplan::limits {

// ---- cluster ----
/// GPUs in one cluster (nodes × gpus_per_node); 131072 = 16384 DGX nodes.
inline constexpr std::int64_t kMaxGpus = 131072;
inline constexpr std::int64_t kMaxNodes = kMaxGpus;
inline constexpr std::int64_t kMaxGpusPerNode = 1024;
inline constexpr std::int64_t kMaxNicsPerNode = 64;
inline constexpr std::int64_t kMaxLeafPorts = 65536;
/// Bandwidths: GB/s per GPU inside a node, Gb/s per NIC.
inline constexpr double kMaxGBps = 1e6;
inline constexpr double kMaxGbps = 1e7;
/// Latencies of one hop or traversal, microseconds.
inline constexpr double kMaxLatencyUs = 1e6;
inline constexpr double kMaxOversubscription = 1024;
/// GPUs of a cluster the SimGrid network simulation takes (its route table is GPUs²).
inline constexpr std::int64_t kMaxSimGridGpus = 4096;

// ---- model ----
inline constexpr std::int64_t kMaxHidden = 1 << 20;
inline constexpr std::int64_t kMaxLayers = 4096;
inline constexpr std::int64_t kMaxHeads = 1 << 16;
inline constexpr std::int64_t kMaxHeadDim = 1 << 16;
inline constexpr std::int64_t kMaxFfnHidden = 1 << 24;
inline constexpr std::int64_t kMaxVocab = 1 << 24;
inline constexpr std::int64_t kMaxExperts = 1 << 16;
inline constexpr std::int64_t kMaxLoraRank = 1 << 16;
/// Tokens of one sequence: a model's max_seq, a training seq_len, a prompt or an output.
inline constexpr std::int64_t kMaxSeqTokens = 1 << 24;

// ---- training ----
/// Sequences per iteration (global batch) and per micro-batch.
inline constexpr std::int64_t kMaxGlobalBatch = 1 << 24;
inline constexpr std::int64_t kMaxMicroBatch = 1 << 20;
inline constexpr double kMaxMoeImbalance = 1024;
/// Layer passes one event simulation of a training iteration may run (lanes × micro-batches ×
/// layers per stage × 2); beyond, the closed-form estimate answers (--estimate).
inline constexpr std::int64_t kMaxWorkGraphLayerSteps = std::int64_t(1) << 20;

// ---- serving ----
inline constexpr std::int64_t kMaxBlockSize = 4096;
inline constexpr std::int64_t kMaxNumSeqs = 1 << 20;
inline constexpr std::int64_t kMaxBatchedTokens = 1 << 30;
inline constexpr std::int64_t kMaxQuantGroup = 1 << 16;
inline constexpr double kMaxHostOverheadUs = 1e6;
inline constexpr double kMaxSwapSpaceGiB = 1 << 20;
inline constexpr std::int64_t kMaxSpecTokens = 64;
/// Paged-KV blocks one serving simulation tracks over all its instances (~60 bytes each).
inline constexpr std::int64_t kMaxSimulatedKvBlocks = std::int64_t(1) << 25;
/// Engine instances (replicas, or prefill + decode instances) one serving simulation runs.
inline constexpr std::int64_t kMaxInstances = 4096;

// ---- workload ----
/// Simulated time a serving simulation may reach, seconds (~317 years); a double resolves 2 µs
/// there.
inline constexpr double kMaxSimulatedSeconds = 1e10;
/// Requests of one serving workload (all classes together, or a trace's rows).
inline constexpr std::int64_t kMaxRequests = 1000000;
/// Latest arrival (start_s, trace arrival_time_s, think times added up), seconds: ~31.7 years.
/// A double resolves 0.12 µs at this magnitude, far below any step time.
inline constexpr double kMaxArrivalSeconds = 1e9;
inline constexpr double kMaxRatePerSecond = 1e9;
/// Largest table of a Zipf distribution (lengths' max, prefix groups).
inline constexpr std::int64_t kMaxZipfRanks = 1 << 20;
inline constexpr std::int64_t kMaxPrefixGroups = 1000000;
inline constexpr std::int64_t kMaxSessionTurns = 1000000;
inline constexpr std::int64_t kMaxPriority = 1000000;
inline constexpr std::int64_t kMaxPriorityLevels = 1000;
inline constexpr std::int64_t kMaxBurst = 1000000;
/// Latency targets, milliseconds.
inline constexpr double kMaxSloMs = 1e9;

// ---- planning ----
inline constexpr std::int64_t kMaxTop = 1000;

}  // namespace infraplan::limits
