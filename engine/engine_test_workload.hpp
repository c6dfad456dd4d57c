#pragma once
// The workload of the CUDA engine's correctness tests, CUDA-free so that CI can check that it
// drives every path the GPU test is meant to cover (chunked prefill, prefix-cache hits,
// copy-on-write, preemption by recompute, mixed prefill/decode steps) with a stand-in backend.
#include <functional>
#include <vector>

#include "simulator/serving_engine.hpp"
#include "simulator/serving_random.hpp"

namespace infraplan::engine::test_workload {

/// 12 requests of 40–139 prompt tokens (two thirds behind one of two 48-token system prompts),
/// 8–31 outputs; then a 64-token prompt made only of a system prompt, two fillers and the same
/// prompt again (its last block is shared and recomputed: copy-on-write).
inline std::vector<sim::serve::Request> requests(std::uint64_t seed) {
  std::vector<sim::serve::Request> v;
  sim::serve::Rng rng(seed);
  for (int i = 0; i < 16; ++i) {
    sim::serve::Request r;
    r.id = i;
    r.prompt_tokens = rng.uniform_int(40, 139);
    r.output_tokens = rng.uniform_int(8, 31);
    if (i == 12 || i == 15) {
      r.content_key = 2000;
      r.shared_tokens = r.prompt_tokens = 64;
      r.output_tokens = 24;
    } else if (i % 3 != 2) {
      r.content_key = 1000 + std::uint64_t(i % 2);
      r.shared_tokens = 48;
      r.prompt_tokens += 48;
    }
    v.push_back(r);
  }
  return v;
}

/// Engine settings of the tests: 6 sequences, 64 tokens per step, prefix caching, no watermark.
inline sim::serve::EngineOptions options() {
  sim::serve::EngineOptions eo;
  eo.sched.max_num_seqs = 6;
  eo.sched.max_batched_tokens = 64;
  eo.prefix_cache = true;
  eo.watermark = 0;
  return eo;
}
constexpr int kNumBlocks = 28;  ///< KV blocks: tight enough to force preemption

/// The fp8 test's settings: the same requests and limits (chunked prefill, mixed steps, decode
/// graphs) without prefix caching and with KV for every sequence (no preemption), so that every
/// (sequence, position) is computed in exactly one step: the fp8 reference replays each row with
/// the activation scales of that step, which a cached or recomputed row would not have.
inline sim::serve::EngineOptions fp8_options() {
  sim::serve::EngineOptions eo = options();
  eo.prefix_cache = false;
  return eo;
}
constexpr int kFp8NumBlocks = 160;  ///< KV blocks of the fp8 test: 6 sequences of ≤ 14 blocks fit

struct DriveStats {
  std::int64_t steps = 0, mixed_steps = 0;
};

/// Runs `reqs` through `e` (two new requests every third step) until all finished; calls
/// `finished` for each before forgetting it.
inline DriveStats drive(sim::serve::ServingEngine& e, const std::vector<sim::serve::Request>& reqs,
                        const std::function<void(sim::serve::Sequence&)>& finished) {
  DriveStats d;
  sim::serve::LogHistogram itl;
  double t = 0;
  std::size_t next = 0, done = 0;
  while (done < reqs.size() && d.steps < 100000) {
    if (d.steps % 3 == 0)
      for (int k = 0; k < 2 && next < reqs.size(); ++k) e.add(reqs[next++]);
    ++d.steps;
    auto info = e.start_step(t);
    if (!info) continue;
    if (info->prefill_tokens > 0 && info->prefill_tokens < info->tokens) ++d.mixed_steps;
    t += info->duration_s > 0 ? info->duration_s : 1e-3;
    for (sim::serve::Sequence* s : e.finish_step(t, itl)) {
      finished(*s);
      e.forget(s->id());
      ++done;
    }
    e.check_invariants();
  }
  return d;
}

}  // namespace infraplan::engine::test_workload
