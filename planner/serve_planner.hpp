#pragma once
// ServingPlanner: searches serving deployments of a model on one GPU type — aggregated replicas
// vs prefill/decode-disaggregated pools, TP per instance, weight/KV quantization, batch and
// token budgets, speculative decoding where a draft is given — and judges every candidate by
// simulated goodput under the SLOs (the serving mini-engine, not a closed formula).
//
// Method: for each instance configuration find, by simulation, the highest Poisson request rate
// one instance sustains with at least `attainment` of requests meeting both SLOs (its capacity);
// for disaggregation measure the prefill instance (TTFT SLO, decode pool unconstrained) and the
// decode instance (TPOT SLO, prefill pool unconstrained) separately, which gives the
// prefill:decode ratio. Size each candidate for the target (rate → GPUs, or GPUs → rate), then
// verify the whole deployment in one more simulation at that load.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware/cost_model.hpp"
#include "model/model_spec.hpp"
#include "simulator/serving_sim.hpp"
#include "strategies/serving_config.hpp"

namespace infraplan::plan {

struct ServeSearch {
  model::ModelSpec model;
  hw::GpuSpec gpu;
  int gpus_per_node = 8;
  double target_rate = 0;             ///< requests/s to meet (or 0 with `gpus` set)
  int gpus = 0;                       ///< GPUs to use (or 0 with `target_rate` set)
  sim::serve::WorkloadSpec workload;  ///< one class; arrival rate is set by the search
  double attainment = 0.9;            ///< share of requests that must meet both SLOs
  std::vector<strat::WeightQuant> quants = {strat::WeightQuant::BF16};
  std::vector<int> tps;                   ///< TP sizes to try (empty: powers of two up to a node)
  bool disaggregation = true;             ///< also search prefill/decode pools
  std::optional<model::ModelSpec> draft;  ///< speculative decoding with this draft, if given
  double draft_acceptance = 0.7;
  int probe_requests = 300;  ///< requests per capacity probe
  double price_per_gpu_hour = 0;  ///< USD per GPU-hour for the deployments' cost (0: no cost)
  std::string price_source;       ///< where the price comes from (default, flag)
  std::function<void(const std::string&)> progress;
};

/// One simulated load point of a candidate (for the Pareto front).
struct LoadPoint {
  double rate_rps = 0;
  double attainment = 0;
  double output_tokens_per_s_per_gpu = 0;
  double tokens_per_s_per_user = 0;  ///< 1000 / mean TPOT (ms)
  double ttft_p90_ms = 0, tpot_p90_ms = 0;
};

struct ServeCandidate {
  std::string mode;  ///< "aggregated" or "disaggregated"
  strat::WeightQuant weights = strat::WeightQuant::BF16;
  Dtype kv_dtype = Dtype::BF16;
  bool speculative = false;
  int tp = 0;  ///< aggregated: TP per replica
  int prefill_tp = 0, decode_tp = 0;
  std::int64_t max_batched_tokens = 8192;
  double capacity_rps = 0;              ///< aggregated: per replica; disaggregated: per (prefill) instance
  double decode_capacity_rps = 0;       ///< disaggregated: per decode instance
  std::int64_t kv_capacity_tokens = 0;  ///< per replica (decode instance)
  // Sized deployment.
  int replicas = 0, prefill_instances = 0, decode_instances = 0;
  int gpus = 0, prefill_gpus = 0, decode_gpus = 0;
  double goodput_rps = 0;  ///< verified by simulation of the whole deployment
  double goodput_rps_per_gpu = 0;
  double attainment = 0;
  double ttft_p90_ms = 0, tpot_p90_ms = 0, tokens_per_s_per_user = 0;
  bool meets_target = false;
  double output_tokens_per_s = 0;  ///< output tokens the whole deployment produces at the sized load
  /// Money at ServeSearch::price_per_gpu_hour: the deployment per hour, per million output tokens
  /// served, per request that meets the SLOs (JSON "cost").
  double usd_per_hour = 0, usd_per_million_output_tokens = 0, usd_per_request = 0;
  std::vector<LoadPoint> points;
  std::string label() const;
  Json to_json() const;
};

struct ServePlan {
  std::vector<ServeCandidate> candidates;  ///< best first: meets the target, then fewest GPUs / most goodput
  std::vector<LoadPoint> pareto;           ///< throughput/GPU vs tokens/s/user, non-dominated
  std::vector<std::string> pareto_labels;  ///< candidate label of each Pareto point
  std::vector<std::string> explanation;
  /// Configurations the search dropped, by reason ("tp=1 bf16: weights + KV of 4 requests do not
  /// fit", "aggregated tp=2 ...: meets the SLOs at no probed load", ...): reason → count.
  std::map<std::string, std::int64_t> rejected;
  std::int64_t simulations = 0;
  double search_seconds = 0;
  Json to_json() const;
};

ServePlan plan_serving(const ServeSearch& s, const hw::CostModel& cm);

/// A cluster of `gpus` GPUs of `gpu` (its DGX-style preset when one exists).
hw::Cluster cluster_for(const hw::GpuSpec& gpu, int gpus, int gpus_per_node = 8);

}  // namespace infraplan::plan
