#include "engine/bench_serve.hpp"

#include <cstdio>
#include <memory>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/find_tool.hpp"
#include "cli/results.hpp"
#include "cli/serve_report.hpp"
#include "common/error.hpp"
#include "engine/bench_support.hpp"
#include "engine/cuda_backend.hpp"
#include "engine/engine_kernels.hpp"
#include "engine/gpu_info.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "simulator/chrome_trace.hpp"
#include "simulator/cost_setup.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::engine {

namespace {

const std::vector<cli::OptionSpec> kSpec = {
    {"scenario", true, "scenario file with 'serving' and 'workload' objects (docs/serving.md)"},
    {"json", false,
     "print the machine-readable report (as simulate serve --json, plus 'device' and 'engine')"},
    {"json-out", true, "write that report to this file"},
    {"trace", true, "write a Chrome/Perfetto trace of the engine steps to this file"},
    {"requests", true, "write one CSV row per request to this file"},
    {"steps", true,
     "write one CSV row per engine step to this file: sequences, tokens, host and GPU microseconds"},
    {"seed", true, "override the workload seed"},
    {"weights", true, "Hugging Face model folder (config.json + *.safetensors) instead of random weights"},
    {"weights-seed", true, "seed of the random weights (default 1)"},
    {"no-graphs", false, "run decode steps eagerly instead of as CUDA graphs"},
    {"no-autotune", false,
     "take cuBLASLt's first heuristic choice for every GEMM instead of timing candidates"},
};

void check_same_shape(const LlamaConfig& w, const LlamaConfig& m) {
  if (w.layers != m.layers || w.hidden != m.hidden || w.heads != m.heads || w.kv_heads != m.kv_heads ||
      w.ffn != m.ffn || w.vocab != m.vocab)
    throw Error("bench serve: the weights' config.json (" + w.to_json().dump() +
                ") does not have the scenario model's shape (" + m.to_json().dump() + ")");
}

}  // namespace

int bench_serve_main(const std::vector<std::string>& argv) {
  cli::Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan-bench serve --scenario F [--json] [--json-out F] [--trace F] [--requests F] [--steps F]\n\n%s",
        cli::options_help(kSpec).c_str());
    return 0;
  }
  auto sc = strat::load_scenario(a.require("scenario"));
  auto setup = sim::serve::serving_setup_from_scenario(sc);
  if (auto s = a.get_int("seed", 0)) setup.workload.seed = std::uint64_t(*s);
  const std::uint64_t weights_seed = std::uint64_t(a.get_int("weights-seed", 0).value_or(1));
  const auto weights_dir = a.get("weights");
  LlamaConfig cfg = llama_config_from_spec(sc.model);
  HfModelDir hf;
  if (weights_dir) {
    hf = read_hf_model_dir(*weights_dir);
    check_same_shape(hf.config, cfg);
    cfg = hf.config;
  }
  setup.requests = sim::serve::make_requests(setup.workload);
  check_bench_supported(setup, cfg);
  const WeightFormat format = engine_weight_format(setup.serving.weights);
  const KvFormat kv_format = engine_kv_format(setup.serving.kv_dtype);
  const GpuInfo gpu = require_gpu("bench serve");

  const bool graphs = !a.flag("no-graphs");
  const bool mo_autotune = !a.flag("no-autotune");
  std::shared_ptr<CudaModel> model;  // outlives the engine, for its statistics
  std::int32_t ledger_blocks = 0;
  std::int64_t weights_bytes = 0;
  SteadyRunClock clock;
  StepTimingLog timing;  // filled by the backend, read after the run
  sim::serve::SimOptions o;
  o.keep_requests = true;
  o.backend_factory = [&](sim::serve::InstanceSpec& spec, const strat::ServingConfig& s) {
    DeviceWeights w = weights_dir ? DeviceWeights::from_safetensors(cfg, hf.files, format)
                                  : DeviceWeights::random(cfg, weights_seed, format);
    CudaModelOptions mo;
    mo.max_seqs = s.max_num_seqs;
    mo.max_tokens = int(std::max<std::int64_t>(s.max_batched_tokens, s.max_num_seqs));
    mo.cuda_graphs = graphs;
    mo.autotune_gemms = mo_autotune;
    mo.kv_format = kv_format;
    ledger_blocks = spec.num_blocks;
    const std::int64_t fit = kv_blocks_that_fit(cfg, mo, format);
    if (fit < spec.num_blocks) spec.num_blocks = std::int32_t(fit);
    if (spec.num_blocks < 1)
      throw Error("bench serve: no GPU memory left for the KV cache after the weights");
    mo.num_blocks = spec.num_blocks;
    weights_bytes = std::int64_t(w.bytes());
    model = std::make_shared<CudaModel>(std::move(w), mo);
    model->warm_up();
    auto backend = std::make_unique<CudaBackend>(model);
    backend->set_timing(&timing, &clock);
    return backend;
  };
  sim::ChromeTrace trace;
  const auto trace_path = a.get("trace");
  const auto csv_path = a.get("requests");
  const auto steps_path = a.get("steps");
  if (trace_path) o.trace = &trace;
  // The clock starts when the run does: after the engine is built and warmed up.
  o.clock = &clock;
  auto factory = o.backend_factory;
  o.backend_factory = [&](sim::serve::InstanceSpec& spec, const strat::ServingConfig& s) {
    auto b = factory(spec, s);
    clock.restart();
    return b;
  };
  hw::RooflineCostModel unused_cost(sc.cluster.gpu);  // the driver's signature; the real backend times steps
  auto r = sim::serve::simulate_serving(setup, unused_cost, o);

  // The simulator's step model on the same steps (GPU time only), for the per-step comparison.
  {
    auto cs = sim::make_cost_setup(sc.cluster.gpu, sc.profile, false);
    sim::serve::BackendOptions bo = sim::serve::BackendOptions::without_host();
    bo.engine = setup.engine.engine;
    bo.engine.host_step_us = bo.engine.host_seq_us = 0;
    bo.quant_group = setup.serving.quant_group;
    sim::serve::SimulatedBackend predicted(setup.model, setup.serving, *cs.cost, nullptr, bo);
    timing.predict(predicted);
  }

  // The same document as simulate serve --json, its times measured.
  Json j = cli::simulate_serve_json(sc, r, "measured");
  cli::stamp_cli_result(j, report::ResultKind::SimulateServe, {cli::command_line("bench serve", argv), &sc, Json()});
  j["device"] = gpu.name;
  if (!model) throw std::logic_error("bench serve: the engine was never built");
  const CudaModelStats st = model->stats();
  j["engine"] = {{"model", cfg.to_json()},
                 {"weights", weights_dir ? "safetensors " + *weights_dir
                                         : "random, seed " + std::to_string(weights_seed)},
                 {"weight_format", weight_format_name(format)},
                 {"weight_bytes", weights_bytes},
                 {"kv_dtype", kv_format_name(kv_format)},
                 {"prefill_kernel", prefill_kernel_name(resolved_prefill_kernel(PrefillKernel::automatic,
                                                                                kv_format == KvFormat::FP8))},
                 {"cuda_graphs", graphs},
                 {"kv_blocks", r.instances.empty() ? 0 : r.instances[0].kv_capacity_tokens / 16},
                 {"kv_blocks_ledger", ledger_blocks},
                 {"eager_steps", st.eager_steps},
                 {"graph_steps", st.graph_steps},
                 {"graph_captures", st.graph_captures},
                 {"gemm_autotune", mo_autotune},
                 {"block_copies", st.block_copies},
                 {"driver", gpu.driver},
                 {"host_time", timing.summary_json()}};
  if (trace_path) cli::write_file_atomic(*trace_path, trace.str());
  if (csv_path) cli::write_file_atomic(*csv_path, sim::serve::requests_csv(r.requests));
  if (steps_path) cli::write_file_atomic(*steps_path, timing.csv());
  if (auto f = a.get("json-out")) cli::write_file_atomic(*f, j.dump(2) + "\n");
  if (a.flag("json")) {
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  cli::print_serving_report(sc, setup, r, "measured on " + gpu.name);
  std::printf(
      "engine: %lld graph steps, %lld eager steps, %lld KV block copies; KV %lld blocks (ledger %lld)\n",
      (long long)st.graph_steps, (long long)st.eager_steps, (long long)st.block_copies,
      (long long)(r.instances.empty() ? 0 : r.instances[0].kv_capacity_tokens / 16),
      (long long)ledger_blocks);
  if (format != WeightFormat::BF16)
    std::printf("engine weights: %s, %.2f GB on the device\n", weight_format_name(format),
                double(weights_bytes) / 1e9);
  if (kv_format != KvFormat::BF16)
    std::printf("engine KV cache: %s, %lld bytes per block\n", kv_format_name(kv_format),
                (long long)CudaModel::block_bytes(cfg, kv_format));
  for (const bool g : {true, false}) {
    const HostFit f = timing.host_fit(g);
    if (f.steps == 0) continue;
    std::printf("host time per %s step: %.0f µs + %.2f µs × sequences (rmse %.0f µs; p50 %.0f µs over %lld steps, "
                "%d–%d sequences)\n",
                g ? "graph" : "eager", f.intercept_us, f.per_seq_us, f.rmse_us, f.p50_us, (long long)f.steps,
                f.min_seqs, f.max_seqs);
  }
  const Json sj = timing.summary_json();
  if (sj.contains("step_model")) {
    for (const auto& [kind, bands] : sj["step_model"]["ratios"].items()) {
      std::printf("step model / measured GPU time, %s:", kind.c_str());
      for (const auto& [band, q] : bands.items())
        std::printf(" %s seqs %.3f (%.3f–%.3f, %lld)", band.c_str(), q["median"].get<double>(),
                    q["p10"].get<double>(), q["p90"].get<double>(), (long long)q["steps"].get<std::int64_t>());
      std::printf("\n");
    }
  }
  return 0;
}

}  // namespace infraplan::engine
