#include "simulator/training_goodput.hpp"

#include <algorithm>
#include <cmath>

#include "common/checked_number.hpp"
#include "common/error.hpp"
#include "model/model_math.hpp"
#include "simulator/serving_random.hpp"
#include "strategies/memory_ledger.hpp"

namespace infraplan::sim::train {

double daly_interval_s(double delta, double mtbf) {
  if (delta <= 0) return 0;
  if (delta >= 2 * mtbf) return mtbf;
  const double x = delta / (2 * mtbf);
  return std::sqrt(2 * delta * mtbf) * (1 + std::sqrt(x) / 3 + x / 9) - delta;
}

namespace {

// Expected wall time of one segment of `w` seconds of work followed by a checkpoint of `delta`.
double segment_s(double w, double delta, double restart, double mtbf) {
  return mtbf * std::exp(restart / mtbf) * std::expm1((w + delta) / mtbf);
}

}  // namespace

double expected_wall_time_s(double work, double interval, double delta, double restart, double mtbf) {
  if (work <= 0) return 0;
  if (interval <= 0) interval = work;
  const double full = std::floor(work / interval);
  const double rest = work - full * interval;
  double t = full * segment_s(interval, delta, restart, mtbf);
  if (rest > 1e-9 * interval) t += segment_s(rest, delta, restart, mtbf);
  return t;
}

double resolve_train_tokens(const model::ModelSpec& m, const strat::TrainingConfig& t, std::string* source) {
  if (t.train_tokens > 0) {
    if (source) *source = "training.train_tokens";
    return t.train_tokens;
  }
  if (source) *source = "20 tokens per parameter (Chinchilla-optimal; set training.train_tokens)";
  return 20 * model::count_params(m).total;
}

void checkpoint_bytes(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                      double* total, double* per_gpu) {
  const auto sb = strat::state_bytes_per_param(t.precision, t.optimizer);
  if (total) *total = model::count_params(m).total * (sb.params + sb.optimizer);
  if (per_gpu) {
    double most = 0;
    for (int s = 0; s < t.pp; ++s) {
      const auto L = strat::training_memory(m, c, t, s);
      most = std::max(most, L.line("parameters") + L.line("optimizer_states"));
    }
    *per_gpu = most;
  }
}

namespace {

// One run of the process the closed form describes.
double simulate_run(double work, double interval, double delta, double restart, double mtbf, serve::Rng& rng,
                    double* failures) {
  double elapsed = 0, done = 0;
  while (done < work - 1e-9 * interval) {
    const double w = std::min(interval, work - done);
    const double need = w + delta;
    for (;;) {
      const double x = rng.exponential(mtbf);
      if (x >= need) {
        elapsed += need;
        break;
      }
      elapsed += x, *failures += 1;
      for (;;) {  // restart until one completes without a failure
        const double y = rng.exponential(mtbf);
        if (y >= restart) {
          elapsed += restart;
          break;
        }
        elapsed += y, *failures += 1;
      }
    }
    done += w;
  }
  return elapsed;
}

}  // namespace

Goodput training_goodput(const hw::Cluster& c, const GoodputRequest& r) {
  if (r.iteration_time_s <= 0 || r.tokens_per_iteration <= 0)
    throw Error("training goodput: the iteration time and tokens per iteration must be > 0");
  if (r.train_tokens <= 0) throw Error("training.train_tokens must be > 0");
  if (r.monte_carlo_runs < 2) throw Error("training goodput: at least 2 Monte Carlo runs");
  Goodput g;
  const double rate = hw::job_failures_per_hour(c.reliability, c.total_gpus(), c.nodes);
  g.job_mtbf_s = 3600 / rate;
  g.checkpoint_bytes = r.checkpoint_bytes, g.checkpoint_bytes_per_gpu = r.checkpoint_bytes_per_gpu;
  g.checkpoint_write_s = r.checkpoint_bytes / (c.storage.checkpoint_write_GBps * 1e9);
  g.restart_s = c.reliability.restart_s + r.checkpoint_bytes / (c.storage.checkpoint_read_GBps * 1e9);
  g.young_interval_s = std::sqrt(2 * g.checkpoint_write_s * g.job_mtbf_s);
  g.checkpoint_interval_s = daly_interval_s(g.checkpoint_write_s, g.job_mtbf_s);
  g.train_tokens = r.train_tokens, g.train_tokens_source = r.train_tokens_source;
  g.compute_s = r.train_tokens / r.tokens_per_iteration * r.iteration_time_s;
  // Checkpoints happen between iterations: the run uses the optimum rounded to whole iterations
  // (at least one).
  g.checkpoint_interval_iterations = std::max(1.0, std::round(g.checkpoint_interval_s / r.iteration_time_s));
  const double tau = g.checkpoint_interval_iterations * r.iteration_time_s;
  g.expected_wall_s = expected_wall_time_s(g.compute_s, tau, g.checkpoint_write_s, g.restart_s, g.job_mtbf_s);
  g.useful_fraction = g.compute_s / g.expected_wall_s;
  g.failures_expected = g.expected_wall_s / g.job_mtbf_s;

  auto& mc = g.monte_carlo;
  // At most ~4 million simulated draws in all (fewer runs for very long runs of short intervals;
  // the confidence interval says how sure the mean is). One simulated run draws a segment per checkpoint interval and, per failure, the restarts
  // until one completes (e^(restart / MTBF) of them on average). A run that would draw more than
  // 4 million is refused: either the job fails far more often than it can restart or complete an
  // interval (it would never finish), or the run has too many intervals.
  const double segments = std::ceil(g.compute_s / tau);
  const double restart_tries = std::exp(std::min(50.0, g.restart_s / g.job_mtbf_s));
  const double failure_draws = g.failures_expected * (1 + restart_tries);
  if (!(segments + failure_draws <= 4e6)) {
    if (!(failure_draws <= segments))
      throw Error("training goodput: the job fails every " + number_text(g.job_mtbf_s) +
                  " s on average (cluster.reliability), too often beside a restart (" + number_text(g.restart_s) +
                  " s) or a checkpoint interval (" + number_text(tau + g.checkpoint_write_s) +
                  " s): the run would practically never finish; raise the MTBFs or lower reliability.restart_s");
    throw Error("training goodput: the run has " + number_text(segments) +
                " checkpoint intervals, beyond the 4 million its Monte Carlo simulates; lower "
                "training.train_tokens (or --tokens)");
  }
  mc.runs = int(std::min(double(r.monte_carlo_runs),
                         std::max(10.0, std::floor(4e6 / std::max(1.0, segments + failure_draws)))));
  mc.seed = r.seed;
  serve::Rng rng = serve::Rng::derive(r.seed, 0x600d0u);
  double sum = 0, sum2 = 0, failures = 0;
  for (int i = 0; i < mc.runs; ++i) {
    const double w = simulate_run(g.compute_s, tau, g.checkpoint_write_s, g.restart_s, g.job_mtbf_s, rng, &failures);
    sum += w, sum2 += w * w;
  }
  mc.mean_s = sum / mc.runs;
  mc.stddev_s = std::sqrt(std::max(0.0, (sum2 - sum * sum / mc.runs) / (mc.runs - 1)));
  const double half = 1.96 * mc.stddev_s / std::sqrt(double(mc.runs));
  mc.ci95_low_s = mc.mean_s - half, mc.ci95_high_s = mc.mean_s + half;
  mc.failures_mean = failures / mc.runs;
  return g;
}

Json Goodput::to_json(int gpus) const {
  const double day = 86400;
  return {{"checkpoint_interval_s", checkpoint_interval_s},
          {"checkpoint_interval_iterations", checkpoint_interval_iterations},
          {"young_interval_s", young_interval_s},
          {"useful_fraction", useful_fraction},
          {"days_to_train", compute_s / day},
          {"days_to_train_with_failures", expected_wall_s / day},
          {"gpu_hours", compute_s / 3600 * gpus},
          {"gpu_hours_with_failures", expected_wall_s / 3600 * gpus},
          {"job_mtbf_hours", job_mtbf_s / 3600},
          {"failures_expected", failures_expected},
          {"checkpoint_bytes", checkpoint_bytes},
          {"checkpoint_bytes_per_gpu", checkpoint_bytes_per_gpu},
          {"checkpoint_write_s", checkpoint_write_s},
          {"restart_s", restart_s},
          {"train_tokens", train_tokens},
          {"train_tokens_source", train_tokens_source},
          {"monte_carlo",
           {{"runs", monte_carlo.runs},
            {"seed", monte_carlo.seed},
            {"days_mean", monte_carlo.mean_s / day},
            {"days_ci95", {monte_carlo.ci95_low_s / day, monte_carlo.ci95_high_s / day}},
            {"days_stddev", monte_carlo.stddev_s / day},
            {"failures_mean", monte_carlo.failures_mean}}}};
}

TrainingCost training_cost(const hw::Cluster& c, const Goodput& g) {
  TrainingCost k;
  k.price_per_gpu_hour = c.price_per_gpu_hour, k.price_source = c.price_source;
  const double gpu_hours = g.expected_wall_s / 3600 * c.total_gpus();
  k.usd_total = gpu_hours * c.price_per_gpu_hour;
  k.usd_total_without_failures = g.compute_s / 3600 * c.total_gpus() * c.price_per_gpu_hour;
  k.usd_per_million_tokens = g.train_tokens > 0 ? k.usd_total / (g.train_tokens / 1e6) : 0;
  return k;
}

Json TrainingCost::to_json() const {
  return {{"usd_total", usd_total},
          {"usd_per_million_tokens", usd_per_million_tokens},
          {"usd_total_without_failures", usd_total_without_failures},
          {"price_per_gpu_hour", price_per_gpu_hour},
          {"price_source", price_source}};
}

RunOutlook training_outlook(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                            double iteration_time_s, std::uint64_t seed, double train_tokens_override) {
  GoodputRequest r;
  r.iteration_time_s = iteration_time_s;
  r.tokens_per_iteration = double(t.global_batch) * double(t.seq_len);
  if (train_tokens_override > 0) {
    r.train_tokens = train_tokens_override, r.train_tokens_source = "--tokens";
  } else {
    r.train_tokens = resolve_train_tokens(m, t, &r.train_tokens_source);
  }
  checkpoint_bytes(m, c, t, &r.checkpoint_bytes, &r.checkpoint_bytes_per_gpu);
  r.seed = seed;
  RunOutlook o;
  o.goodput = training_goodput(c, r);
  o.cost = training_cost(c, o.goodput);
  return o;
}

}  // namespace infraplan::sim::train
