#include "planner/train_space.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "common/error.hpp"

namespace infraplan::plan {

std::int64_t Rejections::total() const {
  std::int64_t t = 0;
  for (const auto& [k, v] : counts) t += v;
  return t;
}

namespace {

std::vector<int> divisors_upto(std::int64_t n, int cap) {
  std::vector<int> d;
  for (std::int64_t i = 1; i <= n && i <= cap; ++i)
    if (n % i == 0) d.push_back(int(i));
  return d;
}

// Shard-group sizes to try with ZeRO stage `zero`: all of DP (FSDP / ZeRO), and with HSDP the
// powers of two from 2 below dp that divide it (not with expert parallelism).
std::vector<int> shard_sizes(int dp, int zero, int ep, bool hsdp) {
  std::vector<int> out = {dp};
  if (!hsdp || zero == 0 || ep > 1) return out;
  for (int d = 2; d < dp; d *= 2)
    if (dp % d == 0) out.push_back(d);
  return out;
}

std::vector<int> powers_of_two_upto(int cap) {
  std::vector<int> d;
  for (int i = 1; i <= cap; i *= 2) d.push_back(i);
  return d;
}

// The reason family of a validation message: its text up to the first digit-bearing value, so
// "training.tp=3 does not divide heads=32" and "training.tp=6 ..." count together.
std::string family(const std::string& msg) {
  std::string out;
  bool in_number = false;
  for (char ch : msg) {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      if (!in_number) out += 'N';
      in_number = true;
    } else {
      in_number = false;
      out += ch;
    }
    if (out.size() > 90) break;
  }
  return out;
}

}  // namespace

void take_software(strat::TrainingConfig& layout, const strat::TrainingConfig& software) {
  layout.framework = software.framework;
  layout.attention_kernel = software.attention_kernel;
  layout.flash_attention = software.flash_attention;
  layout.host_dispatch = software.host_dispatch;
  layout.dp_buckets = software.dp_buckets;
  layout.dp_bucket_mib = software.dp_bucket_mib;
  layout.moe_imbalance = software.moe_imbalance;
}

void enumerate_training(const model::ModelSpec& m, const hw::Cluster& c, const TrainSearch& s,
                        const std::function<void(FeasibleLayout&&)>& visit, Rejections& rejected) {
  if (s.global_batch <= 0) throw Error("plan train: --global-batch must be > 0");
  if (s.seq_len <= 0) throw Error("plan train: --seq must be > 0");
  const int n = c.total_gpus();
  // TP sizes: powers of two dividing heads (the kernels' and NCCL's sweet spots).
  std::vector<int> tps;
  for (int t : powers_of_two_upto(std::min(s.max_tp, n)))
    if (m.heads % t == 0) tps.push_back(t);
  std::vector<int> pps = divisors_upto(m.layers, std::min(s.max_pp, n));
  std::vector<int> cps = powers_of_two_upto(std::min(s.max_cp, n));
  std::vector<int> eps = {1};
  if (m.moe.enabled()) eps = divisors_upto(m.moe.experts, n);
  // Op-level selective checkpointing is an eager PyTorch policy: tried beside the others where the
  // job's software names such a framework (pytorch-eager, transformers) for dense blocks with fused
  // attention (training_config.cpp refuses it elsewhere).
  std::vector<model::Recompute> recompute = s.recompute;
  if (strat::selective_op_refusal(m, s.software.framework, s.software.flash_attention).empty() &&
      std::find(recompute.begin(), recompute.end(), model::Recompute::SelectiveOp) == recompute.end())
    recompute.push_back(model::Recompute::SelectiveOp);

  for (int tp : tps)
    for (int pp : pps)
      for (int cp : cps) {
        std::int64_t tpc = std::int64_t(tp) * pp * cp;
        if (n % tpc != 0) continue;  // not a factorisation of the cluster: not a layout at all
        int dp = int(n / tpc);
        if (cp > 1 && s.seq_len % (2 * cp) != 0) {
          rejected.add("cp does not split the sequence evenly (seq_len % 2cp != 0)");
          continue;
        }
        if (cp > 1 && s.seq_len / cp < 1024) {
          rejected.add("cp leaves fewer than 1024 tokens per rank (attention too small to split)");
          continue;
        }
        if (s.global_batch % dp != 0) {
          rejected.add("global batch not divisible by dp");
          continue;
        }
        for (int ep : eps) {
          if ((std::int64_t(dp) * cp) % ep != 0) continue;
          for (std::int64_t mb : s.micro_batches) {
            if (s.global_batch % (std::int64_t(dp) * mb) != 0) {
              rejected.add("global batch not divisible by dp x micro_batch");
              continue;
            }
            std::int64_t micro = s.global_batch / (std::int64_t(dp) * mb);
            // Schedules: 1F1B (and GPipe on request) for pp > 1; interleaved with each v.
            struct Sched {
              strat::PpSchedule kind;
              int v;
            };
            std::vector<Sched> scheds;
            if (pp == 1) {
              scheds.push_back({strat::PpSchedule::OneFOneB, 1});
            } else {
              scheds.push_back({strat::PpSchedule::OneFOneB, 1});
              if (s.include_gpipe) scheds.push_back({strat::PpSchedule::GPipe, 1});
              if (s.include_zero_bubble) {
                scheds.push_back({strat::PpSchedule::ZBH1, 1});
                if (pp % 2 == 0 && micro % 2 == 0 && micro >= 2 * pp)
                  scheds.push_back({strat::PpSchedule::DualPipe, 1});
              }
              for (int v : s.virtual_stages) {
                if (m.layers % (std::int64_t(pp) * v) != 0) continue;
                if (micro % pp != 0) {
                  rejected.add("interleaved schedule needs micro-batches divisible by pp");
                  continue;
                }
                scheds.push_back({strat::PpSchedule::Interleaved, v});
              }
            }
            for (const auto& sc : scheds)
              for (auto prec : s.precisions)
                for (auto rc : recompute)
                  for (int zero : s.zero_stages)
                    for (int shard : shard_sizes(dp, zero, ep, s.include_hsdp)) {
                    if (zero > 0 && dp * cp == 1) continue;  // nothing to shard over: same as zero 0
                    if (zero >= 2 && pp > 1) {
                      // Megatron and DeepSpeed do not combine pipeline parallelism with
                      // sharded gradients (every micro-batch would re-shard them).
                      if (shard == dp) rejected.add("ZeRO-2/3 with pipeline parallelism (unsupported combination)");
                      continue;
                    }
                    strat::TrainingConfig t;
                    t.seq_len = s.seq_len;
                    t.global_batch = s.global_batch;
                    t.micro_batch = mb;
                    t.tp = tp;
                    t.pp = pp;
                    t.dp = dp;
                    t.cp = cp;
                    t.ep = ep;
                    t.sp = tp > 1;
                    t.zero = zero;
                    t.dp_shard = shard;
                    t.pp_schedule = sc.kind;
                    t.pp_virtual_stages = sc.v;
                    t.recompute = rc;
                    t.precision = prec;
                    t.optimizer = s.optimizer;
                    take_software(t, s.software);
                    FeasibleLayout f;
                    try {
                      f.warnings = strat::resolve_training(t, m, c).items;
                    } catch (const Error& e) {
                      rejected.add(family(e.what()));
                      continue;
                    }
                    auto L = strat::training_memory_peak(m, c, t);
                    if (!L.fits()) {
                      rejected.add("does not fit in GPU memory");
                      continue;
                    }
                    f.cfg = t;
                    f.peak_bytes = L.total_bytes();
                    visit(std::move(f));
                    }
          }
        }
      }
}

}  // namespace infraplan::plan
