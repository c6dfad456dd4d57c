#include "engine/step_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <thread>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "calib_kernels/nvml_reader.hpp"
#include "common/error.hpp"
#include "engine/fp8_kernels.hpp"
#include "engine/gpu_info.hpp"

namespace infraplan::engine {

namespace {

const std::vector<cli::OptionSpec> kSpec = {
    {"model", true, "model preset or config file (LLaMA architecture, head_dim 128)"},
    {"batches", true, "decode batch sizes, comma-separated (default 1,8,64)"},
    {"context", true, "KV length of every decoding sequence, tokens (default 1024)"},
    {"prefill", true, "tokens of the prefill chunk (default 8192; 0 = none)"},
    {"prefill-cached", true,
     "tokens already cached before the prefill chunk (a prefix-cache hit or an earlier chunk; default 0; "
     "at most 16777216, as --prefill)"},
    {"reps", true, "timed repetitions per point (default 30)"},
    {"weights", true,
     "weight format: bf16 (default) or fp8 (W8A8: the layers' linear weights and their inputs in E4M3, "
     "per-tensor scales)"},
    {"kv-dtype", true,
     "KV cache format: bf16 (default) or fp8 (E4M3, 1 byte per element, per-layer key and value scales "
     "of 1)"},
    {"prefill-kernel", true,
     "paged prefill attention: auto (default: wgmma on a 9.x GPU with a bf16 cache), mma or wgmma"},
    {"json-out", true, "write the results as JSON to this file"},
    {"heuristic-only", false,
     "time only with cuBLASLt's first choices (the GEMMs the serving engine runs); skip the autotuned pass"},
    {"hold", true,
     "also hold each decode batch for this many seconds (graph replays back to back as the engine runs "
     "them, after 0.5 s idle; the second half measured): step time, SM clock and board power under "
     "sustained load, as the profile's power.engine_steps record them (default 0 = off)"},
    {"kernels", false,
     "also time each kernel group of a decode step and of the prefill (eager, queued behind a wait so the "
     "host is ahead; CUDA events between kernels): per-label GPU time"},
};

struct Timing {
  double wall_p50 = 0, wall_p10 = 0, wall_p90 = 0, gpu_p50 = 0;
};

double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double x = q * double(v.size() - 1);
  const std::size_t i = std::size_t(x);
  return i + 1 < v.size() ? v[i] + (x - double(i)) * (v[i + 1] - v[i]) : v[i];
}

Timing time_plan(CudaModel& m, const StepPlan& plan, int reps) {
  using clock = std::chrono::steady_clock;
  std::vector<double> wall, gpu;
  for (int r = 0; r < reps + 3; ++r) {
    StepPlan p = plan;  // run() may pad it
    const auto t0 = clock::now();
    m.run(p);
    const double w = std::chrono::duration<double>(clock::now() - t0).count();
    if (r < 3) continue;  // warm-up
    wall.push_back(w);
    gpu.push_back(m.last_gpu_seconds());
  }
  return {pct(wall, 0.5), pct(wall, 0.1), pct(wall, 0.9), pct(gpu, 0.5)};
}

/// `batch` sequences of `context` tokens each, sequence i in blocks [i·n, (i + 1)·n), decoding.
StepPlan decode_plan(const CudaModel& m, int batch, int context) {
  StepPlan p;
  p.block_size = kBlockSize;
  p.max_blocks_per_seq = m.max_blocks_per_seq();
  const int n = (context + kBlockSize - 1) / kBlockSize;
  for (int i = 0; i < batch; ++i) {
    const int pos = context - 1;
    p.tokens.push_back(1 + (i * 7919) % (m.config().vocab - 1));
    p.positions.push_back(pos);
    p.slots.push_back((i * n + pos / kBlockSize) * kBlockSize + pos % kBlockSize);
    p.decode_context.push_back(context);
    for (int b = 0; b < p.max_blocks_per_seq; ++b) p.decode_tables.push_back(b < n ? i * n + b : 0);
    p.sample_rows.push_back(i);
  }
  p.num_decode = batch;
  p.prefill_cu = {0};
  return p;
}

/// One prefill chunk of `tokens` new tokens after `cached` tokens already in the cache (a prefix
/// hit or an earlier chunk), blocks [0, (cached + tokens) / 16].
StepPlan prefill_plan(const CudaModel& m, int tokens, int cached = 0) {
  StepPlan p;
  p.block_size = kBlockSize;
  p.max_blocks_per_seq = m.max_blocks_per_seq();
  p.prefill_cu = {0, tokens};
  p.prefill_start = {cached};
  p.prefill_kv = {cached + tokens};
  for (int b = 0; b < p.max_blocks_per_seq; ++b) p.prefill_tables.push_back(b);
  for (int t = 0; t < tokens; ++t) {
    p.tokens.push_back(1 + (t * 104729) % (m.config().vocab - 1));
    p.positions.push_back(cached + t);
    p.slots.push_back(cached + t);
  }
  p.max_prefill_q = tokens;
  p.sample_rows = {tokens - 1};
  return p;
}

/// Device-to-device copy bandwidth (bytes read + written per second), median of 10.
double copy_bandwidth() {
  const std::size_t bytes = std::size_t(2) << 30;
  calib::DeviceBuffer<unsigned char> a(bytes), b(bytes);
  CALIB_CUDA(cudaMemset(a.get(), 1, bytes));
  calib::Event e0, e1;
  std::vector<double> t;
  for (int r = 0; r < 12; ++r) {
    CALIB_CUDA(cudaEventRecord(e0.get()));
    CALIB_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice));
    CALIB_CUDA(cudaEventRecord(e1.get()));
    CALIB_CUDA(cudaEventSynchronize(e1.get()));
    float ms = 0;
    CALIB_CUDA(cudaEventElapsedTime(&ms, e0.get(), e1.get()));
    if (r >= 2) t.push_back(double(ms) * 1e-3);
  }
  return 2.0 * double(bytes) / pct(t, 0.5);
}

/// Dense GEMM rate of cuBLASLt at 8192³ on random data (bf16, or E4M3 inputs quantized from the
/// same values with per-tensor scales), FLOP/s (median of 10).
double gemm_peak(WeightFormat f) {
  const int n = 8192;
  calib::DeviceBuffer<bf16> x(std::size_t(n) * n), w(std::size_t(n) * n), y(std::size_t(n) * n);
  init_weights(x.get(), std::int64_t(x.size()), {0.0f, 1.0f}, 7, 1, nullptr);
  init_weights(w.get(), std::int64_t(w.size()), {0.0f, 1.0f}, 7, 2, nullptr);
  calib::DeviceBuffer<fp8> x8, w8;
  calib::DeviceBuffer<float> amax(2), scale(2 * kFp8ScaleStride);
  if (f == WeightFormat::FP8) {
    x8 = calib::DeviceBuffer<fp8>(x.size());
    w8 = calib::DeviceBuffer<fp8>(w.size());
    CALIB_CUDA(cudaMemset(amax.get(), 0, amax.bytes()));
    amax_bf16(x.get(), n, n, nullptr, amax.get(), nullptr);
    amax_bf16(w.get(), n, n, nullptr, amax.get() + 1, nullptr);
    quantize_fp8(x.get(), std::int64_t(x.size()), amax.get(), x8.get(), scale.get(), nullptr);
    quantize_fp8(w.get(), std::int64_t(w.size()), amax.get() + 1, w8.get(), scale.get() + kFp8ScaleStride,
                 nullptr);
  }
  LtGemm g;
  calib::Event e0, e1;
  std::vector<double> t;
  for (int r = 0; r < 12; ++r) {
    CALIB_CUDA(cudaEventRecord(e0.get()));
    if (f == WeightFormat::FP8)
      g.run_fp8(x8.get(), scale.get(), w8.get(), scale.get() + kFp8ScaleStride, y.get(), n, n, n, nullptr);
    else
      g.run(x.get(), w.get(), y.get(), n, n, n, false, nullptr);
    CALIB_CUDA(cudaEventRecord(e1.get()));
    CALIB_CUDA(cudaEventSynchronize(e1.get()));
    float ms = 0;
    CALIB_CUDA(cudaEventElapsedTime(&ms, e0.get(), e1.get()));
    if (r >= 2) t.push_back(double(ms) * 1e-3);
  }
  return 2.0 * double(n) * n * n / pct(t, 0.5);
}

std::vector<int> parse_list(const std::string& s, const char* flag) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      const int x = std::stoi(item);
      if (x < 1) throw std::invalid_argument("");
      v.push_back(x);
    } catch (...) {
      throw Error(std::string("--") + flag + "='" + s + "': expected positive integers separated by commas");
    }
  }
  if (v.empty()) throw Error(std::string("--") + flag + " is empty");
  return v;
}

}  // namespace

namespace {

struct Setup {
  LlamaConfig cfg;
  std::vector<int> batches;
  int context = 1024, prefill = 8192, reps = 30;
  int prefill_cached = 0;  // tokens cached before the prefill chunk
  double hold_s = 0;  // > 0: each decode batch also held this long (graph replays, NVML readings)
  bool kernels = false;  // per-kernel breakdown of each decode batch (eager, queued)
  WeightFormat format = WeightFormat::BF16;
  KvFormat kv_format = KvFormat::BF16;
  PrefillKernel prefill_kernel = PrefillKernel::automatic;
  double bw = 0, peak = 0, weights_read = 0;
  /// Dense datasheet rate of the GEMMs' input type on an H100/H200 SXM, FLOP/s.
  double datasheet_flops() const { return format == WeightFormat::FP8 ? 1978.9e12 : 989.4e12; }
};

/// Per-label GPU time of one step (median of 9 after 2 warm-up steps), printed under `title` and as
/// JSON.
Json kernel_breakdown(CudaModel& m, const StepPlan& plan, const std::string& title) {
  m.set_kernel_marks(true);
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> secs;
  std::map<std::string, int> count;
  for (int r = 0; r < 11; ++r) {
    StepPlan p = plan;
    m.run(p);
    if (r < 2) continue;
    for (const auto& k : m.kernel_times()) {
      if (!secs.count(k.label)) order.push_back(k.label);
      secs[k.label].push_back(k.seconds);
      count[k.label] = k.count;
    }
  }
  m.set_kernel_marks(false);
  Json out = Json::array();
  cli::Table t({"kernel", "count", "total µs", "µs each"});
  double total = 0;
  for (const auto& l : order) {
    const double s = pct(secs[l], 0.5);
    total += s;
    out.push_back({{"kernel", l}, {"count", count[l]}, {"seconds", s}});
    t.add({l, std::to_string(count[l]), cli::fmt(s * 1e6, 1), cli::fmt(s * 1e6 / count[l], 2)});
  }
  t.add({"all", "", cli::fmt(total * 1e6, 1), ""});
  std::printf("kernels of %s (queued, CUDA events between kernels):\n%s\n", title.c_str(), t.str().c_str());
  return out;
}

/// The decode step of `plan` run back to back as the engine runs it (a graph replay, then the host's
/// part of the step) for `hold_s` seconds after 0.5 s of idle GPU; the second half is measured:
/// GPU and wall time per step, the SM clock and board power NVML reports every ~100 ms.
Json hold_step(CudaModel& m, const StepPlan& plan, double hold_s, const calib::NvmlReader& nvml) {
  using clock = std::chrono::steady_clock;
  CALIB_CUDA(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::vector<double> gpu, power, mhz, temp;
  unsigned long long reasons = 0;
  const auto t0 = clock::now();
  auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
  auto last_read = t0, measured_from = t0;
  bool measuring = false;
  while (since(t0) < hold_s) {
    StepPlan p = plan;
    m.run(p);
    if (!measuring && since(t0) >= hold_s / 2) measuring = true, measured_from = last_read = clock::now();
    if (!measuring) continue;
    gpu.push_back(m.last_gpu_seconds());
    if (since(last_read) >= 0.1) {
      last_read = clock::now();
      power.push_back(nvml.power_w());
      mhz.push_back(nvml.sm_clock_mhz());
      temp.push_back(nvml.temperature_c());
      reasons |= nvml.clock_event_reasons();
    }
  }
  const double wall = since(measured_from);
  auto finite = [](std::vector<double> v) {
    std::erase_if(v, [](double x) { return !std::isfinite(x); });
    return v;
  };
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? std::nan("") : s / double(v.size());
  };
  auto num = [](double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); };
  power = finite(power), mhz = finite(mhz), temp = finite(temp);
  const double steps = double(gpu.size());
  return {{"hold_s", hold_s},
          {"steps_measured", gpu.size()},
          {"gpu_ms_p50", gpu.empty() ? Json(nullptr) : Json(pct(gpu, 0.5) * 1e3)},
          {"wall_ms_mean", steps > 0 ? Json(wall / steps * 1e3) : Json(nullptr)},
          {"clock_mhz", mhz.empty() ? Json(nullptr) : Json(pct(mhz, 0.5))},
          {"power_w", num(mean(power))},
          {"temperature_c", num(mean(temp))},
          {"clock_event_reasons", reasons},
          {"nvml_samples", power.size()}};
}

/// Decode points and the prefill chunk with the model as it is now; prints a table.
Json measure(CudaModel& m, const Setup& st, const std::string& label) {
  const LlamaConfig& cfg = st.cfg;
  Json out = {{"gemms", label}, {"decode", Json::array()}};
  cli::Table t({"batch", "graph wall ms (p10-p90)", "graph GPU ms", "eager wall ms", "bytes GB",
                "% of copy BW (GPU)", "% of 4.8 TB/s (GPU)"});
  for (int b : st.batches) {
    const StepPlan plan = decode_plan(m, b, st.context);
    m.set_cuda_graphs(true);
    const Timing g = time_plan(m, plan, st.reps);
    m.set_cuda_graphs(false);
    const Timing e = time_plan(m, plan, st.reps);
    m.set_cuda_graphs(true);
    const double kv_token_bytes = double(cfg.kv_bytes_per_token()) / 2.0 * kv_element_bytes(st.kv_format);
    const double bytes =
        st.weights_read + double(b) * cfg.hidden * 2.0 + double(b) * st.context * kv_token_bytes;
    out["decode"].push_back(
        {{"batch", b},
         {"graph_wall_ms", {{"p10", g.wall_p10 * 1e3}, {"p50", g.wall_p50 * 1e3}, {"p90", g.wall_p90 * 1e3}}},
         {"graph_gpu_ms_p50", g.gpu_p50 * 1e3},
         {"eager_wall_ms_p50", e.wall_p50 * 1e3},
         {"eager_gpu_ms_p50", e.gpu_p50 * 1e3},
         {"bytes", bytes},
         {"roofline_fraction_copy_bw_gpu", bytes / st.bw / g.gpu_p50},
         {"roofline_fraction_copy_bw_wall", bytes / st.bw / g.wall_p50},
         {"roofline_fraction_4800GBps_gpu", bytes / 4.8e12 / g.gpu_p50}});
    t.add({std::to_string(b),
           cli::fmt(g.wall_p50 * 1e3, 3) + " (" + cli::fmt(g.wall_p10 * 1e3, 3) + "-" +
               cli::fmt(g.wall_p90 * 1e3, 3) + ")",
           cli::fmt(g.gpu_p50 * 1e3, 3), cli::fmt(e.wall_p50 * 1e3, 3), cli::fmt(bytes / 1e9, 2),
           cli::fmt(100 * bytes / st.bw / g.gpu_p50, 1), cli::fmt(100 * bytes / 4.8e12 / g.gpu_p50, 1)});
    if (st.kernels)
      out["decode"].back()["kernels"] = kernel_breakdown(m, plan, "one eager decode step, batch " + std::to_string(b));
  }
  std::printf("%s decode (%s weights, %s KV, %s GEMMs), context %d:\n%s\n", cfg.name.c_str(),
              weight_format_name(st.format), kv_format_name(st.kv_format), label.c_str(), st.context,
              t.str().c_str());
  if (st.prefill > 0) {
    m.set_cuda_graphs(false);
    const Timing p = time_plan(m, prefill_plan(m, st.prefill, st.prefill_cached), std::max(5, st.reps / 3));
    m.set_cuda_graphs(true);
    const double N = st.prefill;
    const double dense = 2.0 * N * double(cfg.layers) *
                             (double(cfg.hidden) * cfg.qkv_dim() + double(cfg.q_dim()) * cfg.hidden +
                              3.0 * double(cfg.hidden) * cfg.ffn) +
                         2.0 * cfg.hidden * double(cfg.vocab);
    const double C = st.prefill_cached;
    const double attn = 4.0 * cfg.layers * double(cfg.heads) * kHeadDim * (N * C + N * (N + 1) / 2);
    const double flops = dense + attn;
    out["prefill"] = {{"tokens", st.prefill},
                      {"cached_tokens", st.prefill_cached},
                      {"wall_ms_p50", p.wall_p50 * 1e3},
                      {"gpu_ms_p50", p.gpu_p50 * 1e3},
                      {"flops", flops},
                      {"attention_flops", attn},
                      {"tflops_gpu", flops / p.gpu_p50 / 1e12},
                      {st.format == WeightFormat::FP8 ? "fraction_of_1979_TFLOPs" : "fraction_of_989_TFLOPs",
                       flops / p.gpu_p50 / st.datasheet_flops()},
                      {"fraction_of_measured_gemm", flops / p.gpu_p50 / st.peak}};
    std::printf(
        "prefill %d tokens (%s GEMMs): %.2f ms wall, %.2f ms GPU, %.0f TFLOP/s = %.1f%% of %s, "
        "%.1f%% of the measured GEMM\n",
        st.prefill, label.c_str(), p.wall_p50 * 1e3, p.gpu_p50 * 1e3, flops / p.gpu_p50 / 1e12,
        100 * flops / p.gpu_p50 / st.datasheet_flops(),
        st.format == WeightFormat::FP8 ? "1979 dense fp8" : "989 dense bf16",
        100 * flops / p.gpu_p50 / st.peak);
    if (st.kernels) {
      m.set_cuda_graphs(false);
      out["prefill"]["kernels"] =
          kernel_breakdown(m, prefill_plan(m, st.prefill, st.prefill_cached),
                           "one prefill of " + std::to_string(st.prefill) + " tokens after " +
                               std::to_string(st.prefill_cached) + " cached");
      m.set_cuda_graphs(true);
    }
  }
  return out;
}

}  // namespace

int step_bench_main(const std::vector<std::string>& argv) {
  cli::Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan-bench step --model NAME [--batches 1,8,64] [--context N] [--prefill N] "
        "[--weights bf16|fp8] [--kv-dtype bf16|fp8]\n\n%s",
        cli::options_help(kSpec).c_str());
    return 0;
  }
  const model::ModelSpec spec = model::resolve_model_arg(a.require("model"));
  Setup st;
  st.cfg = llama_config_from_spec(spec);
  st.batches = parse_list(a.get("batches", "1,8,64"), "batches");
  st.context = int(a.get_int("context", 1).value_or(1024));
  st.prefill = int(a.get_int("prefill", 0, 1 << 24).value_or(8192));
  st.prefill_cached = int(a.get_int("prefill-cached", 0, 1 << 24).value_or(0));
  if (st.prefill_cached > 0 && st.prefill == 0) throw Error("--prefill-cached needs a prefill chunk (--prefill > 0)");
  st.reps = int(a.get_int("reps", 1).value_or(30));
  st.kernels = a.flag("kernels");
  st.hold_s = a.get_number("hold", 0, 600).value_or(0);
  st.format = parse_weight_format(a.get("weights", "bf16"), "--weights");
  st.kv_format = parse_kv_format(a.get("kv-dtype", "bf16"), "--kv-dtype");
  st.prefill_kernel = parse_prefill_kernel(a.get("prefill-kernel", "auto"), "--prefill-kernel");
  // Timing shapes may exceed the model's trained length (LLaMA-2: 4096): the engine's tables and
  // rotary table are sized for what is asked.
  st.cfg.max_seq = std::max({st.cfg.max_seq, st.context + 1, st.prefill + st.prefill_cached});
  LlamaConfig& cfg = st.cfg;
  const GpuInfo gpu = require_gpu("bench step");
  st.bw = copy_bandwidth();
  st.peak = gemm_peak(st.format);

  const int max_batch = *std::max_element(st.batches.begin(), st.batches.end());
  const int per_seq = (st.context + kBlockSize) / kBlockSize;
  auto blocks_for = [&](int batch) {
    return std::max(batch * per_seq, (st.prefill + st.prefill_cached + kBlockSize - 1) / kBlockSize) + 1;
  };
  CudaModelOptions mo;
  mo.max_seqs = max_batch;
  mo.max_tokens = std::max(max_batch, st.prefill);
  mo.max_graph_batch = max_batch;
  mo.num_blocks = blocks_for(max_batch);
  mo.kv_format = st.kv_format;
  mo.prefill_kernel = st.prefill_kernel;
  DeviceWeights w = DeviceWeights::random(cfg, 1, st.format);
  // Bytes one decode step must read: every weight once (the embedding only for the batch's rows)
  // and the KV of every sequence.
  const double embed_bytes = double(cfg.vocab) * cfg.hidden * 2.0;
  const double weight_bytes = double(w.bytes());
  st.weights_read = weight_bytes - (cfg.tied_embeddings ? 0.0 : embed_bytes);
  // Batches whose KV does not fit next to the weights are left out and reported (LLaMA-2-7B at
  // batch 256 and context 1024 needs 128 GiB of bf16 KV, 64 GiB in fp8).
  const std::int64_t fit = kv_blocks_that_fit(cfg, mo, st.format);
  std::vector<int> skipped;
  std::erase_if(st.batches, [&](int b) {
    if (blocks_for(b) <= fit) return false;
    skipped.push_back(b);
    return true;
  });
  for (int b : skipped)
    std::printf("batch %d left out: its %d KV blocks of %lld bytes (%s) do not fit on this GPU (%lld do)\n", b,
                blocks_for(b), (long long)CudaModel::block_bytes(cfg, st.kv_format), kv_format_name(st.kv_format),
                (long long)fit);
  if (st.batches.empty())
    throw Error("bench step: the KV blocks of " + cfg.name + " do not fit on this GPU for any batch; lower "
                "--batches or --context, or use --kv-dtype fp8");
  mo.num_blocks = blocks_for(*std::max_element(st.batches.begin(), st.batches.end()));
  CudaModel m(std::move(w), mo);
  m.fill_kv_random(3);
  m.warm_up();
  const char* fmt = weight_format_name(st.format);
  std::printf("%s on %s (%s); copy %.0f GB/s, cuBLASLt %s 8192^3 %.0f TFLOP/s; KV cache %s\n", cfg.name.c_str(),
              gpu.name.c_str(), gpu.driver.c_str(), st.bw / 1e9, fmt, st.peak / 1e12,
              kv_format_name(st.kv_format));
  if (st.format != WeightFormat::BF16)
    std::printf("weights %s: %.2f GB on the device, %.2f GB read per decode step\n", fmt, weight_bytes / 1e9,
                st.weights_read / 1e9);
  Json out = {{"device", gpu.name},
              {"driver", gpu.driver},
              {"model", cfg.to_json()},
              {"context", st.context},
              {"copy_bandwidth_GBps", st.bw / 1e9},
              {std::string("gemm_") + fmt + "_8192_TFLOPs", st.peak / 1e12},
              {"weights", fmt},
              {"batches_left_out", skipped},
              {"kv_dtype", kv_format_name(st.kv_format)},
              {"prefill_kernel", prefill_kernel_name(resolved_prefill_kernel(st.prefill_kernel,
                                                                             st.kv_format == KvFormat::FP8))},
              {"kv_block_bytes", CudaModel::block_bytes(cfg, st.kv_format)},
              {"weight_bytes", weight_bytes},
              {"weight_bytes_read_per_decode_step", st.weights_read},
              {"runs", Json::array()}};
  out["runs"].push_back(measure(m, st, "heuristic"));
  if (st.hold_s > 0) {
    // Under sustained load, with the GEMMs the serving engine runs (cuBLASLt's first choices).
    int dev = 0;
    CALIB_CUDA(cudaGetDevice(&dev));
    const calib::NvmlReader nvml(dev);
    out["limit_w"] = nvml.ok() ? Json(nvml.limit_w()) : Json(nullptr);
    out["max_clock_mhz"] = nvml.ok() ? Json(nvml.max_sm_clock_mhz()) : Json(nullptr);
    cli::Table t({"batch", "held s", "GPU ms", "wall ms", "SM MHz", "board W"});
    m.set_cuda_graphs(true);
    for (std::size_t i = 0; i < st.batches.size(); ++i) {
      const int b = st.batches[i];
      Json h = hold_step(m, decode_plan(m, b, st.context), st.hold_s, nvml);
      auto show = [&](const char* k, int digits) { return h[k].is_null() ? std::string("-") : cli::fmt(h[k].get<double>(), digits); };
      t.add({std::to_string(b), cli::fmt(st.hold_s, 1), show("gpu_ms_p50", 3), show("wall_ms_mean", 3),
             show("clock_mhz", 0), show("power_w", 0)});
      out["runs"][0]["decode"][i]["held"] = std::move(h);
    }
    std::printf("decode held (cuBLASLt's first choices, graph replays back to back), context %d%s:\n%s\n",
                st.context, nvml.ok() ? "" : " (NVML not readable: no power or clock)", t.str().c_str());
  }
  if (a.flag("heuristic-only")) {
    if (auto f = a.get("json-out")) cli::write_file_atomic(*f, out.dump(2) + "\n");
    return 0;
  }
  m.enable_autotune();
  const CudaModelStats& ts = m.stats();
  std::printf("autotuned %lld GEMM shapes: %.3f ms with the heuristic's first choices, %.3f ms chosen\n",
              (long long)ts.tuned_gemms, ts.tuned_heuristic_s * 1e3, ts.tuned_best_s * 1e3);
  Json tuned = measure(m, st, "autotuned");
  tuned["tuned_gemms"] = ts.tuned_gemms;
  tuned["tuned_heuristic_ms"] = ts.tuned_heuristic_s * 1e3;
  tuned["tuned_best_ms"] = ts.tuned_best_s * 1e3;
  out["runs"].push_back(tuned);
  if (auto f = a.get("json-out")) cli::write_file_atomic(*f, out.dump(2) + "\n");
  return 0;
}

}  // namespace infraplan::engine
