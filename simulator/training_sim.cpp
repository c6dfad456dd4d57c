#include "simulator/training_sim.hpp"

#include "hardware/clocked_cost_model.hpp"
#include "hardware/derived_profile_caveat.hpp"
#include "hardware/framework_costs.hpp"
#include "simulator/limited_step_clock.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <tuple>

#include "common/limits.hpp"
#include "common/error.hpp"
#include "simulator/training_flowsim.hpp"

namespace infraplan::sim::train {

using strat::OpCategory;

double TimeBreakdown::exposed_comm_total() const {
  double s = 0;
  for (const auto& [k, v] : exposed_comm) s += v;
  return s;
}

Json TimeBreakdown::to_json() const {
  Json e = Json::object();
  for (const auto& [k, v] : exposed_comm) e[k] = v;
  Json j = {{"compute_s", compute}, {"recompute_s", recompute}, {"optimizer_s", optimizer},
            {"exposed_comm_s", e},  {"bubble_s", bubble}};
  if (host_wait > 0) j["host_wait_s"] = host_wait;
  return j;
}

Json TrainingEstimate::to_json() const {
  Json j = {{"iteration_time_s", iteration_time_s}, {"tokens_per_s", tokens_per_s}, {"mfu", mfu}, {"hfu", hfu},
            {"peak_bytes", peak_bytes}, {"fits", fits}, {"breakdown", breakdown.to_json()}};
  if (clock) j["clock"] = clock->to_json();
  return j;
}

Json TrainingResult::to_json() const {
  Json cp = Json::array();
  for (const auto& s : critical_path) cp.push_back({{"category", s.category}, {"seconds", s.seconds}, {"ops", s.ops}});
  Json stages = Json::array();
  for (const auto& b : stage_breakdown) stages.push_back(b.to_json());
  Json bytes = Json::object(), sizes = Json::object();
  for (const auto& [k, v] : comm_bytes_per_gpu) bytes[k] = v;
  for (const auto& [k, v] : comm_size_per_gpu) sizes[k] = v;
  Json j = {{"mode", mode},
          {"backend", backend},
          {"simgrid_activities", simgrid_activities},
          {"iteration_time_s", iteration_time_s},
          {"tokens_per_s", tokens_per_s},
          {"mfu", mfu},
          {"hfu", hfu},
          {"model_flops_per_iteration", model_flops},
          {"peak_flops_per_gpu", peak_flops},
          {"peak_bytes", peak_bytes},
          {"memory", ledger.to_json()},
          {"breakdown", breakdown.to_json()},
          {"reported_stage", reported_stage},
          {"stage_breakdown", stages},
          {"critical_path", cp},
          {"comm_wire_bytes_per_gpu", bytes},
          {"comm_size_bytes_per_gpu", sizes},
          {"ops", ops},
          {"lanes", lanes},
          {"warnings", warnings}};
  if (clock) j["clock"] = clock->to_json();
  return j;
}

double peak_flops_of(const hw::GpuSpec& g, strat::Precision p) {
  const Dtype d = strat::gemm_dtype_of(p);
  if (auto v = g.peak(d)) return *v;
  if (auto v = g.peak(Dtype::BF16)) return *v;
  throw Error("gpu " + g.name + " has no dense peak for " + std::string(dtype_name(d)));
}

coll::CollectiveOp to_coll(strat::CommOp c);
coll::CollectiveOp to_coll(strat::CommOp c) {
  switch (c) {
    case strat::CommOp::AllReduce: return coll::CollectiveOp::AllReduce;
    case strat::CommOp::AllGather: return coll::CollectiveOp::AllGather;
    case strat::CommOp::ReduceScatter: return coll::CollectiveOp::ReduceScatter;
    case strat::CommOp::AllToAll: return coll::CollectiveOp::AllToAll;
    case strat::CommOp::SendRecv: return coll::CollectiveOp::SendRecv;
  }
  return coll::CollectiveOp::AllReduce;
}

/// Bytes one rank puts on the wire for communication op `op` of `g` (a send/recv: its size).
double wire_bytes_of(const strat::WorkGraph& g, const strat::Op& op) {
  if (op.comm == strat::CommOp::SendRecv) return op.bytes;
  const int n = int(g.groups[std::size_t(op.group)].size());
  return coll::bytes_per_rank(to_coll(op.comm), n, op.bytes);
}

void price_comm_ops(strat::WorkGraph& g, const coll::CommModel& comm) {
  std::map<std::tuple<int, double, int>, double> cache;
  for (auto& op : g.ops) {
    if (op.group < 0) continue;
    auto k = std::make_tuple(int(op.comm), op.bytes, op.group);
    auto it = cache.find(k);
    if (it == cache.end()) {
      const auto& ranks = g.groups[std::size_t(op.group)];
      double s = 0;
      if (ranks.size() > 1 && op.bytes > 0) {
        if (op.comm == strat::CommOp::SendRecv) {
          // Point-to-point: the sender's route to its peer.
          s = comm.estimate(coll::CollectiveOp::SendRecv, op.bytes, ranks).seconds;
        } else {
          s = comm.estimate(to_coll(op.comm), op.bytes, ranks).seconds;
        }
      }
      it = cache.emplace(k, s).first;
    }
    op.seconds = it->second;
  }
}

namespace {

int comm_kind_index(OpCategory c) { return int(c) - int(OpCategory::CommTP); }
const std::array<const char*, 5> kKinds = {"tp", "cp", "ep", "pp", "dp"};

TimeBreakdown lane_breakdown(const strat::WorkGraph& g, const ExecutionTimes& x, int lane) {
  TimeBreakdown b;
  struct Pt {
    double t;
    int delta;
    int kind;  // -1 compute, 0..4 comm kinds
  };
  std::vector<Pt> pts;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const auto& op = g.ops[i];
    if (op.lane != lane) continue;
    const double d = x.end[i] - x.start[i];
    if (d <= 0) continue;
    int kind = -1;
    if (op.category == OpCategory::Host) {
      kind = 5;
    } else if (strat::is_comm(op.category)) {
      kind = comm_kind_index(op.category);
    } else if (op.category == OpCategory::Recompute) {
      b.recompute += d;
    } else if (op.category == OpCategory::Optimizer) {
      b.optimizer += d;
    } else {
      b.compute += d;
    }
    pts.push_back({x.start[i], +1, kind});
    pts.push_back({x.end[i], -1, kind});
  }
  std::sort(pts.begin(), pts.end(), [](const Pt& a, const Pt& c) {
    return a.t != c.t ? a.t < c.t : a.delta < c.delta;
  });
  int compute = 0, host = 0;
  std::array<int, 5> active{};
  std::array<double, 5> exposed{};
  double prev = 0;
  auto account = [&](double until) {
    const double d = until - prev;
    if (d <= 0 || compute > 0) return;
    for (int k = 0; k < 5; ++k)
      if (active[std::size_t(k)] > 0) {
        exposed[std::size_t(k)] += d;
        return;
      }
    if (host > 0) b.host_wait += d;
    else b.bubble += d;
  };
  for (const auto& p : pts) {
    account(p.t);
    prev = std::max(prev, p.t);
    if (p.kind < 0) compute += p.delta;
    else if (p.kind == 5) host += p.delta;
    else active[std::size_t(p.kind)] += p.delta;
  }
  account(x.makespan);
  for (int k = 0; k < 5; ++k)
    if (exposed[std::size_t(k)] > 0) b.exposed_comm[kKinds[std::size_t(k)]] = exposed[std::size_t(k)];
  return b;
}

std::vector<CriticalSegment> critical_path(const strat::WorkGraph& g, const ExecutionTimes& x) {
  std::vector<int> path;
  for (int op = x.last_op; op >= 0; op = x.released_by[std::size_t(op)]) {
    path.push_back(op);
    if (path.size() > g.ops.size()) break;
  }
  std::reverse(path.begin(), path.end());
  std::vector<CriticalSegment> out;
  for (int op : path) {
    const auto& o = g.ops[std::size_t(op)];
    const double d = x.end[std::size_t(op)] - x.start[std::size_t(op)];
    const std::string cat = strat::op_category_name(o.category);
    if (out.empty() || out.back().category != cat) out.push_back({cat, 0, 0});
    out.back().seconds += d;
    out.back().ops += 1;
  }
  return out;
}

}  // namespace

std::int64_t work_graph_layer_steps(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                                   bool exact) {
  const std::int64_t lanes = exact ? c.total_gpus() : t.pp;
  const std::int64_t layers_per_lane = (m.layers + t.pp - 1) / t.pp;
  // Each factor is bounded by the input limits, so the product fits an int64.
  return lanes * t.micro_batches() * layers_per_lane * 2;
}

namespace {

TrainingResult simulate_once(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                             const hw::CostModel& cost, const coll::CommModel& comm, const TrainingOptions& o) {
  TrainingResult r;
  {
    strat::TrainingConfig copy = t;
    r.warnings = strat::resolve_training(copy, m, c).items;
    if (strat::framework_of(copy) == strat::Framework::TorchCompile &&
        copy.host_dispatch == strat::HostDispatch::Auto && m.position == model::PositionType::Rope &&
        !strat::host_costs_of(copy, cost).enabled)
      r.warnings.push_back(
          std::string("torch-compile: the profile has no measured host time of a compiled block for ") +
          strat::precision_name(copy.precision) +
          (copy.recompute == model::Recompute::Full ? " with checkpointing" : "") +
          " (framework.block_host_us); the step has no host floor, so a host-bound step is "
          "predicted fast");
    if (copy.framework == strat::Framework::Auto && copy.zero == 3 &&
        strat::framework_of(copy) == strat::Framework::Megatron)
      r.warnings.push_back(
          "framework not set: Megatron-LM's fused kernels are assumed; a zero 3 (FSDP) job usually runs in a "
          "PyTorch trainer, whose kernels are not fused: on torchtitan's published FSDP rows the megatron op "
          "list predicted 12-22% more throughput than measured, the transformers op list 0.7-3.4% "
          "(docs/accuracy.md, \"PyTorch FSDP2 on 64 A100s\"); set training.framework");
    if (std::string caveat = hw::derived_profile_caveat(cost); !caveat.empty())
      r.warnings.push_back(std::move(caveat));
    if (copy.attention_kernel != hw::AttentionKernel::Default) {
      const hw::Profile* p = hw::profile_of(cost);
      if (!p || !p->has_prefill_kernel(copy.attention_kernel))
        r.warnings.push_back(std::string("attention_kernel=") +
                             hw::attention_kernel_name(copy.attention_kernel) + ": the " +
                             (p ? "profile " + p->gpu : std::string("roofline cost model")) +
                             " has no tables of that kernel; attention is priced with the default ones "
                             "(docs/calibration.md, \"Attention kernels\")");
      else if (copy.attention_kernel == hw::AttentionKernel::Flash2 && copy.seq_len < 2048 &&
               copy.seq_len % 128 != 0)
        r.warnings.push_back("attention_kernel=flash2 with seq_len=" + std::to_string(copy.seq_len) +
                             " (under 2,048 and not a multiple of 128): FlashAttention-2's uneven-length "
                             "kernels ran 24-52% slower than its tables give on the H200 (held-out shapes, "
                             "head width 64 and 128; not modelled): the attention time is a lower bound "
                             "(docs/calibration.md, \"Attention kernels\")");
    }
    if (copy.precision == strat::Precision::FP8Mixed)
      r.warnings.push_back(
          "fp8-mixed: no fp8 training step was measured here; on NVIDIA's published FP8 pre-training rows "
          "(NeMo, DGX-H100) the predicted throughput was higher than published on every row, most at tp=1 "
          "(docs/accuracy.md, \"FP8 pre-training on DGX-H100\")");
  }
  strat::WorkGraphOptions go = o.graph;
  go.exact = o.mode == Mode::Exact || (o.mode == Mode::Auto && c.total_gpus() <= o.exact_max_gpus);
  // Auto mode takes one lane per pipeline stage when one lane per GPU would be too large; an eager
  // framework's layer pass weighs twice (a host op issues each of its GPU ops).
  const std::int64_t pass_weight =
      strat::is_eager(strat::framework_of(t)) && strat::host_costs_of(t, cost).enabled ? 2 : 1;
  if (o.mode == Mode::Auto && go.exact &&
      pass_weight * work_graph_layer_steps(m, c, t, true) > limits::kMaxWorkGraphLayerSteps)
    go.exact = false;
  r.mode = go.exact ? "exact" : "symmetric";
  const std::int64_t steps = work_graph_layer_steps(m, c, t, go.exact);
  if (steps > limits::kMaxWorkGraphLayerSteps)
    throw Error("the event simulation of this iteration would run " + std::to_string(steps) +
                " layer passes (" + (go.exact ? std::to_string(c.total_gpus()) + " GPU lanes" : std::to_string(t.pp) + " pipeline lanes") +
                " × " + std::to_string(t.micro_batches()) + " micro-batches × layers per stage × forward and backward), beyond the limit of " +
                std::to_string(limits::kMaxWorkGraphLayerSteps) +
                (go.exact ? "; use --mode symmetric or --estimate" : "; use --estimate (the closed form) or a larger micro_batch"));
  r.graph_options = go;
  strat::WorkGraph g = strat::build_work_graph(m, c, t, cost, go);
  price_comm_ops(g, comm);
  if (o.free_comm)
    for (auto& op : g.ops)
      if (op.group >= 0) op.seconds = 0;
  ExecutionTimes x;
  if (o.backend == Backend::SimGrid) {
    r.backend = "simgrid";
    FlowSimRun fr = execute_on_simgrid(g, comm);
    r.simgrid_activities = fr.activities;
    x = std::move(fr.times);
  } else {
    r.backend = "events";
    x = execute_work_graph(g);
  }
  r.iteration_time_s = x.makespan;
  r.tokens_per_s = double(t.global_batch) * double(t.seq_len) / x.makespan;
  r.model_flops = g.model_flops;
  r.peak_flops = peak_flops_of(c.gpu, t.precision);
  r.mfu = g.model_flops / (double(c.total_gpus()) * x.makespan * r.peak_flops);
  double all = 0, model_part = 0;
  for (const auto& op : g.ops) {
    all += op.flops;
    if (op.category != OpCategory::Recompute) model_part += op.flops;
  }
  r.hfu = model_part > 0 ? r.mfu * all / model_part : r.mfu;
  r.ledger = strat::training_memory_peak(m, c, t);
  r.peak_bytes = r.ledger.total_bytes();
  // The ledger counts allocated bytes; what PyTorch's caching allocator reserves beyond them
  // (fragmentation) is not in it. Two H100 steps the ledger put at 91.6% and 99.4% of memory ran out
  // of it (docs/memory.md): a "fits" above 90% is flagged, not promised.
  constexpr double kNearFullShare = 0.90;
  if (r.ledger.fits() && r.peak_bytes > kNearFullShare * r.ledger.capacity_bytes) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", 100 * r.peak_bytes / r.ledger.capacity_bytes);
    r.warnings.push_back(
        std::string("memory: the peak is ") + share +
        " of the GPU's memory; the ledger counts allocated bytes, not what the caching "
        "allocator reserves beyond them (fragmentation): two H100 steps the ledger put at 91.6% "
        "and 99.4% ran out of memory (docs/memory.md)");
  }
  // Per-stage breakdown on the rank with tp = cp = dp = 0 of each stage.
  strat::RankLayout layout(t);
  double busiest = -1;
  for (int s = 0; s < t.pp; ++s) {
    int lane = go.exact ? layout.rank({0, 0, 0, s}) : s;
    TimeBreakdown b = lane_breakdown(g, x, lane);
    const double busy = b.compute + b.recompute + b.optimizer;
    if (busy > busiest) busiest = busy, r.reported_stage = s, r.breakdown = b;
    r.stage_breakdown.push_back(b);
    // Communication volume of the busiest lane.
  }
  {
    const int lane = go.exact ? layout.rank({0, 0, 0, r.reported_stage}) : r.reported_stage;
    for (const auto& op : g.ops) {
      if (op.lane != lane || op.group < 0) continue;
      const std::string k = strat::op_category_name(op.category);
      r.comm_size_per_gpu[k] += op.bytes;
      r.comm_bytes_per_gpu[k] += wire_bytes_of(g, op);
    }
  }
  {
    // The busiest GPU's work: matmul FLOPs and memory-bound bytes per lane (communication aside).
    std::vector<double> fl(g.lanes.size(), 0.0), by(g.lanes.size(), 0.0);
    for (const auto& op : g.ops) {
      if (op.group >= 0 || op.lane < 0 || std::size_t(op.lane) >= fl.size()) continue;
      if (op.flops > 0)
        fl[std::size_t(op.lane)] += op.flops;
      else
        by[std::size_t(op.lane)] += op.bytes;
    }
    for (std::size_t i = 0; i < fl.size(); ++i)
      if (i == 0 || fl[i] > r.work_flops_per_gpu)
        r.work_flops_per_gpu = fl[i], r.work_bytes_per_gpu = by[i], r.busiest_lane = int(i);
  }
  r.critical_path = critical_path(g, x);
  r.ops = g.ops.size();
  r.lanes = g.lanes.size();
  if (o.keep_graph) {
    r.graph = std::move(g);
    r.times = std::move(x);
  }
  return r;
}

}  // namespace

TrainingResult simulate_training(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                                 const hw::CostModel& cost, const coll::CommModel& comm, const TrainingOptions& o) {
  const hw::PowerModel* pm = o.sustained_clock ? cost.power_model() : nullptr;
  if (!pm || !(cost.reference_clock_mhz() > 0)) return simulate_once(m, c, t, cost, comm, o);
  // Priced at the top clock for the step's demand, then at the clock that demand sustains.
  const bool limiter = cost.power_limiter_tau_s() > 0 && cost.idle_power_w() >= 0;
  TrainingOptions top_o = o;
  top_o.keep_graph = limiter;
  const hw::ClockedCostModel top(cost, pm->max_clock_mhz());
  const TrainingResult at_top = simulate_once(m, c, t, top, comm, top_o);
  const bool eight_bit = t.precision == strat::Precision::FP8Mixed;
  StepClock sc;
  if (limiter) {
    // The busiest lane's timeline through the board's limiter; each op's time at a second clock
    // (the graph priced there, not run) fixes how it follows the clock. The walk's ops follow the
    // clock in their matmul share only (memory-bound kernels draw and run as at the top clock, as
    // its time constant was calibrated); the step is then priced at the clock it gives, where the
    // eager kernels slow by their measured clock share too.
    const double low_mhz = 0.5 * pm->max_clock_mhz();
    const hw::ClockedCostModel low(cost, low_mhz, /*eager_kernels_follow=*/false);
    strat::WorkGraphOptions go = at_top.graph_options;
    const strat::WorkGraph low_graph = strat::build_work_graph(m, c, t, low, go);
    LimitedClockInput in;
    in.top_graph = &at_top.graph, in.top_times = &at_top.times, in.low_graph = &low_graph;
    in.low_mhz = low_mhz, in.eight_bit = eight_bit;
    in.lane = at_top.busiest_lane;
    // A collective reads and writes its wire bytes in this GPU's memory.
    in.comm_traffic_bytes.assign(at_top.graph.ops.size(), 0.0);
    for (std::size_t i = 0; i < at_top.graph.ops.size(); ++i) {
      const strat::Op& op = at_top.graph.ops[i];
      if (op.lane != in.lane || op.group < 0) continue;
      in.comm_traffic_bytes[i] = 2.0 * wire_bytes_of(at_top.graph, op);
    }
    sc = limited_step_clock(*pm, cost, in);
  } else {
    sc = step_clock(*pm, cost.reference_clock_mhz(), at_top.work_flops_per_gpu, eight_bit, at_top.work_bytes_per_gpu,
                    at_top.iteration_time_s);
  }
  const hw::ClockedCostModel at(cost, sc.mhz);
  TrainingResult r = simulate_once(m, c, t, at, comm, o);
  r.clock = sc;
  return r;
}

}  // namespace infraplan::sim::train
