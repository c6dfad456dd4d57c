// Closed-form training estimate (see training_sim.hpp): one layer's ops per stage, priced and
// run through a tiny in-order list schedule, then the pipeline schedule's bubble and the
// exposed part of the data-parallel synchronisation.
#include <algorithm>

#include <map>
#include <optional>
#include <tuple>
#include "hardware/clocked_cost_model.hpp"

#include "simulator/training_sim.hpp"
#include "strategies/backward_split.hpp"
#include "strategies/pipeline_layout.hpp"
#include "strategies/training_schedule.hpp"

namespace infraplan::sim::train {

coll::CollectiveOp to_coll(strat::CommOp c);

namespace {

using strat::GroupKind;
using strat::OpCategory;
using strat::OpTemplate;

struct Priced {
  double span = 0;      ///< time of the template run alone (streams overlapping)
  double compute = 0;   ///< compute-category kernels
  double recompute = 0;
  double comm[5] = {0, 0, 0, 0, 0};  ///< comm time per kind (tp, cp, ep, pp, dp)
};

class Pricer {
 public:
  Pricer(const strat::TrainingConfig& t, const coll::CommModel& comm, CommSecondsCache* shared)
      : t_(t), layout_(t), comm_(comm), shared_(shared) {}

  double comm_seconds(strat::CommOp op, double bytes, GroupKind kind, int rank) {
    if (bytes <= 0) return 0;
    auto key = std::make_tuple(int(op), bytes, int(kind), rank);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    // The groups follow from the degrees alone (strat::RankLayout::group).
    const CommSecondsCache::Key sk{t_.tp, t_.cp, t_.dp, t_.pp, t_.ep, t_.dp_shard, int(kind), int(op), bytes, rank};
    if (shared_)
      if (const double* s = shared_->find(sk)) {
        cache_.emplace(key, *s);
        return *s;
      }
    std::vector<int> g = layout_.group(kind, rank);
    double s = g.size() > 1 ? comm_.estimate(to_coll(op), bytes, g).seconds : 0;
    cache_.emplace(key, s);
    if (shared_) shared_->put(sk, s);
    return s;
  }

  Priced run(const std::vector<OpTemplate>& tpl, int rank) {
    Priced p;
    std::vector<double> end(tpl.size(), 0);
    double stream_free[strat::kStreams] = {};
    for (std::size_t i = 0; i < tpl.size(); ++i) {
      const auto& o = tpl[i];
      double ready = 0;
      if (o.explicit_deps) {
        for (int d : o.deps)
          if (d >= 0) ready = std::max(ready, end[std::size_t(d)]);
      } else if (i > 0) {
        ready = end[i - 1];
      }
      double d = o.seconds;
      if (o.group != GroupKind::None) d = comm_seconds(o.comm, o.bytes, o.group, rank);
      const double start = std::max(ready, stream_free[int(o.stream)]);
      end[i] = start + d;
      stream_free[int(o.stream)] = end[i];
      p.span = std::max(p.span, end[i]);
      if (strat::is_comm(o.category)) p.comm[int(o.category) - int(OpCategory::CommTP)] += d;
      else if (o.category == OpCategory::Recompute) p.recompute += d;
      else p.compute += d;
    }
    return p;
  }

  const strat::RankLayout& layout() const { return layout_; }

 private:
  const strat::TrainingConfig& t_;
  strat::RankLayout layout_;
  const coll::CommModel& comm_;
  CommSecondsCache* shared_;
  std::map<std::tuple<int, double, int, int>, double> cache_;
};

void add(Priced& a, const Priced& b, double times = 1) {
  a.span += times * b.span, a.compute += times * b.compute, a.recompute += times * b.recompute;
  for (int k = 0; k < 5; ++k) a.comm[k] += times * b.comm[k];
}

}  // namespace

namespace {

TrainingEstimate estimate_once(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                               const hw::CostModel& cost, const coll::CommModel& comm, CommSecondsCache* shared) {
  TrainingEstimate e;
  const strat::OpContext ctx(m, t, cost);
  Pricer pr(t, comm, shared);
  const int p = t.pp;
  const strat::PipelineLayout pl = strat::pipeline_layout(m, t);
  const int slots = pl.slots();
  const bool dual = pl.dualpipe();
  const bool split = t.pp_schedule == strat::PpSchedule::ZBH1 || dual;
  const bool hsdp = t.zero >= 1 && t.dp_shard > 0 && t.dp_shard < t.dp;
  const GroupKind shard_group = hsdp ? GroupKind::DPShard : GroupKind::DP;
  const double mb = double(t.micro_batches());
  const double pg = strat::param_gather_bytes(t), gb = strat::grad_comm_bytes(t.precision);
  const auto dense_f = strat::layer_forward_ops(ctx, 0), dense_b = strat::layer_backward_ops(ctx, 0);
  const bool moe = m.moe.enabled();
  const auto moe_f = moe ? strat::layer_forward_ops(ctx, m.layers - 1) : dense_f;
  const auto moe_b = moe ? strat::layer_backward_ops(ctx, m.layers - 1) : dense_b;
  // recompute_layers: the layers a chunk does not checkpoint run the plain layer's ops.
  // (Built only then: without one no layer is plain and these stay empty.)
  const bool partial = strat::partial_recompute(t);
  const strat::TrainingConfig plain_t = strat::without_recompute(t);
  std::optional<strat::OpContext> plain_ctx;
  std::vector<strat::OpTemplate> plain_f, plain_b, plain_moe_f, plain_moe_b;
  if (partial) {
    plain_ctx.emplace(m, plain_t, cost);
    plain_f = strat::layer_forward_ops(*plain_ctx, 0), plain_b = strat::layer_backward_ops(*plain_ctx, 0);
    if (moe)
      plain_moe_f = strat::layer_forward_ops(*plain_ctx, m.layers - 1),
      plain_moe_b = strat::layer_backward_ops(*plain_ctx, m.layers - 1);
  }
  const auto emb_f = strat::embedding_forward_ops(ctx), emb_b = strat::embedding_backward_ops(ctx);
  const auto head_f = strat::head_forward_ops(ctx), head_b = strat::head_backward_ops(ctx);
  // Weight-gradient parts (zero-bubble schedules): their time per template.
  strat::SplitBackward dense_s, moe_s, emb_s, head_s, plain_s, plain_moe_s;
  if (split) {
    dense_s = strat::split_backward(dense_b), emb_s = strat::split_backward(emb_b);
    head_s = strat::split_backward(head_b);
    moe_s = moe ? strat::split_backward(moe_b) : dense_s;
    if (partial) plain_s = strat::split_backward(plain_b);
    if (partial && moe) plain_moe_s = strat::split_backward(plain_moe_b);
  }

  double t_max = 0;
  int slow = 0;
  std::vector<Priced> per_mb(static_cast<std::size_t>(p));
  std::vector<double> w_of(static_cast<std::size_t>(p), 0.0), f_of(static_cast<std::size_t>(p), 0.0);
  std::vector<double> host_wait(static_cast<std::size_t>(p), 0.0);
  std::vector<double> z3(static_cast<std::size_t>(p), 0.0), dp_exposed(static_cast<std::size_t>(p), 0.0), opt(static_cast<std::size_t>(p), 0.0),
      ddp_copy(static_cast<std::size_t>(p), 0.0);
  for (int s = 0; s < p; ++s) {
    const int rank = pr.layout().rank({0, 0, 0, s});
    Priced f, b;
    double w = 0;  // weight-gradient seconds (split schedules)
    double host = 0, tensors = 0;  // host-dispatch seconds per micro-batch; parameter tensors
    strat::RankParams params;
    double ag_total = 0, ag_first = 0, grad_dense = 0, grad_expert = 0;
    int layers = 0;
    for (int slot = 0; slot < slots; ++slot) {
      const int k = pl.chunk_at(s, slot);
      const auto r = pl.layers(k);
      if (pl.holds_embedding(k)) {
        add(f, pr.run(emb_f, rank)), add(b, pr.run(emb_b, rank));
        if (split) w += pr.run(emb_s.weight, rank).span;
        host += strat::host_seconds(ctx, emb_f, true, false) + strat::host_seconds(ctx, emb_b, false, false);
        tensors += strat::param_tensors_of_embedding(m);
      }
      if (pl.holds_head(k)) {
        add(f, pr.run(head_f, rank)), add(b, pr.run(head_b, rank));
        if (split) w += pr.run(head_s.weight, rank).span;
        host += strat::host_seconds(ctx, head_f, true, false) + strat::host_seconds(ctx, head_b, false, false);
        tensors += strat::param_tensors_of_head(m, t);
      }
      std::int64_t n_moe = 0, n_plain = 0, n_plain_moe = 0;  // n_plain*: not checkpointed
      for (std::int64_t l = r.first; l < r.first + r.count; ++l) {
        auto lp = strat::layer_params_on_rank(m, t, l);
        if (l == 0) lp.dense += strat::embedding_params_on_rank(m, t).dense;
        if (l == m.layers - 1) lp.dense += strat::head_params_on_rank(m, t).dense;
        params.dense += lp.dense, params.expert += lp.expert;
        const double ag = pr.comm_seconds(strat::CommOp::AllGather, lp.total() * pg, shard_group, rank);
        if (layers == 0) ag_first = ag;
        ag_total += ag;
        ++layers;
        const bool lm = moe && l >= m.moe.dense_layers;
        const bool plain = partial && !strat::layer_checkpointed(t, l - r.first);
        if (lm)
          ++(plain ? n_plain_moe : n_moe);
        else if (plain)
          ++n_plain;
        const strat::OpContext& lc = plain ? *plain_ctx : ctx;
        host += strat::host_seconds(lc, lm ? (plain ? plain_moe_f : moe_f) : (plain ? plain_f : dense_f),
                                    true, true) +
                strat::host_seconds(lc, lm ? (plain ? plain_moe_b : moe_b) : (plain ? plain_b : dense_b),
                                    false, true);
        tensors += strat::param_tensors_of_layer(m, t, l);
      }
      if (ctx.host.pass) host += ctx.host.pass->first + ctx.host.pass->second;  // one compiled call each way
      const double n_dense = double(r.count - n_moe - n_plain - n_plain_moe);
      auto layers_of = [&](const std::vector<strat::OpTemplate>& lf, const std::vector<strat::OpTemplate>& lb,
                           const strat::SplitBackward& ls, double n) {
        if (n <= 0) return;
        add(f, pr.run(lf, rank), n), add(b, pr.run(lb, rank), n);
        if (split) w += n * pr.run(ls.weight, rank).span;
      };
      layers_of(dense_f, dense_b, dense_s, n_dense);
      layers_of(moe_f, moe_b, moe_s, double(n_moe));
      layers_of(plain_f, plain_b, plain_s, double(n_plain));
      layers_of(plain_moe_f, plain_moe_b, plain_moe_s, double(n_plain_moe));
    }
    const strat::CommOp grad_op = t.zero >= 1 ? strat::CommOp::ReduceScatter : strat::CommOp::AllReduce;
    grad_dense = pr.comm_seconds(grad_op, params.dense * gb, shard_group, rank);
    // HSDP: the reduced shard is all-reduced across the replicas once per iteration.
    const double replica = hsdp ? pr.comm_seconds(strat::CommOp::AllReduce,
                                                  params.dense * gb / (double(t.dp_shard) * t.cp),
                                                  GroupKind::DPReplica, rank)
                                : 0.0;
    if (t.zero != 3) grad_dense += replica;
    grad_expert = pr.comm_seconds(grad_op, params.expert * gb, GroupKind::ExpertDP, rank);
    double grad = grad_dense + grad_expert;
    const double shard = t.zero >= 1 ? double(hsdp ? t.dp_shard : t.dp) * t.cp : 1.0;
    if (dual)  // both copies of a stage sum their gradients (pipeline_layout.hpp)
      grad += pr.comm_seconds(strat::CommOp::AllReduce, params.total() / shard * gb, GroupKind::PPMirror, rank);
    const double buckets = std::max(1.0, std::ceil(params.total() / t.bucket_params(gb)));
    if (t.dp_buckets == strat::DpBuckets::Copy && t.zero == 0 && t.dp * t.cp > 1) {
      // PyTorch DDP's bucket copy on the compute stream of the last backward: copy in and divide
      // the DP size (4 B moved per gradient byte), copy back out before the optimizer (2).
      ddp_copy[std::size_t(s)] = cost.memory_bound(params.total() * gb * 4).seconds +
                                 cost.memory_bound(params.total() * gb * 2).seconds;
    }
    double z3_extra = 0;
    // A DualPipe rank runs each micro-batch through one of its two chunks: per micro-batch it
    // does half of what both chunks hold.
    const double per = dual ? 0.5 : 1.0;
    if (t.zero != 3) {
      double exposed = std::max(grad / buckets, grad - per * b.span * (1 - 1 / buckets));
      if (t.zero >= 1 && s == 0) exposed += std::max(ag_first, ag_total - per * f.span * (1 - 1 / buckets));
      dp_exposed[std::size_t(s)] = exposed;
    } else if (replica > 0) {
      // ZeRO-3 reduce-scatters every micro-batch (paced below); the replicas' all-reduce follows
      // the last one's buckets.
      dp_exposed[std::size_t(s)] = std::max(replica / buckets, replica - per * b.span * (1 - 1 / buckets));
    }
    const double eshard = t.zero >= 1 ? double(t.dp) * t.cp / std::max(1, t.ep) : 1.0;
    opt[std::size_t(s)] = strat::optimizer_step_seconds(t, cost, params.dense / shard + params.expert / eshard);
    opt[std::size_t(s)] = std::max(opt[std::size_t(s)], strat::host_optimizer_seconds(ctx, tensors));
    Priced both = f;
    add(both, b);
    if (dual) {
      Priced half;
      add(half, both, 0.5);
      both = half;
      host *= 0.5, w *= 0.5;
    }
    // Eager host dispatch: a micro-batch takes at least the host's time to issue it.
    host_wait[std::size_t(s)] = std::max(0.0, host - both.span);
    both.span += host_wait[std::size_t(s)];
    if (t.zero == 3) {
      // Per micro-batch the gather stream carries every layer twice (forward and backward) and
      // runs ahead of compute; the reduce-scatters share the DP stream. The slower stream sets
      // the pace; the first layer's gather is never hidden.
      const double paced = std::max({both.span, 2 * ag_total, grad}) + ag_first;
      z3_extra = paced - both.span;
      both.span = paced;
    }
    z3[std::size_t(s)] = z3_extra;
    per_mb[std::size_t(s)] = both;
    w_of[std::size_t(s)] = w;
    f_of[std::size_t(s)] = per * f.span;
    if (both.span > t_max) t_max = both.span, slow = s;
  }
  double t_pp = 0;
  if (p > 1) {
    const double act = double(ctx.tokens) * double(m.hidden) * ctx.act_bytes / (t.sp ? t.tp : 1);
    t_pp = pr.comm_seconds(strat::CommOp::SendRecv, act, GroupKind::PPNext, pr.layout().rank({0, 0, 0, 0}));
  }
  // The schedule's published bubble on the slowest stage's pass times (training_schedule.hpp).
  strat::PassTimes pt;
  if (split) {
    // Per micro-batch (and chunk, DualPipe): forward, weight gradient, the rest of the time as B.
    pt.f = f_of[std::size_t(slow)];
    pt.w = w_of[std::size_t(slow)];
    pt.b = std::max(0.0, t_max - pt.f - pt.w);
  } else {
    pt.f = t_max;
  }
  const int v = t.pp_schedule == strat::PpSchedule::Interleaved ? t.pp_virtual_stages : 1;
  const double bubble = p > 1 ? strat::schedule_bubble_seconds(t.pp_schedule, p, v, pt) : 0;
  const double pp_exposed = p > 1 ? 2.0 * (p - 1) * t_pp : 0;
  const double steady = mb * t_max;
  const double tail = dp_exposed[0] + opt[std::size_t(slow)] + ddp_copy[std::size_t(slow)];
  e.iteration_time_s = steady + bubble + pp_exposed + tail;
  e.tokens_per_s = double(t.global_batch) * double(t.seq_len) / e.iteration_time_s;
  const double model_flops =
      model::training_flops_per_token(m, t.seq_len) * double(t.global_batch) * double(t.seq_len);
  const double peak = peak_flops_of(c.gpu, t.precision);
  e.mfu = model_flops / (double(c.total_gpus()) * e.iteration_time_s * peak);
  const Priced& w = per_mb[std::size_t(slow)];
  e.hfu = w.compute > 0 ? e.mfu * (w.compute + w.recompute) / w.compute : e.mfu;
  auto ledger = strat::training_memory_peak(m, c, t);
  e.peak_bytes = ledger.total_bytes();
  e.fits = ledger.fits();
  auto& bd = e.breakdown;
  bd.compute = mb * w.compute + ddp_copy[std::size_t(slow)];
  bd.recompute = mb * w.recompute;
  bd.optimizer = opt[std::size_t(slow)];
  const double comm_sum = w.comm[0] + w.comm[1] + w.comm[2];
  bd.host_wait = mb * host_wait[std::size_t(slow)];
  const double exposed_in_layers =
      std::max(0.0, w.span - z3[std::size_t(slow)] - host_wait[std::size_t(slow)] - w.compute - w.recompute);
  const char* kinds[3] = {"tp", "cp", "ep"};
  for (int k = 0; k < 3; ++k)
    if (w.comm[k] > 0 && comm_sum > 0) bd.exposed_comm[kinds[k]] = mb * exposed_in_layers * w.comm[k] / comm_sum;
  if (pp_exposed > 0) bd.exposed_comm["pp"] = pp_exposed;
  if (dp_exposed[0] + mb * z3[std::size_t(slow)] > 0) bd.exposed_comm["dp"] = dp_exposed[0] + mb * z3[std::size_t(slow)];
  bd.bubble = bubble;
  return e;
}

}  // namespace

TrainingEstimate estimate_training(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                                   const hw::CostModel& cost, const coll::CommModel& comm, CommSecondsCache* shared,
                                   bool sustained_clock) {
  const hw::PowerModel* pm = sustained_clock ? cost.power_model() : nullptr;
  if (!pm || !(cost.reference_clock_mhz() > 0)) return estimate_once(m, c, t, cost, comm, shared);
  // As simulate_training: priced at the top clock for the demand, then at the sustained clock. The
  // closed form knows its matmul FLOPs (HFU) but not its memory-bound bytes: its demand counts
  // matmul work only (the event simulation counts both).
  const hw::ClockedCostModel top(cost, pm->max_clock_mhz());
  const TrainingEstimate at_top = estimate_once(m, c, t, top, comm, shared);
  const double flops = at_top.hfu * peak_flops_of(c.gpu, t.precision) * at_top.iteration_time_s;
  const StepClock sc = step_clock(*pm, cost.reference_clock_mhz(), flops, t.precision == strat::Precision::FP8Mixed,
                                  0.0, at_top.iteration_time_s);
  const hw::ClockedCostModel at(cost, sc.mhz);
  TrainingEstimate e = estimate_once(m, c, t, at, comm, shared);
  e.clock = sc;
  return e;
}

}  // namespace infraplan::sim::train
