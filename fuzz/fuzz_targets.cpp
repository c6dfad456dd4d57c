// The fuzz targets: each takes one input and accepts only success or an infraplan::Error; any
// other exception, a crash or a sanitizer report is a finding. Built into the libFuzzer binaries
// (fuzz_entry.cpp, -DINFRAPLAN_FUZZ=ON) and into fuzz_regression_tests, which runs every input
// under fuzz/regressions/ (past findings) and fuzz/seeds/ in every build.
#include "fuzz/fuzz_targets.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/json_text.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/power_limiter.hpp"
#include "hardware/cluster.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/profile.hpp"
#include "model/model_math.hpp"
#include "model/model_spec.hpp"
#include "simulator/serving_sim.hpp"
#include "simulator/workload.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::fuzz {

// Fuzzes the scenario loader: JSON text → Scenario (model, cluster, training and serving
// configs, resolved against each other) → the serving engine options and the workload.
int scenario(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Json j = parse_json_text(text, "fuzz.json");
    const strat::Scenario sc = strat::scenario_from_json(j, "fuzz.json", "");
    if (sc.serving) {
      const auto setup = sim::serve::serving_setup_from_scenario(sc);
      if (setup.workload.trace_path.empty()) {
        // Generating the requests exercises the distributions and the arrival horizon; keep
        // each input cheap (the limit on requests is tested elsewhere).
        std::int64_t total = 0;
        for (const auto& c : setup.workload.classes) total += c.requests;
        if (total <= 2000) sim::serve::make_requests(setup.workload);
      }
    }
  } catch (const Error&) {
  }
  return 0;
}

// Fuzzes the Hugging Face config.json reader and the model arithmetic on what it accepts.
int hf_config(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Json j = parse_json_text(text, "config.json");
    const model::ModelSpec m = model::model_from_json(j, "model");
    const auto b = model::count_params(m);
    volatile double sink = b.total + model::forward_flops_per_token(m, m.max_seq) +
                           model::kv_bytes_per_token(m, Dtype::BF16) +
                           model::activation_bytes_per_layer(m, m.max_seq, 1, {}, -1);
    (void)sink;
    (void)m.to_json().dump();
  } catch (const Error&) {
  }
  return 0;
}

// Fuzzes the hardware profile reader and the calibrated cost model built from what it accepts.
int profile(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Json j = parse_json_text(text, "profile.json");
    hw::Profile p = hw::parse_profile(j, "profile.json");
    const hw::GpuSpec& gpu = hw::find_gpu(p.gpu);
    hw::CalibratedCostModel cm(std::move(p), gpu);
    hw::GemmShape g;
    g.m = 4096, g.n = 4096, g.k = 4096;
    volatile double s = cm.gemm(g).seconds + cm.memory_bound(1 << 20).seconds;
    (void)s;
    hw::AttentionPrefillLaunch l{{{150, 1024}, {4096, 0}}, 32, 8, 128, Dtype::BF16};
    if (auto e = cm.attention_prefill_launch(l)) {
      volatile double t = e->seconds;
      (void)t;
    }
    hw::AttentionDecodeShape shared{32, 32 * 1100, 32, 8, 128, Dtype::BF16};
    shared.unique_context_tokens = 4096;
    volatile double dt = cm.attention_decode(shared).seconds;
    (void)dt;
    if (const hw::PowerModel* pm = cm.power_model()) {
      hw::PowerDemand d;
      d.tflops16 = 500, d.TBps = 1, d.ew_TBps = 1;
      volatile double f = pm->sustained_clock_mhz(d) + pm->power_w(d, 1000);
      (void)f;
      if (cm.power_limiter_tau_s() > 0) {  // the limiter fitted on the section's mixtures
        hw::PowerLimiter lim(pm->limit_w(), cm.idle_power_w() > 0 ? cm.idle_power_w() : 100, cm.power_limiter_tau_s());
        lim.idle(0.01);
        volatile double r = lim.run({pm->power_w(d, pm->max_clock_mhz()), 0.02, 0.025}).seconds;
        (void)r;
      }
    }
  } catch (const Error&) {
  }
  return 0;
}

// Fuzzes the request-trace readers (CSV with a header row, and JSONL); the first byte picks one.
int trace(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool jsonl = data[0] & 1;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    sim::serve::parse_trace(text, jsonl ? "trace.jsonl" : "trace.csv", jsonl);
  } catch (const Error&) {
  }
  return 0;
}

// Fuzzes the command-line parser and the commands that only read their flags: the input is
// the argument list, NUL-separated; the first word picks the command. Output goes to /dev/null.
int cli_args(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> argv;
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      argv.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(char(data[i]));
    }
  }
  argv.push_back(cur);
  if (argv.size() > 64) return 0;
  const std::string cmd = argv.front();
  argv.erase(argv.begin());
  try {
    if (cmd == "cost") {
      // The datasheet roofline: no profile is parsed per input, so the fuzzer stays fast.
      argv.push_back("--roofline");
      cli::cmd_cost(argv);
    } else if (cmd == "models") {
      cli::cmd_models(argv);
    } else if (cmd == "cluster") {
      if (!argv.empty()) hw::resolve_cluster_arg(argv.front());
    } else {
      const std::vector<cli::OptionSpec> spec = {
          {"n", true, ""}, {"x", true, ""}, {"bytes", true, ""}, {"flag", false, ""}};
      cli::Args a(argv, spec);
      a.get_int("n", 1, 1 << 20);
      a.get_number("x", 0, 1e9);
      if (auto b = a.get("bytes")) parse_bytes_string(*b, "--bytes");
      a.expect_positional(0, 2, "fuzz");
    }
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace infraplan::fuzz
