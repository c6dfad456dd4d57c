#pragma once
// Training goodput: what failures, checkpoints and restarts cost a whole training run, and what
// the run costs in money.
//
// Model (Young 1974; Daly, "A higher order estimate of the optimum checkpoint interval for
// restart dumps", FGCS 22, 2006): failures of the job arrive as a Poisson process with the rate
// of hw::job_failures_per_hour (mean time between failures M). The run computes for τ seconds,
// then writes a checkpoint for δ seconds (blocking); a failure loses the work since the last
// completed checkpoint and costs a restart of R seconds (restart_s plus reading the checkpoint
// back), during which failures can strike again. Expected wall time of a segment of w seconds of
// work: M·e^{R/M}·(e^{(w+δ)/M} − 1); the run is T/τ such segments (the last one shorter).
//  - Young's interval: τ = √(2δM).
//  - Daly's interval (used): τ = √(2δM)·[1 + ⅓√(δ/2M) + (δ/2M)/9] − δ for δ < 2M, else M.
//  - Useful fraction: T / expected wall time.
//  - Monte Carlo: the same process drawn run by run (own xoshiro256** stream, seed in the
//    output), mean and 95% confidence interval of the wall time beside the closed form.
// Checkpoint size: every parameter once with its state, at the bytes per parameter of the
// precision recipe's "parameters" + "optimizer_states" ledger lines (strategies/memory_ledger.hpp);
// each GPU writes its shard of it as the layout shards them (checkpoint_bytes_per_gpu, the
// largest over pipeline stages), the storage system's aggregate bandwidth bounds the whole.
#include <cstdint>
#include <string>

#include "hardware/cluster.hpp"
#include "common/json_util.hpp"
#include "model/model_spec.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::sim::train {

/// What the run needs besides the cluster (its reliability, storage and price).
struct GoodputRequest {
  double iteration_time_s = 0;      ///< one iteration, failure-free
  double tokens_per_iteration = 0;  ///< global_batch × seq_len
  double train_tokens = 0;          ///< tokens of the whole run (> 0)
  std::string train_tokens_source;  ///< "training.train_tokens", "--tokens" or the default's name
  double checkpoint_bytes = 0;      ///< whole job, every parameter once with its state
  double checkpoint_bytes_per_gpu = 0;
  std::uint64_t seed = 1;           ///< Monte Carlo stream
  int monte_carlo_runs = 400;       ///< simulated runs (≥ 2)
};

struct MonteCarloRuns {
  int runs = 0;
  std::uint64_t seed = 0;
  double mean_s = 0, stddev_s = 0;        ///< wall time of the whole run over the simulated runs
  double ci95_low_s = 0, ci95_high_s = 0; ///< mean ± 1.96·stddev/√runs
  double failures_mean = 0;               ///< failures per run
};

struct Goodput {
  double job_mtbf_s = 0;               ///< mean time between interruptions of the whole job
  double checkpoint_bytes = 0, checkpoint_bytes_per_gpu = 0;
  double checkpoint_write_s = 0;       ///< δ
  double restart_s = 0;                ///< R: restart_s + checkpoint read
  double young_interval_s = 0;         ///< √(2δM)
  double checkpoint_interval_s = 0;    ///< Daly's optimum (the recommendation)
  double checkpoint_interval_iterations = 0;  ///< the same in iterations (≥ 1, rounded)
  double compute_s = 0;                ///< failure-free time to train
  double expected_wall_s = 0;          ///< with checkpoints, failures and restarts (closed form)
  double useful_fraction = 0;          ///< compute_s / expected_wall_s
  double failures_expected = 0;        ///< expected_wall_s / M
  double train_tokens = 0;
  std::string train_tokens_source;
  MonteCarloRuns monte_carlo;
  /// {"checkpoint_interval_s", "useful_fraction", "days_to_train", "days_to_train_with_failures",
  ///  "gpu_hours", "gpu_hours_with_failures", ..., "monte_carlo": {...}}.
  Json to_json(int gpus) const;
};

/// Daly's optimum interval for checkpoint time δ and MTBF M (seconds).
double daly_interval_s(double delta_s, double mtbf_s);
/// Expected wall time of `work_s` seconds of work checkpointed every `interval_s` (closed form).
double expected_wall_time_s(double work_s, double interval_s, double delta_s, double restart_s, double mtbf_s);

/// Tokens of the run: t.train_tokens when set, else 20 per parameter (Chinchilla-optimal,
/// Hoffmann et al. 2022); `source` names which.
double resolve_train_tokens(const model::ModelSpec& m, const strat::TrainingConfig& t, std::string* source);
/// Checkpoint bytes of the job and the most one GPU writes (see the header comment).
void checkpoint_bytes(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                      double* total, double* per_gpu);

Goodput training_goodput(const hw::Cluster& c, const GoodputRequest& r);

/// Money: the GPU-hours of the run at the cluster's price.
struct TrainingCost {
  double price_per_gpu_hour = 0;
  std::string price_source;
  double usd_total = 0;                   ///< with failures (expected wall time)
  double usd_total_without_failures = 0;  ///< failure-free compute time
  double usd_per_million_tokens = 0;      ///< usd_total per million training tokens
  Json to_json() const;
};
TrainingCost training_cost(const hw::Cluster& c, const Goodput& g);

/// Goodput and cost of a simulated or estimated iteration of (m, c, t): fills the request from
/// the config (tokens, checkpoint size) and runs both.
struct RunOutlook {
  Goodput goodput;
  TrainingCost cost;
};
RunOutlook training_outlook(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                            double iteration_time_s, std::uint64_t seed, double train_tokens_override = 0);

}  // namespace infraplan::sim::train
