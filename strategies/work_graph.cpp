#include "strategies/work_graph.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "hardware/framework_costs.hpp"
#include "common/error.hpp"
#include "model/model_math.hpp"
#include "strategies/backward_split.hpp"
#include "strategies/pipeline_layout.hpp"
#include "strategies/training_schedule.hpp"

namespace infraplan::strat {

RankCoord RankLayout::coord(int rank) const {
  RankCoord c;
  c.tp = rank % t_.tp;
  rank /= t_.tp;
  c.cp = rank % t_.cp;
  rank /= t_.cp;
  c.dp = rank % t_.dp;
  c.pp = rank / t_.dp;
  return c;
}

std::vector<int> RankLayout::group(GroupKind kind, int rank) const {
  const RankCoord me = coord(rank);
  std::vector<int> g;
  auto with = [&](auto f) {
    RankCoord c = me;
    f(c);
    return this->rank(c);
  };
  switch (kind) {
    case GroupKind::None: g.push_back(rank); break;
    case GroupKind::TP:
      for (int i = 0; i < t_.tp; ++i) g.push_back(with([&](RankCoord& c) { c.tp = i; }));
      break;
    case GroupKind::CP:
      for (int i = 0; i < t_.cp; ++i) g.push_back(with([&](RankCoord& c) { c.cp = i; }));
      break;
    case GroupKind::CPNext:
      g = {rank, with([&](RankCoord& c) { c.cp = (c.cp + 1) % t_.cp; })};
      break;
    case GroupKind::DP:
      for (int d = 0; d < t_.dp; ++d)
        for (int i = 0; i < t_.cp; ++i) g.push_back(with([&](RankCoord& c) { c.dp = d, c.cp = i; }));
      break;
    case GroupKind::EP:
    case GroupKind::ExpertDP: {
      // (cp, dp) flattened; EP groups are ep consecutive indices, expert-DP groups stride ep.
      const int n = t_.cp * t_.dp, idx = me.cp + t_.cp * me.dp, ep = std::max(1, t_.ep);
      auto at = [&](int j) { return with([&](RankCoord& c) { c.cp = j % t_.cp, c.dp = j / t_.cp; }); };
      if (kind == GroupKind::EP)
        for (int j = idx - idx % ep; j < idx - idx % ep + ep; ++j) g.push_back(at(j));
      else
        for (int j = idx % ep; j < n; j += ep) g.push_back(at(j));
      break;
    }
    case GroupKind::PPNext:
      g = {rank, with([&](RankCoord& c) { c.pp = (c.pp + 1) % t_.pp; })};
      break;
    case GroupKind::PPPrev:
      g = {rank, with([&](RankCoord& c) { c.pp = (c.pp + t_.pp - 1) % t_.pp; })};
      break;
    case GroupKind::DPShard: {
      const int shard = t_.dp_shard > 0 ? t_.dp_shard : t_.dp, base = me.dp - me.dp % shard;
      for (int d = base; d < base + shard; ++d)
        for (int i = 0; i < t_.cp; ++i) g.push_back(with([&](RankCoord& c) { c.dp = d, c.cp = i; }));
      break;
    }
    case GroupKind::DPReplica: {
      const int shard = t_.dp_shard > 0 ? t_.dp_shard : t_.dp;
      for (int d = me.dp % shard; d < t_.dp; d += shard) g.push_back(with([&](RankCoord& c) { c.dp = d; }));
      break;
    }
    case GroupKind::PPMirror: {
      const int other = t_.pp - 1 - me.pp;
      g = {rank};
      if (other != me.pp) g.push_back(with([&](RankCoord& c) { c.pp = other; }));
      std::sort(g.begin(), g.end());
      break;
    }
  }
  return g;
}

namespace {

struct Templates {
  std::vector<OpTemplate> dense_f, dense_b, moe_f, moe_b, emb_f, emb_b, head_f, head_b;
  // Zero-bubble schedules: the backward's input-gradient (B) and weight-gradient (W) parts.
  SplitBackward dense_s, moe_s, emb_s, head_s;
};

class GraphBuilder {
 public:
  GraphBuilder(const model::ModelSpec& m, const hw::Cluster& c, const TrainingConfig& t,
               const hw::CostModel& cost, const WorkGraphOptions& o)
      : m_(m),
        t_(t),
        o_(o),
        layout_(t),
        pl_(pipeline_layout(m, t)),
        ctx_(m, t, cost, o.cp_all_to_all),
        cost_(cost),
        plain_t_(without_recompute(t)) {
    (void)c;
    const bool split = t.pp_schedule == PpSchedule::ZBH1 || t.pp_schedule == PpSchedule::DualPipe;
    layer_templates(ctx_, split, tp_);
    // recompute_layers: the layers a chunk does not checkpoint run the plain layer's ops (and
    // their host costs).
    if (partial_recompute(t)) {
      plain_ctx_.emplace(m, plain_t_, cost, o.cp_all_to_all);
      layer_templates(*plain_ctx_, split, plain_tp_);
      plain_.resize(std::size_t(m.layers));
      for (std::int64_t l = 0; l < m.layers; ++l)
        plain_[std::size_t(l)] = !layer_checkpointed(t, pl_.position_in_chunk(l));
    }
    tp_.emb_f = embedding_forward_ops(ctx_);
    tp_.emb_b = embedding_backward_ops(ctx_);
    tp_.head_f = head_forward_ops(ctx_);
    tp_.head_b = head_backward_ops(ctx_);
    if (split) {
      tp_.emb_s = split_backward(tp_.emb_b);
      tp_.head_s = split_backward(tp_.head_b);
    }
    v_ = pl_.slots();
    mb_ = t.micro_batches();
    hsdp_ = t.zero >= 1 && t.dp_shard > 0 && t.dp_shard < t.dp;
    per_op_host_ = ctx_.host.enabled && is_eager(ctx_.framework);
  }

  WorkGraph build() {
    g_.exact = o_.exact;
    g_.micro_batches = mb_;
    g_.model_flops = model::training_flops_per_token(m_, t_.seq_len) * double(t_.global_batch) * double(t_.seq_len);
    if (const hw::Profile* p = hw::profile_of(cost_)) g_.comm_slowdown = p->gemm_slowdown_under_comm;
    const int n = t_.gpus();
    if (o_.exact) {
      for (int r = 0; r < n; ++r) g_.lanes.push_back({r, layout_.coord(r).pp, 1});
    } else {
      for (int s = 0; s < t_.pp; ++s) g_.lanes.push_back({layout_.rank({0, 0, 0, s}), s, t_.tp * t_.cp * t_.dp});
    }
    const std::size_t keys = g_.lanes.size() * std::size_t(mb_) * std::size_t(v_) * 2;
    first_.assign(keys, -1);
    send_.assign(keys, -1);
    for (int lane = 0; lane < int(g_.lanes.size()); ++lane) build_lane(lane);
    link_pipeline();
    return std::move(g_);
  }

 private:
  std::size_t key(int lane, bool fwd, std::int64_t mb, int chunk) const {
    return ((std::size_t(lane) * std::size_t(mb_) + std::size_t(mb)) * std::size_t(v_) + std::size_t(chunk)) * 2 +
           (fwd ? 0 : 1);
  }
  int lane_of_stage(int lane, int stage) const {
    if (!o_.exact) return stage;
    RankCoord c = layout_.coord(g_.lanes[std::size_t(lane)].rank);
    c.pp = stage;
    return layout_.rank(c);
  }

  int group_id(int lane, GroupKind kind) {
    auto k = std::make_pair(lane, int(kind));
    auto it = lane_groups_.find(k);
    if (it != lane_groups_.end()) return it->second;
    std::vector<int> ranks = layout_.group(kind, g_.lanes[std::size_t(lane)].rank);
    auto [git, inserted] = group_ids_.try_emplace(ranks, int(g_.groups.size()));
    if (inserted) g_.groups.push_back(ranks);
    lane_groups_[k] = git->second;
    return git->second;
  }

  int add(Op op) {
    if (o_.exact && op.group >= 0 && op.comm != CommOp::SendRecv && g_.groups[std::size_t(op.group)].size() > 1) {
      int seq = join_seq_[{op.lane, op.group}]++;
      auto [it, inserted] = join_ids_.try_emplace({op.group, seq}, g_.joins);
      if (inserted) ++g_.joins;
      op.join = it->second;
    }
    g_.ops.push_back(std::move(op));
    return int(g_.ops.size()) - 1;
  }

  /// Instantiates a template; returns the id of its last op (or `entry` when empty).
  /// `host`: per op, the host seconds to issue it (eager frameworks): a host op on the lane's host
  /// stream, which the GPU op waits for — the GPU cannot run a kernel before the host has issued
  /// it, and the host runs ahead of the GPU only as far as its own pace allows.
  int instantiate(const std::vector<OpTemplate>& tpl, int lane, int layer, std::int64_t mb, bool fwd,
                  std::vector<int> entry_deps, int* first_id = nullptr,
                  const std::vector<double>* host = nullptr) {
    std::vector<int> ids(tpl.size());
    for (std::size_t i = 0; i < tpl.size(); ++i) {
      const OpTemplate& t = tpl[i];
      int issued = -1;
      if (host && (*host)[i] > 0) {
        Op h;
        h.name = "host_issue", h.category = OpCategory::Host, h.stream = Stream::Host, h.lane = lane,
        h.layer = layer;
        h.micro_batch = int(mb), h.forward = fwd, h.seconds = (*host)[i];
        issued = add(std::move(h));
      }
      Op op;
      op.name = t.name, op.category = t.category, op.stream = t.stream, op.lane = lane, op.layer = layer;
      op.micro_batch = int(mb), op.forward = fwd, op.seconds = t.seconds, op.flops = t.flops, op.bytes = t.bytes;
      op.comm = t.comm;
      if (t.group != GroupKind::None) op.group = group_id(lane, t.group);
      if (t.explicit_deps) {
        for (int d : t.deps)
          if (d >= 0) op.deps.push_back(ids[std::size_t(d)]);  // -1: a first op's "previous op"
      } else if (i > 0) {
        op.deps.push_back(ids[i - 1]);
      }
      if (i == 0) op.deps.insert(op.deps.end(), entry_deps.begin(), entry_deps.end());
      if (issued >= 0) op.deps.push_back(issued);
      ids[i] = add(std::move(op));
      if (i == 0 && first_id) *first_id = ids[i];
    }
    return tpl.empty() ? (entry_deps.empty() ? -1 : entry_deps.back()) : ids.back();
  }

  bool moe_layer(std::int64_t layer) const { return m_.moe.enabled() && layer >= m_.moe.dense_layers; }

  /// Forward and backward templates of a dense and (for MoE models) an MoE layer.
  void layer_templates(const OpContext& ctx, bool split, Templates& out) const {
    out.dense_f = layer_forward_ops(ctx, 0);
    out.dense_b = layer_backward_ops(ctx, 0);
    if (m_.moe.enabled()) {
      out.moe_f = layer_forward_ops(ctx, m_.layers - 1);
      out.moe_b = layer_backward_ops(ctx, m_.layers - 1);
    }
    if (split) {
      out.dense_s = split_backward(out.dense_b);
      if (m_.moe.enabled()) out.moe_s = split_backward(out.moe_b);
    }
  }

  /// Whether `layer` runs without the recompute (a layer recompute_layers leaves out).
  bool plain_layer(std::int64_t layer) const { return !plain_.empty() && plain_[std::size_t(layer)]; }
  const OpContext& layer_ctx(std::int64_t layer) const { return plain_layer(layer) ? *plain_ctx_ : ctx_; }

  const std::vector<OpTemplate>& layer_tpl(std::int64_t layer, bool fwd, BackwardPart part) const {
    const bool moe = moe_layer(layer);
    const Templates& tp = plain_layer(layer) ? plain_tp_ : tp_;
    if (fwd) return moe ? tp.moe_f : tp.dense_f;
    if (part == BackwardPart::Input) return moe ? tp.moe_s.input : tp.dense_s.input;
    if (part == BackwardPart::Weight) return moe ? tp.moe_s.weight : tp.dense_s.weight;
    return moe ? tp.moe_b : tp.dense_b;
  }
  const std::vector<OpTemplate>& part_of(const std::vector<OpTemplate>& full, const SplitBackward& s,
                                         BackwardPart part) const {
    return part == BackwardPart::Input ? s.input : part == BackwardPart::Weight ? s.weight : full;
  }

  RankParams params_of(std::int64_t layer) const {
    RankParams p = layer_params_on_rank(m_, t_, layer);
    if (layer == 0) p.dense += embedding_params_on_rank(m_, t_).dense;
    if (layer == m_.layers - 1) p.dense += head_params_on_rank(m_, t_).dense;
    return p;
  }

  int comm_op(int lane, const char* name, Stream st, CommOp c, double bytes, GroupKind kind, std::vector<int> deps,
              int layer, std::int64_t mb) {
    const int gid = group_id(lane, kind);
    if (g_.groups[std::size_t(gid)].size() <= 1) return -1;
    Op op;
    op.name = name, op.category = OpCategory::CommDP, op.stream = st, op.lane = lane, op.layer = layer;
    op.micro_batch = int(mb), op.bytes = bytes, op.comm = c, op.group = gid, op.deps = std::move(deps);
    return add(std::move(op));
  }

  /// The group ZeRO shards dense states over: all of DP, or HSDP's shard group.
  GroupKind shard_group() const { return hsdp_ ? GroupKind::DPShard : GroupKind::DP; }

  /// Bucket size threshold for the next bucket of a backward, parameters.
  double bucket_threshold() const {
    const double gb = grad_comm_bytes(t_.precision);
    if (t_.dp_buckets == DpBuckets::Views && t_.dp_bucket_mib <= 0) return o_.bucket_params;
    return buckets_this_backward_ == 0 ? t_.first_bucket_params(gb) : t_.bucket_params(gb);
  }

  /// Emits a gradient bucket (dense and expert parts) after `after`. With PyTorch DDP's bucket
  /// copy the gradients are first copied into the bucket and divided by the DP size on the
  /// compute stream (`after` then becomes that op).
  void flush_bucket(int lane, RankParams& acc, int& after, std::int64_t mb, std::vector<int>& buckets) {
    const CommOp c = t_.zero >= 1 ? CommOp::ReduceScatter : CommOp::AllReduce;
    const char* name = t_.zero >= 1 ? "dp_grad_reducescatter" : "dp_grad_allreduce";
    const double gb = grad_comm_bytes(t_.precision);
    ++buckets_this_backward_;
    if (t_.dp_buckets == DpBuckets::Copy && t_.zero == 0 &&
        g_.groups[std::size_t(group_id(lane, GroupKind::DP))].size() > 1) {
      Op cp;
      cp.name = "ddp_bucket_copy_in", cp.category = OpCategory::Compute, cp.lane = lane;
      cp.micro_batch = int(mb), cp.forward = false;
      cp.bytes = acc.total() * gb * 4;  // copy in (read + write), divide by the DP size (read + write)
      cp.seconds = cost_.memory_bound(cp.bytes).seconds;
      cp.deps = {after};
      after = add(std::move(cp));
      ddp_copied_params_ += acc.total();
    }
    if (acc.dense > 0) {
      int id = comm_op(lane, name, Stream::DP, c, acc.dense * gb, shard_group(), {after}, -1, mb);
      if (id >= 0) buckets.push_back(id);
      // HSDP: the reduced shard is all-reduced across the replicas, once per iteration.
      const bool last = t_.zero != 3 || mb == last_mb_of_lane_;
      if (hsdp_ && last) {
        const double shard = double(t_.dp_shard) * t_.cp;
        int r = comm_op(lane, "hsdp_grad_allreduce", Stream::DP, CommOp::AllReduce, acc.dense * gb / shard,
                        GroupKind::DPReplica, {id >= 0 ? id : after}, -1, mb);
        if (r >= 0) buckets.push_back(r);
      }
    }
    if (acc.expert > 0) {
      int id = comm_op(lane, name, Stream::DP, c, acc.expert * gb, GroupKind::ExpertDP, {after}, -1, mb);
      if (id >= 0) buckets.push_back(id);
    }
    acc = {};
  }

  void build_lane(int lane) {
    const int stage = g_.lanes[std::size_t(lane)].stage;
    const int p = t_.pp;
    const double pg = param_gather_bytes(t_);
    std::vector<int> buckets;
    RankParams lane_params;
    const auto steps = pipeline_order(t_.pp_schedule, p, stage, mb_, v_);
    last_mb_of_lane_ = -1;
    for (const auto& st : steps)
      if (!st.forward && st.part != BackwardPart::Input) last_mb_of_lane_ = st.micro_batch;
    // Backward passes that complete weight gradients, per slot: the last one syncs them.
    std::vector<std::int64_t> grads_left(std::size_t(v_), 0);
    for (const auto& st : steps)
      if (!st.forward && st.part != BackwardPart::Input) ++grads_left[std::size_t(st.chunk)];
    std::vector<bool> gathered(std::size_t(v_), false);
    // ZeRO-1/2: the parameters updated by the previous step's sharded optimizer are all-gathered
    // at the start, bucket by bucket, overlapping the first micro-batch's forward.
    std::map<std::int64_t, int> zero12_gather;  // layer -> gather op
    for (int c = 0; c < v_; ++c) {
      const LayerRange r = pl_.slot_layers(stage, c);
      RankParams acc;
      std::vector<std::int64_t> pending;
      for (std::int64_t l = r.first; l < r.first + r.count; ++l) {
        RankParams lp = params_of(l);
        lane_params.dense += lp.dense, lane_params.expert += lp.expert;
        if (t_.zero == 1 || t_.zero == 2) {
          acc.dense += lp.dense, acc.expert += lp.expert;
          pending.push_back(l);
          if (acc.total() >= o_.bucket_params || l + 1 == r.first + r.count) {
            int id = -1;
            if (acc.dense > 0) id = comm_op(lane, "dp_param_allgather", Stream::DPGather, CommOp::AllGather, acc.dense * pg, shard_group(), {}, int(l), 0);
            int id2 = acc.expert > 0 ? comm_op(lane, "dp_param_allgather", Stream::DPGather, CommOp::AllGather, acc.expert * pg, GroupKind::ExpertDP, {}, int(l), 0) : -1;
            if (id2 >= 0) id = id2;
            for (auto pl : pending) zero12_gather[pl] = id;
            pending.clear();
            acc = {};
          }
        }
      }
    }
    std::vector<int> mirror_deps;  // DualPipe: gradient buckets the mirror all-reduce waits for
    for (const PipelineStep& st : steps) {
      const LayerRange r = pl_.slot_layers(stage, st.chunk);
      const int vstage = pl_.chunk_at(stage, st.chunk);
      const bool first_v = pl_.holds_embedding(vstage), last_v = pl_.holds_head(vstage);
      int first = -1, last = -1;
      double host = 0;  // host seconds to issue this step's ops (eager frameworks)
      const bool first_fwd = st.forward && !gathered[std::size_t(st.chunk)];
      if (first_fwd) gathered[std::size_t(st.chunk)] = true;
      auto run = [&](const std::vector<OpTemplate>& tpl, int layer, std::vector<int> extra, bool tensors) {
        const bool in_layer = layer >= 0 && st.part != BackwardPart::Weight;
        const OpContext& ctx = layer >= 0 ? layer_ctx(layer) : ctx_;
        std::vector<double> per_op;
        if (per_op_host_)
          per_op = host_seconds_per_op(ctx, tpl, st.forward, in_layer);
        else
          host += host_seconds(ctx, tpl, st.forward, in_layer);
        lane_tensors_ += first_fwd && tensors
                             ? (layer >= 0 ? param_tensors_of_layer(m_, t_, layer)
                                : &tpl == &tp_.emb_f ? param_tensors_of_embedding(m_)
                                : &tpl == &tp_.head_f ? param_tensors_of_head(m_, t_) : 0.0)
                             : 0.0;
        int f = -1;
        std::vector<int> entry = std::move(extra);
        if (last >= 0) entry.push_back(last);
        int out = instantiate(tpl, lane, layer, st.micro_batch, st.forward, entry, &f,
                              per_op_host_ ? &per_op : nullptr);
        if (first < 0 && !tpl.empty()) first = f;
        if (!tpl.empty()) last = out;
        return f;
      };
      // The step cannot end before the host has issued it: a host op on the host stream (which
      // runs ahead, step after step) and a zero-length wait on the compute stream.
      auto host_gate = [&]() {
        // A compiled forward or backward costs its fixed host time once per call.
        if (ctx_.host.pass && st.part != BackwardPart::Weight)
          host += st.forward ? ctx_.host.pass->first : ctx_.host.pass->second;
        if (host <= 0 || last < 0) return;
        Op h;
        h.name = "host_dispatch", h.category = OpCategory::Host, h.stream = Stream::Host, h.lane = lane;
        h.micro_batch = int(st.micro_batch), h.forward = st.forward, h.seconds = host;
        const int hid = add(std::move(h));
        Op w;
        w.name = "host_wait", w.category = OpCategory::Compute, w.lane = lane;
        w.micro_batch = int(st.micro_batch), w.forward = st.forward, w.deps = {last, hid};
        last = add(std::move(w));
      };
      const double act = double(ctx_.tokens) * double(m_.hidden) * ctx_.act_bytes / (t_.sp ? t_.tp : 1);
      // The neighbour a send goes to: the next model chunk's rank (forward) or the previous one's.
      auto send = [&](const char* name, bool fwd) {
        const int k = fwd ? vstage + 1 : vstage - 1;
        const int peer = pl_.place(k, st.micro_batch, mb_).stage;
        Op op;
        op.name = name, op.category = OpCategory::CommPP, op.stream = Stream::PP, op.lane = lane;
        op.micro_batch = int(st.micro_batch), op.forward = fwd, op.bytes = act, op.comm = CommOp::SendRecv;
        const bool next = peer == (stage + 1) % p, prev = peer == (stage + p - 1) % p;
        op.group = group_id(lane, next ? GroupKind::PPNext : prev ? GroupKind::PPPrev : GroupKind::PPMirror);
        op.deps = {last};
        if (peer == stage) return -1;  // same rank (DualPipe's middle): nothing crosses the wire
        return add(std::move(op));
      };
      if (st.forward) {
        if (first_v) run(tp_.emb_f, -1, {}, true);
        int prev_layer_first = -1;
        for (std::int64_t l = r.first; l < r.first + r.count; ++l) {
          std::vector<int> extra;
          if (t_.zero == 3) {
            std::vector<int> d;
            if (prev_layer_first >= 0) d.push_back(prev_layer_first);
            int ag = comm_op(lane, "fsdp_param_allgather", Stream::DPGather, CommOp::AllGather,
                             params_of(l).total() * pg, shard_group(), d, int(l), st.micro_batch);
            if (ag >= 0) extra.push_back(ag);
          } else if (first_fwd && zero12_gather.count(l) && zero12_gather[l] >= 0) {
            extra.push_back(zero12_gather[l]);
          }
          prev_layer_first = run(layer_tpl(l, true, BackwardPart::Full), int(l), extra, true);
        }
        if (last_v) run(tp_.head_f, -1, {}, true);
        host_gate();
        if (!last_v) send_[key(lane, true, st.micro_batch, st.chunk)] = send("pp_send_activation", true);
      } else {
        const bool weights = st.part != BackwardPart::Input;  // this step completes weight gradients
        const bool sync = weights && (t_.zero == 3 || --grads_left[std::size_t(st.chunk)] == 0);
        RankParams acc;
        buckets_this_backward_ = 0;
        if (last_v) {
          run(part_of(tp_.head_b, tp_.head_s, st.part), -1, {}, false);
          if (sync) acc.dense += head_params_on_rank(m_, t_).dense;
        }
        int prev_layer_first = -1;
        for (std::int64_t l = r.first + r.count - 1; l >= r.first; --l) {
          std::vector<int> extra;
          if (t_.zero == 3 && st.part != BackwardPart::Weight) {
            std::vector<int> d;
            if (prev_layer_first >= 0) d.push_back(prev_layer_first);
            int ag = comm_op(lane, "fsdp_param_allgather", Stream::DPGather, CommOp::AllGather,
                             params_of(l).total() * pg, shard_group(), d, int(l), st.micro_batch);
            if (ag >= 0) extra.push_back(ag);
          }
          prev_layer_first = run(layer_tpl(l, false, st.part), int(l), extra, false);
          if (sync) {
            RankParams lp = layer_params_on_rank(m_, t_, l);
            acc.dense += lp.dense, acc.expert += lp.expert;
            if (acc.total() >= bucket_threshold()) flush_bucket(lane, acc, last, st.micro_batch, buckets);
          }
        }
        if (first_v) {
          run(part_of(tp_.emb_b, tp_.emb_s, st.part), -1, {}, false);
          if (sync) acc.dense += embedding_params_on_rank(m_, t_).dense;
        }
        host_gate();
        if (sync && acc.total() > 0) flush_bucket(lane, acc, last, st.micro_batch, buckets);
        if (!first_v && st.part != BackwardPart::Weight)
          send_[key(lane, false, st.micro_batch, st.chunk)] = send("pp_send_grad", false);
      }
      if (st.part != BackwardPart::Weight) first_[key(lane, st.forward, st.micro_batch, st.chunk)] = first;
      else if (first >= 0) weight_first_.push_back({first, key(lane, false, st.micro_batch, st.chunk)});
      if (st.paired) pairs_.push_back({key(lane, true, st.micro_batch, st.chunk), lane});
      else if (!st.forward && !pairs_.empty() && pairs_.back().b == SIZE_MAX && pairs_.back().lane == lane)
        pairs_.back().b = key(lane, false, st.micro_batch, st.chunk);
      if (last >= 0) last_compute_ = last;
    }
    // DualPipe: both copies of a model stage sum their gradients before the optimizer step.
    if (pl_.dualpipe()) {
      mirror_deps = buckets;
      if (last_compute_ >= 0) mirror_deps.push_back(last_compute_);
      const double shard = t_.zero >= 1 ? double(t_.dp_shard > 0 ? t_.dp_shard : t_.dp) * t_.cp : 1.0;
      const double local = (lane_params.dense + lane_params.expert) / shard;
      const int id = comm_op(lane, "dualpipe_mirror_allreduce", Stream::DP, CommOp::AllReduce,
                             local * grad_comm_bytes(t_.precision), GroupKind::PPMirror, mirror_deps, -1, mb_ - 1);
      if (id >= 0) buckets.push_back(id);
    }
    if (ddp_copied_params_ > 0) {
      // PyTorch DDP copies every reduced gradient back out of its bucket once all are reduced.
      Op out;
      out.name = "ddp_bucket_copy_out", out.category = OpCategory::Compute, out.lane = lane, out.forward = false;
      out.bytes = ddp_copied_params_ * grad_comm_bytes(t_.precision) * 2;
      out.seconds = cost_.memory_bound(out.bytes).seconds;
      out.deps = buckets;
      if (last_compute_ >= 0) out.deps.push_back(last_compute_);
      last_compute_ = add(std::move(out));
      ddp_copied_params_ = 0;
    }
    // Optimizer step on this rank's (sharded) parameters after the last gradient bucket.
    const double dp_group = hsdp_ ? double(t_.dp_shard) : double(t_.dp);
    const double shard = t_.zero >= 1 ? dp_group * t_.cp : 1.0;
    const double expert_shard = t_.zero >= 1 ? double(t_.dp) * t_.cp / std::max(1, t_.ep) : 1.0;
    const double local = lane_params.dense / shard + lane_params.expert / expert_shard;
    Op op;
    op.name = "optimizer_step", op.category = OpCategory::Optimizer, op.lane = lane;
    op.bytes = local * optimizer_bytes_per_param(t_.precision, t_.optimizer);
    op.seconds = optimizer_step_seconds(t_, cost_, local);
    op.deps = buckets;
    if (last_compute_ >= 0) op.deps.push_back(last_compute_);
    const double host_opt = host_optimizer_seconds(ctx_, lane_tensors_);
    if (host_opt > 0) {
      Op h;
      h.name = "host_optimizer", h.category = OpCategory::Host, h.stream = Stream::Host, h.lane = lane;
      h.seconds = host_opt;
      op.deps.push_back(add(std::move(h)));
    }
    lane_tensors_ = 0;
    add(std::move(op));
  }

  /// The send a pass on `lane` waits for: the activation from the previous model chunk
  /// (forward) or the gradient from the next one (backward); -1 when none.
  int incoming(int lane, bool fwd, std::int64_t mb, int slot) const {
    const int stage = g_.lanes[std::size_t(lane)].stage;
    const int k = pl_.chunk_at(stage, slot) + (fwd ? -1 : 1);
    if (k < 0 || k >= pl_.chunks()) return -1;
    const auto from = pl_.place(k, mb, mb_);
    const int s = send_[key(lane_of_stage(lane, from.stage), fwd, mb, from.slot)];
    if (s >= 0) return s;
    // Same rank (no send): wait for that pass's own first op's step to finish instead.
    return -1;
  }

  void link_pipeline() {
    for (int lane = 0; lane < int(g_.lanes.size()); ++lane)
      for (std::int64_t mb = 0; mb < mb_; ++mb)
        for (int c = 0; c < v_; ++c)
          for (bool fwd : {true, false}) {
            const int f = first_[key(lane, fwd, mb, c)];
            if (f < 0) continue;
            const int s = incoming(lane, fwd, mb, c);
            if (s >= 0) g_.ops[std::size_t(f)].deps.push_back(s);
          }
    // A W pass follows its B on the compute stream; where the B had nothing to run (a chunk
    // holding only the embedding) it waits for the gradient itself.
    for (const auto& [op, k] : weight_first_) {
      const int lane = int(k / 2 / std::size_t(v_) / std::size_t(mb_));
      const std::int64_t mb = std::int64_t((k / 2 / std::size_t(v_)) % std::size_t(mb_));
      const int s = incoming(lane, false, mb, int((k / 2) % std::size_t(v_)));
      if (s >= 0) g_.ops[std::size_t(op)].deps.push_back(s);
    }
    // A DualPipe F&B pair starts when both of its passes have their inputs.
    for (const auto& pr : pairs_) {
      if (pr.b == SIZE_MAX) continue;
      const int f = first_[pr.f];
      const std::size_t b = pr.b;
      const int lane = pr.lane;
      const std::int64_t mb = std::int64_t((b / 2 / std::size_t(v_)) % std::size_t(mb_));
      const int slot = int((b / 2) % std::size_t(v_));
      const int s = incoming(lane, false, mb, slot);
      if (f >= 0 && s >= 0) g_.ops[std::size_t(f)].deps.push_back(s);
    }
  }

  struct Pair {
    std::size_t f = 0;
    int lane = 0;
    std::size_t b = SIZE_MAX;
  };

  const model::ModelSpec& m_;
  const TrainingConfig& t_;
  const WorkGraphOptions& o_;
  RankLayout layout_;
  PipelineLayout pl_;
  OpContext ctx_;
  const hw::CostModel& cost_;
  TrainingConfig plain_t_;              ///< the config of layers left out of a partial recompute
  std::optional<OpContext> plain_ctx_;  ///< set when recompute_layers leaves layers out
  std::vector<bool> plain_;             ///< per layer: left out of the partial recompute
  Templates tp_, plain_tp_;
  int v_ = 1;
  std::int64_t mb_ = 1;
  bool hsdp_ = false;
  /// Eager frameworks: the host issues op by op and each GPU op waits for its issue (instantiate);
  /// Megatron and torch.compile keep one host floor per pass (host_gate).
  bool per_op_host_ = false;
  std::int64_t last_mb_of_lane_ = -1;
  int last_compute_ = -1;
  int buckets_this_backward_ = 0;  ///< gradient buckets emitted in the backward being built
  double ddp_copied_params_ = 0;   ///< parameters copied into DDP buckets (copied back before the optimizer)
  double lane_tensors_ = 0;  ///< parameter tensors of the lane being built (optimizer host cost)
  WorkGraph g_;
  std::vector<int> first_, send_;
  std::vector<Pair> pairs_;
  std::vector<std::pair<int, std::size_t>> weight_first_;  ///< (first op of a W pass, its backward key)
  std::map<std::pair<int, int>, int> lane_groups_;
  std::map<std::vector<int>, int> group_ids_;
  std::map<std::pair<int, int>, int> join_seq_, join_ids_;
};

}  // namespace

WorkGraph build_work_graph(const model::ModelSpec& m, const hw::Cluster& c, const TrainingConfig& t,
                           const hw::CostModel& cost, const WorkGraphOptions& o) {
  if (t.dp <= 0 || t.global_batch <= 0) throw Error("build_work_graph: the training config is not resolved (dp, global_batch)");
  return GraphBuilder(m, c, t, cost, o).build();
}

}  // namespace infraplan::strat
