#pragma once
// What interrupts a training job and how fast its state goes to and from storage: failure rates
// per GPU, per node and per node's share of the network, the time to restart, and the checkpoint
// bandwidth of the storage system (cluster keys "reliability" and "storage").
//
// Defaults come from the Llama 3 paper (Llama Team, "The Llama 3 Herd of Models", 2024, §3.3.4
// and Table 5): 419 unexpected interruptions of the 405B pre-training in a 54-day snapshot on
// 16,384 H100 GPUs in 2,048 nodes (466 with the 47 planned ones, which are left out here). By the
// paper's root-cause table:
//   GPU      268: faulty GPU 148, HBM3 72, SRAM 19, system processor 17, silent data corruption 6,
//                 thermal interface and sensor 6
//   network   35: network switch and cable
//   node     116: host maintenance 32, software bugs 54, other dependencies 2, NCCL watchdog
//                 timeouts 7, NIC 7, SSD 3, power supply 3, chassis 2, IO expansion board 2,
//                 CPU 2, system memory 2
// so one GPU fails every 16,384 × 1,296 h / 268 = 79,229 h, one node (host and software) every
// 2,048 × 1,296 / 116 = 22,881 h and one node's share of the fabric every 2,048 × 1,296 / 35 =
// 75,835 h; together one interruption every 3.09 h on that cluster, as reported. A job stops at
// the first failure of any of its parts (a series system, as Kokolis et al., "Revisiting
// Reliability in Large-Scale Machine Learning Research Clusters", HPCA 2025, model it), so its
// failure rate is the sum of its parts' rates. The storage defaults are the paper's Tectonic
// figures (§3.3.1: 2 TB/s sustained, 7 TB/s peak); small clusters should set their own.
#include <string>

#include "common/json_util.hpp"

namespace infraplan::hw {

struct Reliability {
  double gpu_mtbf_hours = 79229;      ///< mean hours between failures of one GPU (HBM, SRAM, ... included)
  double node_mtbf_hours = 22881;     ///< of one node's host, software and maintenance events
  double network_mtbf_hours = 75835;  ///< of one node's share of the fabric (switches, cables)
  /// Seconds from an interruption to training again: detection, rescheduling onto healthy nodes,
  /// process start and communicator set-up (the checkpoint read comes on top). An assumption of
  /// ten minutes; set it from your own restart logs.
  double restart_s = 600;
  Json to_json() const;
};

struct Storage {
  double checkpoint_write_GBps = 2000;  ///< aggregate write bandwidth the job gets, 1e9 B/s
  double checkpoint_read_GBps = 7000;   ///< aggregate read bandwidth on restart, 1e9 B/s
  Json to_json() const;
};

/// Failures per hour of a job on `gpus` GPUs in `nodes` nodes (sum of the parts' rates).
double job_failures_per_hour(const Reliability& r, int gpus, int nodes);

/// Parses "reliability" / "storage" over `base` (every key optional, all > 0; restart_s >= 0).
Reliability reliability_from_json(const Json& j, const std::string& path, Reliability base = {});
Storage storage_from_json(const Json& j, const std::string& path, Storage base = {});

/// Indicative on-demand price of one GPU-hour, USD, for the catalog's GPUs (0 when unknown);
/// `source` says where it comes from. Prices vary by provider and contract: set
/// cluster.price_per_gpu_hour or --price-per-gpu-hour for real plans.
double default_price_per_gpu_hour(const std::string& gpu_name, std::string* source = nullptr);

}  // namespace infraplan::hw
