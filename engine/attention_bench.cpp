#include "engine/attention_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <sstream>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/timing.hpp"
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "common/error.hpp"
#include "engine/engine_kernels.hpp"
#include "engine/gpu_info.hpp"
#include "engine/in_step_timing.hpp"
#include "engine/llama_config.hpp"
#include "model/model_spec.hpp"

namespace infraplan::engine {

namespace {

const std::vector<cli::OptionSpec> kSpec = {
    {"model", true, "model preset or config file (LLaMA architecture, head_dim 128): heads and KV heads"},
    {"json-out", true, "write the cases and their times as JSON"},
    {"prefill-kernel", true, "paged prefill kernel: auto (default: wgmma on a 9.x GPU), mma or wgmma"},
    {"flush", true,
     "how each sample clears the L2 first: write (default: a memset, the lines left dirty, as the "
     "profiles' tables were timed) or read (a read kernel, the lines left clean, as a step's weight "
     "GEMMs leave them)"},
};

/// One prefill chunk: `q` new tokens after `cached` tokens already in the cache.
struct Chunk {
  int q = 0, cached = 0;
};

/// A prefill launch: every chunk of a step in one kernel.
struct PrefillCase {
  std::vector<Chunk> chunks;
};

/// A decode launch: `batch` sequences of `context` tokens; the first `shared` tokens of each are
/// the same blocks for the sequences of one of `groups` groups (groups = batch: nothing shared).
struct DecodeCase {
  int batch = 0, context = 0, shared = 0, groups = 0;
};

std::vector<PrefillCase> prefill_cases() {
  std::vector<PrefillCase> out;
  for (int cached : {0, 1024, 4096})
    for (int q : {16, 64, 128, 256, 512, 1024, 2048}) out.push_back({{{q, cached}}});
  for (int n : {2, 4, 8, 18})
    for (int q : {64, 150}) out.push_back({std::vector<Chunk>(std::size_t(n), Chunk{q, 1024})});
  // A mixed step's shape: one long chunk beside short chunks after a cached prefix.
  PrefillCase mixed{{{1024, 0}}};
  for (int i = 0; i < 6; ++i) mixed.chunks.push_back({128, 1024});
  out.push_back(mixed);
  return out;
}

std::vector<DecodeCase> decode_cases() {
  std::vector<DecodeCase> out;
  for (int b : {8, 32, 128})
    for (int groups : {1, 4, b}) out.push_back({b, 1100, 1024, groups});
  // Without sharing over batch and context, with the engine's split rule and KV in HBM: the
  // calibration table's shapes as a decode step runs them.
  for (int b : {1, 4, 16, 64, 256})
    for (int ctx : {64, 128, 256, 1024, 4096, 16384}) out.push_back({b, ctx, 0, b});
  // Contexts that end inside a key tile, between two whole-tile contexts (128 → 192 and
  // 1024 → 1088): what part of a whole tile's time a partial one costs.
  const int tile = calib::kDecodeTileTokens;
  for (int b : {16, 64, 256})
    for (int base : {2 * tile, 16 * tile})
      for (int extra : {1, tile / 4, tile / 2, 3 * tile / 4, tile}) out.push_back({b, base + extra, 0, b});
  return out;
}

std::string describe(const PrefillCase& c) {
  std::ostringstream o;
  for (std::size_t i = 0; i < c.chunks.size(); ++i) {
    std::size_t same = i;
    while (same + 1 < c.chunks.size() && c.chunks[same + 1].q == c.chunks[i].q &&
           c.chunks[same + 1].cached == c.chunks[i].cached)
      ++same;
    if (i) o << " + ";
    if (same > i) o << (same - i + 1) << "x";
    o << c.chunks[i].q << "@" << c.chunks[i].cached;
    i = same;
  }
  return o.str();
}

}  // namespace

int attention_bench_main(const std::vector<std::string>& argv) {
  cli::Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan-bench attention --model NAME [--prefill-kernel auto|mma|wgmma]\n"
        "                                 [--flush write|read] [--json-out F]\n\n%s",
        cli::options_help(kSpec).c_str());
    return 0;
  }
  const PrefillKernel prefill_kernel =
      parse_prefill_kernel(a.get("prefill-kernel", "auto"), "--prefill-kernel");
  const L2Flush flush = parse_l2_flush(a.get("flush", "write"), "--flush");
  const model::ModelSpec spec = model::resolve_model_arg(a.require("model"));
  const LlamaConfig c = llama_config_from_spec(spec);
  const GpuInfo gpu = require_gpu("bench attention");
  const PrefillKernel ran = resolved_prefill_kernel(prefill_kernel, false);
  calib::Stream stream;
  cudaStream_t s = stream.get();
  const int H = c.heads, KVH = c.kv_heads;
  const std::size_t block_elems = std::size_t(KVH) * kBlockSize * kHeadDim;

  const std::vector<PrefillCase> pcases = prefill_cases();
  const std::vector<DecodeCase> dcases = decode_cases();
  // Sizes: the largest case of each kind.
  int max_rows = 0, max_blocks = 0, max_chunks = 0, max_batch = 0;
  for (const auto& pc : pcases) {
    int rows = 0, blocks = 0;
    for (const Chunk& ch : pc.chunks) rows += ch.q, blocks += (ch.cached + ch.q + kBlockSize - 1) / kBlockSize;
    max_rows = std::max(max_rows, rows), max_blocks = std::max(max_blocks, blocks);
    max_chunks = std::max(max_chunks, int(pc.chunks.size()));
  }
  for (const auto& dc : dcases) {
    max_batch = std::max(max_batch, dc.batch);
    max_blocks = std::max(max_blocks, dc.batch * ((dc.context + kBlockSize - 1) / kBlockSize));
  }
  calib::DeviceBuffer<bf16> q(std::size_t(std::max(max_rows, max_batch)) * H * kHeadDim);
  calib::DeviceBuffer<bf16> out(q.size());
  calib::DeviceBuffer<bf16> kc(std::size_t(max_blocks) * block_elems), vc(kc.size());
  for (auto* b : {&q, &kc, &vc}) calib::fill_random(b->get(), b->size(), calib::Elem::BF16, 11, 1.f, s);
  constexpr int kMaxSplits = 64;
  calib::DeviceBuffer<float> partial_o(std::size_t(max_batch) * H * kMaxSplits * kHeadDim);
  calib::DeviceBuffer<float> partial_lse(std::size_t(max_batch) * H * kMaxSplits);
  const int max_blocks_per_seq = (16384 + kBlockSize - 1) / kBlockSize;
  calib::DeviceBuffer<int> meta(std::size_t(3 * (max_chunks + max_batch) + 1 +
                                            std::max(max_chunks, max_batch) * max_blocks_per_seq));

  calib::TimingOptions opt;
  opt.warmup = 3;
  opt.min_iters = 15;
  opt.max_iters = 60;
  opt.budget_ms = 30;
  const InStepTimer timer(s, opt, flush);
  auto time_kernel = [&](const std::function<void()>& run) { return timer.seconds(run); };

  Json jp = Json::array(), jd = Json::array();
  cli::Table tp({"prefill chunks (q@cached)", "CTAs", "µs"});
  for (const PrefillCase& pc : pcases) {
    const int n = int(pc.chunks.size());
    const std::size_t un = std::size_t(n);
    std::vector<int> cu(un + 1, 0), start(un, 0), kv(un, 0);
    std::vector<int> table(std::size_t(n) * max_blocks_per_seq, 0);
    int next_block = 0, max_q = 0, ctas = 0;
    for (int i = 0; i < n; ++i) {
      const Chunk& ch = pc.chunks[std::size_t(i)];
      cu[std::size_t(i) + 1] = cu[std::size_t(i)] + ch.q;
      start[std::size_t(i)] = ch.cached;
      kv[std::size_t(i)] = ch.cached + ch.q;
      max_q = std::max(max_q, ch.q);
      ctas += (ch.q + 127) / 128 * H;
      for (int b = 0; b < (kv[std::size_t(i)] + kBlockSize - 1) / kBlockSize; ++b)
        table[std::size_t(i) * max_blocks_per_seq + b] = next_block++;
    }
    std::vector<int> host;
    host.insert(host.end(), cu.begin(), cu.end());
    host.insert(host.end(), start.begin(), start.end());
    host.insert(host.end(), kv.begin(), kv.end());
    const std::size_t table_at = host.size();
    host.insert(host.end(), table.begin(), table.end());
    CALIB_CUDA(cudaMemcpy(meta.get(), host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice));
    PagedPrefillArgs pa;
    pa.q = q.get();
    pa.k_cache = kc.get();
    pa.v_cache = vc.get();
    pa.out = out.get();
    pa.cu_q = meta.get();
    pa.start = meta.get() + n + 1;
    pa.kv_len = meta.get() + 2 * n + 1;
    pa.block_table = meta.get() + table_at;
    pa.chunks = n;
    pa.max_q = max_q;
    pa.heads = H;
    pa.kv_heads = KVH;
    pa.max_blocks_per_seq = max_blocks_per_seq;
    pa.kernel = prefill_kernel;
    const double sec = time_kernel([&] { paged_prefill_attention(pa, s); });
    Json chunks = Json::array();
    for (const Chunk& ch : pc.chunks) chunks.push_back({ch.q, ch.cached});
    jp.push_back({{"chunks", chunks}, {"ctas", ctas}, {"seconds", sec}});
    tp.add({describe(pc), std::to_string(ctas), cli::fmt(sec * 1e6, 1)});
  }
  cli::Table td({"decode batch", "context", "shared prefix", "groups", "µs"});
  for (const DecodeCase& dc : dcases) {
    const int per_seq = (dc.context + kBlockSize - 1) / kBlockSize, shared = dc.shared / kBlockSize;
    std::vector<int> table(std::size_t(dc.batch) * max_blocks_per_seq, 0), ctx(std::size_t(dc.batch), dc.context);
    int next_block = 0;
    std::vector<int> group_base(std::size_t(dc.groups), -1);
    for (int b = 0; b < dc.batch; ++b) {
      int& base = group_base[std::size_t(b % dc.groups)];
      if (base < 0) base = next_block, next_block += shared;
      for (int k = 0; k < per_seq; ++k)
        table[std::size_t(b) * max_blocks_per_seq + k] = k < shared ? base + k : next_block++;
    }
    std::vector<int> host(ctx);
    const std::size_t table_at = host.size();
    host.insert(host.end(), table.begin(), table.end());
    CALIB_CUDA(cudaMemcpy(meta.get(), host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice));
    calib::DecodeArgs da;
    da.q = q.get();
    da.k_cache = kc.get();
    da.v_cache = vc.get();
    da.block_table = meta.get() + table_at;
    da.context_lens = meta.get();
    da.out = out.get();
    da.partial_o = partial_o.get();
    da.partial_lse = partial_lse.get();
    da.batch = dc.batch;
    da.heads = H;
    da.kv_heads = KVH;
    da.max_blocks_per_seq = max_blocks_per_seq;
    // The engine's choice: enough splits to fill the resident slots (two per multiprocessor).
    const int per_split = dc.batch * KVH, slots = 2 * gpu.sms;
    int splits = 1;
    while (splits < kMaxSplits && splits * per_split < slots) splits *= 2;
    da.num_splits = splits;
    da.tokens_per_split = 0;
    const double sec = time_kernel([&] { calib::decode_attention(da, s); });
    jd.push_back({{"batch", dc.batch},
                  {"context", dc.context},
                  {"shared_prefix", dc.shared},
                  {"groups", dc.groups},
                  {"unique_blocks", next_block},
                  {"seconds", sec}});
    td.add({std::to_string(dc.batch), std::to_string(dc.context), std::to_string(dc.groups < dc.batch ? dc.shared : 0),
            std::to_string(dc.groups), cli::fmt(sec * 1e6, 1)});
  }
  std::printf(
      "%s attention kernels on %s (%s), heads %d, KV heads %d, prefill kernel %s; KV in HBM (L2 "
      "flushed by a %s of 2 x L2), graph replays:\n%s\n%s\n",
      c.name.c_str(), gpu.name.c_str(), gpu.driver.c_str(), H, KVH, prefill_kernel_name(ran),
      l2_flush_name(flush), tp.str().c_str(), td.str().c_str());
  if (auto f = a.get("json-out"))
    cli::write_file_atomic(
        *f, Json{{"source", "infraplan-bench attention --model " + c.name},
                 {"device", gpu.name},
                 {"driver", gpu.driver},
                 {"heads", H},
                 {"kv_heads", KVH},
                 {"prefill_kernel", prefill_kernel_name(ran)},
                 {"decode_tile_tokens", calib::kDecodeTileTokens},
                 {"flush", l2_flush_name(flush)},
                 {"method", std::string(flush == L2Flush::Read
                                            ? "each sample reads 2 x L2 of other data (lines left clean)"
                                            : "each sample overwrites 2 x L2 (lines left dirty)") +
                                " then runs the kernel; the sample without the kernel is subtracted; CUDA "
                                "graph replays, median (events)"},
                 {"paged_prefill", jp},
                 {"paged_decode", jd}}
                    .dump(2) +
                "\n");
  return 0;
}

}  // namespace infraplan::engine
