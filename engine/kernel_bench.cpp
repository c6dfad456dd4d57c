#include "engine/kernel_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/timing.hpp"
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "engine/engine_kernels.hpp"
#include "engine/gpu_info.hpp"
#include "engine/in_step_timing.hpp"
#include "engine/llama_config.hpp"
#include "common/error.hpp"
#include "model/model_spec.hpp"

namespace infraplan::engine {

namespace {

const std::vector<cli::OptionSpec> kSpec = {
    {"model", true, "model preset or config file (LLaMA architecture, head_dim 128)"},
    {"json-out", true, "write the table as JSON ({\"serving_kernels\": …}, ready for a profile)"},
};

const std::vector<int> kRows = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};

}  // namespace

int kernel_bench_main(const std::vector<std::string>& argv) {
  cli::Args a(argv, kSpec);
  if (a.help()) {
    std::printf("Usage: infraplan-bench kernels --model NAME [--json-out F]\n\n%s", cli::options_help(kSpec).c_str());
    return 0;
  }
  const model::ModelSpec spec = model::resolve_model_arg(a.require("model"));
  LlamaConfig c = llama_config_from_spec(spec);
  const int R = kRows.back();
  c.max_seq = std::max(c.max_seq, R);
  const GpuInfo gpu = require_gpu("bench kernels");

  calib::Stream stream;
  cudaStream_t s = stream.get();
  const int h = c.hidden, qkv = c.qkv_dim(), kvd = c.kv_heads * kHeadDim;
  calib::DeviceBuffer<bf16> resid(std::size_t(R) * h), delta(std::size_t(R) * h), w(h), out(std::size_t(R) * h);
  calib::DeviceBuffer<bf16> qkv_buf(std::size_t(R) * qkv), q_out(std::size_t(R) * c.q_dim());
  const std::size_t plane = std::size_t(R / kBlockSize + 1) * kBlockSize * kvd;
  calib::DeviceBuffer<bf16> kc(plane), vc(plane);
  calib::DeviceBuffer<bf16> gu(std::size_t(R) * 2 * c.ffn), act(std::size_t(R) * c.ffn);
  calib::DeviceBuffer<float> logits(std::size_t(R) * c.vocab);
  calib::DeviceBuffer<int> ids(R), positions(R), slots(R);
  for (auto* b : {&resid, &delta, &w, &qkv_buf, &gu})
    calib::fill_random(b->get(), b->size(), calib::Elem::BF16, 7, 1.f, s);
  calib::fill_random(logits.get(), logits.size(), calib::Elem::F32, 8, 1.f, s);
  std::vector<int> seq(R);
  for (int i = 0; i < R; ++i) seq[std::size_t(i)] = i;
  CALIB_CUDA(cudaMemcpy(positions.get(), seq.data(), seq.size() * sizeof(int), cudaMemcpyHostToDevice));
  CALIB_CUDA(cudaMemcpy(slots.get(), seq.data(), seq.size() * sizeof(int), cudaMemcpyHostToDevice));
  const std::vector<float> rope_host = rope_table(c);
  calib::DeviceBuffer<float2> rope(rope_host.size() / 2);
  CALIB_CUDA(cudaMemcpy(rope.get(), rope_host.data(), rope_host.size() * sizeof(float), cudaMemcpyHostToDevice));
  CALIB_CUDA(cudaStreamSynchronize(s));

  // Sources the "producer" copies from: in a step the kernel's main input was just written by
  // the GEMM before it (in L2), its other operands were written long before (in HBM).
  calib::DeviceBuffer<bf16> delta_src(delta.size()), qkv_src(qkv_buf.size()), gu_src(gu.size());
  calib::DeviceBuffer<float> logits_src(logits.size());
  CALIB_CUDA(cudaMemcpyAsync(delta_src.get(), delta.get(), delta.size() * sizeof(bf16), cudaMemcpyDeviceToDevice, s));
  CALIB_CUDA(cudaMemcpyAsync(qkv_src.get(), qkv_buf.get(), qkv_buf.size() * sizeof(bf16), cudaMemcpyDeviceToDevice, s));
  CALIB_CUDA(cudaMemcpyAsync(gu_src.get(), gu.get(), gu.size() * sizeof(bf16), cudaMemcpyDeviceToDevice, s));
  CALIB_CUDA(cudaMemcpyAsync(logits_src.get(), logits.get(), logits.size() * sizeof(float), cudaMemcpyDeviceToDevice, s));
  auto produce = [&](void* dst, const void* src, std::size_t bytes) {
    CALIB_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  };
  struct Kernel {
    std::string name;
    long long width;
    std::function<void(int rows)> run;
    std::function<void(int rows)> input;  ///< writes the kernel's main input, as the GEMM before it does
  };
  const std::vector<Kernel> kernels = {
      {"add_rmsnorm", h,
       [&](int n) { add_rmsnorm(resid.get(), delta.get(), w.get(), out.get(), n, h, c.rms_eps, s); },
       [&](int n) { produce(delta.get(), delta_src.get(), std::size_t(n) * h * sizeof(bf16)); }},
      {"rope_kv_write", qkv,
       [&](int n) {
         rope_qkv_to_cache(qkv_buf.get(), q_out.get(), kc.get(), vc.get(), positions.get(), slots.get(),
                           rope.get(), n, c.heads, c.kv_heads, s);
       },
       [&](int n) { produce(qkv_buf.get(), qkv_src.get(), std::size_t(n) * qkv * sizeof(bf16)); }},
      {"swiglu", c.ffn, [&](int n) { calib::swiglu(gu.get(), act.get(), n, c.ffn, s); },
       [&](int n) { produce(gu.get(), gu_src.get(), std::size_t(n) * 2 * c.ffn * sizeof(bf16)); }},
      {"argmax", c.vocab, [&](int n) { argmax_rows(logits.get(), ids.get(), n, c.vocab, s); },
       [&](int n) { produce(logits.get(), logits_src.get(), std::size_t(n) * c.vocab * sizeof(float)); }},
  };
  calib::TimingOptions opt;
  opt.warmup = 3;
  opt.min_iters = 7;
  Json table = {{"source", "infraplan-bench kernels --model " + c.name},
                {"device", gpu.name},
                {"driver", gpu.driver},
                {"method",
                 "GPU time per kernel as in a decode step: each sample overwrites 2 x L2, writes the kernel's "
                 "main input (as the GEMM before it does), then runs the kernel; the sample without the kernel "
                 "is subtracted; CUDA graph replays, median of samples (events); one block per row"},
                {"rows", kRows},
                {"kernels", Json::object()}};
  std::vector<std::string> head = {"rows"};
  for (const auto& k : kernels) head.push_back(k.name + " µs");
  cli::Table t(head);
  std::vector<std::vector<double>> secs(kernels.size());
  // In a decode step each of these kernels follows a GEMM that streamed its weights through L2
  // and wrote the kernel's main input: every sample overwrites 2 × L2 (a memset), writes that
  // input (a device copy, as the GEMM's output would be), then runs the kernel; the same sample
  // without the kernel is subtracted.
  calib::TimingOptions fopt = opt;
  fopt.min_iters = 15;
  fopt.max_iters = 60;
  fopt.budget_ms = 20;
  const InStepTimer timer(s, fopt);
  for (std::size_t i = 0; i < kernels.size(); ++i)
    for (int rows : kRows) {
      const Kernel& k = kernels[i];
      secs[i].push_back(timer.seconds([&] { k.run(rows); }, [&] { k.input(rows); }));
    }
  for (std::size_t r = 0; r < kRows.size(); ++r) {
    std::vector<std::string> row = {std::to_string(kRows[r])};
    for (std::size_t i = 0; i < kernels.size(); ++i) row.push_back(cli::fmt(secs[i][r] * 1e6, 2));
    t.add(row);
  }
  for (std::size_t i = 0; i < kernels.size(); ++i)
    table["kernels"][kernels[i].name] = {{"width", kernels[i].width}, {"seconds", secs[i]}};
  std::printf("%s row kernels on %s (%s), main input in L2, the rest in HBM, graph replays:\n%s\n", c.name.c_str(), gpu.name.c_str(),
              gpu.driver.c_str(), t.str().c_str());
  if (auto f = a.get("json-out")) cli::write_file_atomic(*f, Json{{"serving_kernels", table}}.dump(2) + "\n");
  return 0;
}

}  // namespace infraplan::engine
