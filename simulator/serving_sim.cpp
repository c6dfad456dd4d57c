#include "simulator/serving_sim.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "common/limits.hpp"
#include "common/error.hpp"
#include "model/model_math.hpp"
#include "simulator/request_release.hpp"
#include "simulator/router.hpp"
#include "simulator/serving_collectives.hpp"
#include "simulator/serving_engine.hpp"
#include "simulator/serving_events.hpp"
#include "strategies/memory_ledger.hpp"

namespace infraplan::sim::serve {

ServingSetup serving_setup_from_scenario(const strat::Scenario& sc) {
  if (!sc.serving) throw Error(sc.origin + ": no 'serving' object; add one (docs/serving.md)");
  ServingSetup s;
  s.name = sc.name;
  s.model = sc.model;
  s.cluster = sc.cluster;
  s.serving = *sc.serving;
  try {
    s.engine = engine_options_from_json(sc.serving_raw, s.serving);
    s.workload =
        workload_from_json(sc.workload, sc.seed, std::filesystem::path(sc.origin).parent_path().string());
  } catch (const Error& e) {
    throw Error(sc.origin + ": " + e.what());
  }
  return s;
}

std::int64_t instance_kv_capacity_tokens(const ServingSetup& s, int tp, bool with_proposer) {
  strat::ServingConfig sc = s.serving;
  sc.tp = tp;
  std::int64_t cap = strat::serving_kv_capacity_tokens(s.model, s.cluster.gpu, sc);
  if (with_proposer && s.engine.spec.enabled())
    cap -= std::int64_t(proposer_weight_bytes(s.engine.spec, s.model) /
                        strat::serving_kv_bytes_per_token_per_gpu(s.model, sc));
  return std::max<std::int64_t>(cap, 0);
}

namespace {

struct Pending {  // PD: a request between its prefill and its decode
  double first_token_s = 0, first_scheduled_s = 0;
  std::int64_t cached = 0;
  int preemptions = 0;
  int prefill_instance = 0;
};

class Simulation {
 public:
  Simulation(const ServingSetup& s, const hw::CostModel& cm, const SimOptions& o) : s_(s), cm_(cm), o_(o) {}
  ServingResult run();
  /// Transfers made (filled during run()).
  std::vector<KvTransferRecord> transfers;
  /// When set: the duration of each request's KV transfer (by request id; < 0 = use the model),
  /// and no link queueing (the durations already include sharing).
  const std::vector<double>* kv_durations = nullptr;

 private:
  void build();
  void on_arrival(double now, std::int64_t id);
  void on_step_done(double now, int inst);
  void on_kv_arrived(double now, int inst, std::int64_t id);
  void try_start(double now, int inst);
  void complete(const Sequence& s, int inst, double now);
  void sample(double now);

  const ServingSetup& s_;
  EngineOptions engine_;
  const hw::CostModel& cm_;
  SimOptions o_;
  std::vector<Request> reqs_;
  std::vector<RequestRecord> recs_;
  std::vector<char> done_;
  std::unique_ptr<RequestRelease> release_;
  std::vector<std::unique_ptr<ServingEngine>> engines_;
  std::vector<int> front_, decode_;  // instances receiving new requests; PD decode instances
  std::unique_ptr<coll::CommModel> comm_model_;
  std::unique_ptr<TpCommModel> tp_comm_;
  std::unique_ptr<KvTransferModel> kv_default_;
  const KvTransferModel* kv_ = nullptr;
  std::vector<std::unique_ptr<SpecProposer>> proposers_;
  std::unique_ptr<Router> router_;
  EventQueue q_;
  LogHistogram itl_;
  std::vector<Pending> pending_;
  std::vector<double> egress_free_, ingress_free_;
  std::int64_t finished_ = 0, transfers_ = 0;
  std::vector<double> transfer_times_s_;
  double transfer_bytes_ = 0;
  double transfer_s_ = 0, next_sample_ = 0, kv_usage_sum_ = 0, kv_peak_ = 0, end_s_ = 0;
  /// The simulation runs on times relative to the first arrival, so that a workload starting at
  /// 10^9 s is simulated with the same precision as one starting at 0; records, series and
  /// trace events get it added back.
  double origin_s_ = 0;
  std::int64_t kv_samples_ = 0;
  std::string kv_link_;
  std::vector<TimePoint> series_;
};

void Simulation::build() {
  const auto& m = s_.model;
  const auto& c = s_.cluster;
  // One source of truth for the batching limits (ServingConfig) and the speculative lookahead
  // (SpecConfig), so callers may edit either copy of a setup.
  engine_ = s_.engine;
  engine_.sched.max_num_seqs = s_.serving.max_num_seqs;
  engine_.sched.max_batched_tokens = s_.serving.max_batched_tokens;
  engine_.sched.spec_tokens = engine_.spec.enabled() ? engine_.spec.k : 0;
  const auto& e = engine_;
  // Default communication models: the collectives library's model of this cluster's fabric.
  if (!o_.tp_comm || !o_.kv_transfer) {
    comm_model_ = std::make_unique<coll::CommModel>(c);
    tp_comm_ = std::make_unique<CollectivesTpComm>(*comm_model_);
    kv_default_ = std::make_unique<CollectivesKvTransfer>(*comm_model_);
  }
  const TpCommModel* comm = o_.tp_comm ? o_.tp_comm : tp_comm_.get();
  kv_ = o_.kv_transfer ? o_.kv_transfer : kv_default_.get();

  struct Pool {
    Role role;
    int count, tp;
  };
  std::vector<Pool> pools;
  if (e.pd.enabled) {
    pools = {{Role::Prefill, e.pd.prefill_instances, e.pd.prefill_tp},
             {Role::Decode, e.pd.decode_instances, e.pd.decode_tp}};
  } else {
    pools = {{Role::Aggregated, s_.serving.replicas, s_.serving.tp}};
  }
  // Sizes in int64 before anything is built: each instance owns a block table and a scheduler.
  std::int64_t gpus = 0, instances = 0;
  for (const auto& p : pools) {
    instances += p.count;
    gpus += std::int64_t(p.count) * p.tp * s_.serving.pp;
  }
  if (instances > limits::kMaxInstances)
    throw Error("the deployment has " + std::to_string(instances) + " engine instances; a serving simulation "
                "runs at most " + std::to_string(limits::kMaxInstances) +
                " (for more, simulate one replica and scale its throughput, or use 'infraplan plan serve')");
  if (gpus > c.total_gpus())
    throw Error("the deployment needs " + std::to_string(gpus) + " GPUs (instances × tp × pp) but cluster '" +
                c.name + "' has " + std::to_string(c.total_gpus()) +
                "; add nodes or lower serving.replicas/tp");
  int rank = 0;
  std::int64_t total_blocks = 0;
  // The draw of decoding sequences from the profile's held engine steps (priced once per run).
  std::shared_ptr<const DecodeDrawScale> decode_draw;
  if (o_.power_limited && !o_.backend_factory)
    if (const hw::Profile* pr = cm_.measured_profile(); pr && pr->power && !pr->power->engine_steps.empty())
      decode_draw = std::make_shared<const DecodeDrawScale>(engine_step_draws(cm_));
  for (const auto& p : pools) {
    strat::ServingConfig sc = s_.serving;
    sc.tp = p.tp;
    strat::validate_serving(sc, m, c.gpu);
    std::unique_ptr<SpecProposer> prop;
    if (e.spec.enabled() && p.role != Role::Prefill)
      prop = std::make_unique<SpecProposer>(e.spec, m, sc, cm_);
    const double kv_tok = strat::serving_kv_bytes_per_token_per_gpu(m, sc);
    const std::int64_t cap = instance_kv_capacity_tokens(s_, p.tp, prop != nullptr);
    if (cap < s_.serving.block_size)
      throw Error("serving: the weights of " + m.name + " leave no room for KV cache on " + c.gpu.name +
                  " with tp=" + std::to_string(p.tp) +
                  " (see 'infraplan memory serve'); raise tp or quantize the weights");
    // Every block costs the simulation ~60 bytes of bookkeeping: bound the total before allocating.
    const std::int64_t blocks = cap / s_.serving.block_size;
    total_blocks += blocks * p.count;
    if (total_blocks > limits::kMaxSimulatedKvBlocks)
      throw Error("the deployment's KV caches hold " + std::to_string(total_blocks) + "+ blocks of " +
                  std::to_string(s_.serving.block_size) + " tokens, beyond the " +
                  std::to_string(limits::kMaxSimulatedKvBlocks) +
                  " a serving simulation tracks; raise serving.block_size or simulate fewer instances");
    for (int i = 0; i < p.count; ++i) {
      InstanceSpec is;
      is.role = p.role;
      is.tp = p.tp;
      for (int g = 0; g < p.tp * s_.serving.pp; ++g) is.gpus.push_back(rank++);
      is.block_size = s_.serving.block_size;
      is.num_blocks = std::int32_t(blocks);
      is.block_bytes_per_gpu = kv_tok * double(s_.serving.block_size);
      is.host_blocks = std::int64_t(e.swap_space_GiB * 1073741824.0 / is.block_bytes_per_gpu);
      is.pcie_GBps = c.gpu.pcie_GBps > 0 ? c.gpu.pcie_GBps : 32;
      std::unique_ptr<ExecutionBackend> backend;
      if (o_.backend_factory) {
        backend = o_.backend_factory(is, sc);
      } else {
        BackendOptions bo;
        bo.engine = e.engine;
        bo.quant_group = s_.serving.quant_group;
        bo.power_limited = o_.power_limited;
        bo.decode_draw = decode_draw;
        backend = std::make_unique<SimulatedBackend>(m, sc, cm_, comm, bo);
      }
      const int idx = int(engines_.size());
      engines_.push_back(
          std::make_unique<ServingEngine>(idx, is, e, std::move(backend), prop.get(),
                                          Rng::derive(s_.workload.seed, 1000 + std::uint64_t(idx))));
      if (p.role == Role::Decode)
        decode_.push_back(idx);
      else
        front_.push_back(idx);
      if (o_.trace)
        o_.trace->name_process(idx, std::string(role_name(p.role)) + " " + std::to_string(i) +
                                        " (tp=" + std::to_string(p.tp) + ")");
    }
    if (prop) proposers_.push_back(std::move(prop));
  }
  router_ = std::make_unique<Router>(e.routing, int(front_.size()));
  egress_free_.assign(engines_.size(), 0);
  ingress_free_.assign(engines_.size(), 0);
  if (o_.trace) o_.trace->name_process(int(engines_.size()), "KV transfers");
}

void Simulation::on_arrival(double now, std::int64_t id) {
  Request& r = reqs_[std::size_t(id)];
  r.arrival_s = now;
  std::vector<std::int64_t> load(front_.size());
  for (std::size_t i = 0; i < front_.size(); ++i) load[i] = engines_[std::size_t(front_[i])]->outstanding();
  const int pick = router_->pick(
      r, load, [&](int i) { return engines_[std::size_t(front_[std::size_t(i)])]->cached_blocks(r); });
  const int inst = front_[std::size_t(pick)];
  engines_[std::size_t(inst)]->add(r);
  q_.push(now, EventClass::TryStart, inst);
}

void Simulation::try_start(double now, int inst) {
  ServingEngine& e = *engines_[std::size_t(inst)];
  if (e.busy()) return;
  if (o_.clock) now = std::max(now, o_.clock->now_s());
  auto info = e.start_step(now);
  if (!info) return;
  // Real time: the step ran inside start_step; it ends when the clock says so.
  if (o_.clock) info->duration_s = std::max(0.0, o_.clock->now_s() - now);
  q_.push(now + info->duration_s, EventClass::StepDone, inst);
  if (o_.trace) {
    const char* what = info->prefill_tokens == 0              ? "decode"
                       : info->prefill_tokens == info->tokens ? "prefill"
                                                              : "mixed";
    Json args = {{"tokens", info->tokens},
                 {"prefill_tokens", info->prefill_tokens},
                 {"seqs", info->seqs},
                 {"padding_seqs", info->padding_seqs},
                 {"swap_ms", info->swap_s * 1e3},
                 {"graph_tokens", info->cost.graph_tokens},
                 {"launches", info->cost.launches}};
    const StepCost& c = info->cost;
    if (c.clock_mhz > 0) args["clock_mhz"] = std::round(c.clock_mhz);
    // The simulated step's parts (ms, rounded to 0.1 µs); a measured step (real time) has none.
    if (!o_.clock && c.gemm_s + c.attention_s + c.comm_s + c.other_s + c.launch_s + c.host_s > 0) {
      auto ms = [](double s) { return std::round(s * 1e7) / 1e4; };
      args["gemm_ms"] = ms(c.gemm_s);
      args["attention_ms"] = ms(c.attention_s);
      args["comm_ms"] = ms(c.comm_s);
      args["other_ms"] = ms(c.other_s);
      args["launch_ms"] = ms(c.launch_s);
      args["host_ms"] = ms(c.host_s);
    }
    o_.trace->span(inst, 0, what, "step", origin_s_ + now, info->duration_s, args);
  }
}

void Simulation::complete(const Sequence& s, int inst, double now) {
  const std::int64_t id = s.id();
  if (done_[std::size_t(id)]) throw std::logic_error("request " + std::to_string(id) + " finished twice");
  if (s.num_generated != s.request().output_tokens)
    throw std::logic_error("request " + std::to_string(id) + " finished with " +
                           std::to_string(s.num_generated) + " of " +
                           std::to_string(s.request().output_tokens) + " tokens");
  done_[std::size_t(id)] = 1;
  ++finished_;
  RequestRecord& rec = recs_[std::size_t(id)];
  const Request& r = reqs_[std::size_t(id)];
  rec.id = id;
  rec.klass = r.klass;
  rec.instance = inst;
  rec.arrival_s = r.arrival_s;
  rec.first_scheduled_s = s.first_scheduled_s;
  rec.first_token_s = s.first_token_s;
  rec.finish_s = now;
  rec.prompt_tokens = r.prompt_tokens;
  rec.output_tokens = r.output_tokens;
  rec.cached_tokens = s.cached_tokens;
  rec.preemptions = s.num_preemptions;
  rec.max_itl_s = s.max_itl_s;
  if (s.kv_remote || s_.engine.pd.enabled) {
    const Pending& p = pending_[std::size_t(id)];
    if (p.first_token_s > 0 || s.kv_remote) {
      rec.first_scheduled_s = p.first_scheduled_s;
      rec.cached_tokens = p.cached;
      rec.preemptions += p.preemptions;
    }
  }
  end_s_ = std::max(end_s_, now);
  for (const Release& next : release_->on_finish(id, now))
    q_.push(next.time_s, EventClass::Arrival, -1, next.id);
}

void Simulation::on_step_done(double now, int inst) {
  ServingEngine& e = *engines_[std::size_t(inst)];
  auto finished = e.finish_step(now, itl_);
  for (Sequence* s : finished) {
    const std::int64_t id = s->id();
    if (e.spec().role == Role::Prefill) {
      Pending& p = pending_[std::size_t(id)];
      p.first_token_s = s->first_token_s;
      p.first_scheduled_s = s->first_scheduled_s;
      p.cached = s->cached_tokens;
      p.preemptions = s->num_preemptions;
      p.prefill_instance = inst;
      if (s->request().output_tokens <= 1) {
        complete(*s, inst, now);
        e.release(id);
        continue;
      }
      // KV transfer to the least-loaded decode instance over the cluster's links.
      int dst = decode_.front();
      for (int d : decode_)
        if (engines_[std::size_t(d)]->outstanding() < engines_[std::size_t(dst)]->outstanding()) dst = d;
      const double bytes =
          double(s->prompt_tokens()) * model::kv_bytes_per_token(s_.model, s_.serving.kv_dtype);
      const auto& src_g = e.spec().gpus;
      const auto& dst_g = engines_[std::size_t(dst)]->spec().gpus;
      double start = std::max({now, egress_free_[std::size_t(inst)], ingress_free_[std::size_t(dst)]});
      double dur = kv_->transfer_seconds(src_g, dst_g, bytes);
      if (kv_durations && (*kv_durations)[std::size_t(id)] >= 0) {
        start = now;
        dur = (*kv_durations)[std::size_t(id)];
      }
      transfers.push_back({id, start, src_g, dst_g, bytes});
      egress_free_[std::size_t(inst)] = ingress_free_[std::size_t(dst)] = start + dur;
      ++transfers_;
      transfer_s_ += start + dur - now;
      transfer_times_s_.push_back(start + dur - now);
      transfer_bytes_ += bytes;
      if (kv_link_.empty()) kv_link_ = kv_->link_name(src_g, dst_g);
      q_.push(start + dur, EventClass::KvArrived, dst, id);
      if (o_.trace)
        o_.trace->span(int(engines_.size()), inst, "kv " + std::to_string(id), "kv_transfer", origin_s_ + start, dur,
                       {{"bytes", bytes}, {"to", dst}});
      continue;
    }
    complete(*s, inst, now);
    e.forget(id);
  }
  if (o_.check_invariants_every > 0 && e.steps % o_.check_invariants_every == 0) e.check_invariants();
  sample(now);
  q_.push(now, EventClass::TryStart, inst);
}

void Simulation::on_kv_arrived(double now, int inst, std::int64_t id) {
  const Pending& p = pending_[std::size_t(id)];
  engines_[std::size_t(p.prefill_instance)]->release(id);
  q_.push(now, EventClass::TryStart, p.prefill_instance);
  engines_[std::size_t(inst)]->add_prefilled(reqs_[std::size_t(id)], p.first_token_s);
  q_.push(now, EventClass::TryStart, inst);
}

void Simulation::sample(double now) {
  double usage = 0;
  for (const auto& e : engines_) usage += e->blocks().usage();
  usage /= double(engines_.size());
  kv_usage_sum_ += usage;
  ++kv_samples_;
  kv_peak_ = std::max(kv_peak_, usage);
  if (now < next_sample_ || series_.size() >= 20000) return;
  // The next sample time after `now`, in O(1) however long the simulation was idle.
  next_sample_ += o_.sample_interval_s * (std::floor((now - next_sample_) / o_.sample_interval_s) + 1);
  if (next_sample_ <= now) next_sample_ = now + o_.sample_interval_s;
  TimePoint t;
  t.t_s = origin_s_ + now;
  t.kv_usage = usage;
  std::int64_t q = 0, h = 0;
  for (const auto& e : engines_) {
    t.running += std::int64_t(e->scheduler().running().size());
    t.waiting += std::int64_t(e->scheduler().waiting().size());
    t.preemptions += e->scheduler().num_preemptions();
    q += e->blocks().cache().stats.queried_tokens;
    h += e->blocks().cache().stats.hit_tokens;
  }
  t.prefix_hit_rate = q > 0 ? double(h) / double(q) : 0;
  series_.push_back(t);
  if (o_.trace) {
    o_.trace->counter(0, "kv_usage", origin_s_ + now, {{"kv_usage", usage}});
    o_.trace->counter(0, "queue", origin_s_ + now, {{"running", t.running}, {"waiting", t.waiting}});
  }
}

ServingResult Simulation::run() {
  reqs_ = s_.requests.empty() ? make_requests(s_.workload) : s_.requests;
  if (reqs_.empty()) throw Error("the workload has no requests");
  origin_s_ = reqs_.front().arrival_s;
  for (const auto& r : reqs_) origin_s_ = std::min(origin_s_, r.arrival_s);
  for (auto& r : reqs_) r.arrival_s -= origin_s_;
  for (std::size_t i = 0; i < reqs_.size(); ++i)
    if (reqs_[i].id != std::int64_t(i)) throw Error("setup.requests: ids must be 0..n-1 in order");
  build();
  recs_.assign(reqs_.size(), RequestRecord{});
  done_.assign(reqs_.size(), 0);
  pending_.assign(reqs_.size(), Pending{});
  // Closed loops start their clients at start_s: on the same shifted clock as the arrivals.
  WorkloadSpec shifted = s_.workload;
  for (auto& c : shifted.classes) c.arrival.start_s = std::max(0.0, c.arrival.start_s - origin_s_);
  release_ = std::make_unique<RequestRelease>(reqs_, shifted);
  const std::vector<Release> first = release_->initial();
  for (const Release& r : first) q_.push(r.time_s, EventClass::Arrival, -1, r.id);
  next_sample_ = first.empty() ? 0 : first.front().time_s;
  for (const Release& r : first) next_sample_ = std::min(next_sample_, r.time_s);
  while (!q_.empty()) {
    const Event ev = q_.pop();
    if (!(ev.time_s <= limits::kMaxSimulatedSeconds))
      throw Error("simulated time reached " + number_text(ev.time_s) + " s, beyond the limit of " +
                  number_text(limits::kMaxSimulatedSeconds) +
                  " s (a double no longer resolves step times there); shorten the workload's span");
    if (o_.clock && ev.time_s > o_.clock->now_s()) o_.clock->wait_until(ev.time_s);
    switch (ev.cls) {
      case EventClass::Arrival:
        on_arrival(ev.time_s, ev.request);
        break;
      case EventClass::StepDone:
        on_step_done(ev.time_s, ev.instance);
        break;
      case EventClass::KvArrived:
        on_kv_arrived(ev.time_s, ev.instance, ev.request);
        break;
      case EventClass::TryStart:
        try_start(ev.time_s, ev.instance);
        break;
    }
  }
  for (auto& rec : recs_) {
    rec.arrival_s += origin_s_;
    rec.first_scheduled_s += origin_s_;
    rec.first_token_s += origin_s_;
    rec.finish_s += origin_s_;
  }
  if (finished_ != std::int64_t(reqs_.size()))
    throw std::logic_error("serving simulation ended with " +
                           std::to_string(reqs_.size() - std::size_t(finished_)) + " unfinished requests");

  ServingResult res;
  ServingMetrics& m = res.metrics;
  m = latency_metrics(recs_, s_.workload.slo);
  m.itl_ms = itl_.summary(1e3);
  std::int64_t steps = 0, tokens = 0, padding = 0, q = 0, h = 0;
  double busy = 0;
  for (const auto& e : engines_) {
    InstanceSummary is;
    is.role = role_name(e->spec().role);
    is.tp = e->spec().tp;
    is.gpus = e->spec().gpus;
    is.kv_capacity_tokens = std::int64_t(e->spec().num_blocks) * e->spec().block_size;
    is.steps = e->steps;
    is.busy_fraction = e->busy_s / m.duration_s;
    is.preemptions = e->scheduler().num_preemptions();
    is.prefix_hit_rate = e->blocks().cache().stats.hit_rate();
    res.instances.push_back(is);
    steps += e->steps;
    tokens += e->tokens;
    padding += e->padding_tokens;
    busy += e->busy_s;
    m.preemptions += is.preemptions;
    q += e->blocks().cache().stats.queried_tokens;
    h += e->blocks().cache().stats.hit_tokens;
  }
  m.steps = std::max<std::int64_t>(steps, 1);
  m.mean_batch_tokens = double(tokens) / double(m.steps);
  m.useful_compute_fraction = tokens + padding > 0 ? double(tokens) / double(tokens + padding) : 1;
  m.busy_fraction = busy / (double(engines_.size()) * m.duration_s);
  m.prefix_hit_rate = q > 0 ? double(h) / double(q) : 0;
  m.mean_kv_usage = kv_samples_ ? kv_usage_sum_ / double(kv_samples_) : 0;
  m.peak_kv_usage = kv_peak_;
  m.series = std::move(series_);
  res.distributions = latency_distributions(recs_, itl_);
  // Requests per instance: where each was decoded (or served, aggregated), and under PD where
  // its prompt was prefilled.
  for (const auto& r : recs_)
    if (r.instance >= 0 && std::size_t(r.instance) < res.instances.size())
      ++res.instances[std::size_t(r.instance)].requests;
  if (s_.engine.pd.enabled)
    for (std::size_t id = 0; id < pending_.size(); ++id)
      if (pending_[id].first_token_s > 0 &&
          std::size_t(pending_[id].prefill_instance) < res.instances.size() &&
          pending_[id].prefill_instance != recs_[id].instance)
        ++res.instances[std::size_t(pending_[id].prefill_instance)].requests;
  if (s_.workload.classes.size() > 1 && s_.workload.trace_path.empty()) {
    for (std::size_t c = 0; c < s_.workload.classes.size(); ++c) {
      std::vector<RequestRecord> sub;
      for (const auto& r : recs_)
        if (r.klass == int(c)) sub.push_back(r);
      m.class_names.push_back(s_.workload.classes[c].name);
      m.per_class.push_back(latency_metrics(sub, s_.workload.slo));
    }
  }
  res.kv_transfers = transfers_;
  res.kv_transfer_ms_mean = transfers_ ? transfer_s_ / double(transfers_) * 1e3 : 0;
  res.kv_link = kv_link_;
  res.kv_transfer_ms = percentiles(transfer_times_s_, 1e3);
  res.kv_transfer_bytes = transfer_bytes_;
  res.config = {{"name", s_.name},
                {"model", s_.model.name},
                {"cluster", s_.cluster.name},
                {"gpu", s_.cluster.gpu.name},
                {"serving", s_.serving.to_json()},
                {"engine", engine_.to_json()},
                {"workload", s_.workload.to_json()}};
  if (o_.keep_requests) res.requests = std::move(recs_);
  return res;
}

}  // namespace

Json ServingResult::to_json(bool with_series) const {
  Json j = {{"config", config}, {"metrics", metrics.to_json(with_series)}};
  Json inst = Json::array();
  for (const auto& i : instances)
    inst.push_back({{"role", i.role},
                    {"tp", i.tp},
                    {"gpus", i.gpus},
                    {"kv_capacity_tokens", i.kv_capacity_tokens},
                    {"requests", i.requests},
                    {"steps", i.steps},
                    {"busy_fraction", std::round(i.busy_fraction * 1e6) / 1e6},
                    {"preemptions", i.preemptions},
                    {"prefix_hit_rate", std::round(i.prefix_hit_rate * 1e6) / 1e6}});
  j["instances"] = inst;
  if (kv_transfers > 0) {
    j["kv_transfer"] = {
        {"count", kv_transfers}, {"mean_ms", std::round(kv_transfer_ms_mean * 1e4) / 1e4}, {"link", kv_link}};
    const Json p = kv_transfer_ms.to_json();
    for (const char* k : {"p50", "p90", "p99", "max"}) j["kv_transfer"][std::string(k) + "_ms"] = p[k];
    j["kv_transfer"]["bytes_total"] = kv_transfer_bytes;
  }
  if (with_series && !distributions.levels.empty()) j["distributions"] = distributions.to_json();
  return j;
}

ServingResult simulate_serving(const ServingSetup& setup, const hw::CostModel& cm, const SimOptions& opt) {
  if (!setup.engine.pd.enabled || !setup.engine.pd.simgrid_flows) {
    Simulation sim(setup, cm, opt);
    return sim.run();
  }
  // SimGrid KV flows: a first pass finds when each transfer starts; SimGrid re-times all of them
  // together with link sharing; a second pass uses those durations.
  SimOptions first_opt = opt;
  first_opt.trace = nullptr;
  first_opt.keep_requests = false;
  Simulation first(setup, cm, first_opt);
  first.run();
  const std::vector<double> d = simgrid_kv_durations(setup.cluster, first.transfers);
  std::vector<double> by_id(
      setup.requests.empty() ? make_requests(setup.workload).size() : setup.requests.size(), -1.0);
  for (std::size_t k = 0; k < d.size(); ++k) by_id[std::size_t(first.transfers[k].request)] = d[k];
  Simulation second(setup, cm, opt);
  second.kv_durations = &by_id;
  return second.run();
}

}  // namespace infraplan::sim::serve
