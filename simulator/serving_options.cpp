#include "simulator/serving_options.hpp"

#include "common/limits.hpp"
#include "common/error.hpp"

namespace infraplan::sim::serve {

EngineOptions engine_options_from_json(const Json& raw, const strat::ServingConfig& core,
                                       const std::string& path) {
  EngineOptions e;
  e.sched.max_num_seqs = core.max_num_seqs;
  e.sched.max_batched_tokens = core.max_batched_tokens;
  if (raw.is_null()) {
    e.engine = engine_preset("infraplan", core.max_num_seqs);
    e.sched.admission = e.engine.admission;
    return e;
  }
  JsonObject o(raw, path);
  e.engine = engine_preset_from_json(o, core.max_num_seqs);
  e.sched.admission = e.engine.admission;
  if (o.has("priority"))
    throw Error(o.field("priority") +
                " is not an engine setting; use serving.scheduler = \"priority\" and give "
                "requests a priority (workload.priority or a trace column)");
  const std::string sch = o.get_choice("scheduler", "fcfs", {"fcfs", "priority"});
  e.sched.policy = sch == "priority" ? Policy::Priority : Policy::FCFS;
  const std::string bat = o.get_choice("batching", "continuous", {"continuous", "static"});
  e.sched.batching = bat == "static" ? Batching::Static : Batching::Continuous;
  e.prefix_cache = o.get_bool("prefix_cache", e.sched.batching == Batching::Continuous);
  e.sched.chunked_prefill = o.get_bool("chunked_prefill", true);
  namespace L = limits;
  e.sched.chunk_tokens = o.get_int_min("chunk_tokens", 0, 0, L::kMaxBatchedTokens);
  const std::string pre = o.get_choice("preemption", "recompute", {"recompute", "swap"});
  e.sched.preemption = pre == "swap" ? Preemption::Swap : Preemption::Recompute;
  const std::string rt =
      o.get_choice("routing", "round_robin", {"round_robin", "least_outstanding", "prefix_aware"});
  e.routing = rt == "round_robin"         ? Routing::RoundRobin
              : rt == "least_outstanding" ? Routing::LeastOutstanding
                                          : Routing::PrefixAware;
  e.swap_space_GiB = o.get_number_min("swap_space_GiB", 4, 0, L::kMaxSwapSpaceGiB);
  e.watermark = o.get_number_min("watermark", 0.01, 0, 0.5);
  if (e.watermark >= 0.5)
    throw Error(o.field("watermark") + "=0.5 is invalid: must be in [0, 0.5) (a fraction of the KV blocks)");
  if (auto d = o.opt_object("disaggregation")) {
    d->reject_unknown(
        {"enabled", "prefill_instances", "prefill_tp", "decode_instances", "decode_tp", "kv_flows"});
    e.pd.simgrid_flows = d->get_choice("kv_flows", "model", {"model", "simgrid"}) == "simgrid";
    e.pd.enabled = d->get_bool("enabled", true);
    e.pd.prefill_instances = int(d->get_int_min("prefill_instances", 1, 1, L::kMaxInstances));
    e.pd.prefill_tp = int(d->get_int_min("prefill_tp", core.tp, 1, L::kMaxGpus));
    e.pd.decode_instances = int(d->get_int_min("decode_instances", 1, 1, L::kMaxInstances));
    e.pd.decode_tp = int(d->get_int_min("decode_tp", core.tp, 1, L::kMaxGpus));
  }
  if (auto s = o.opt_object("speculative")) {
    s->reject_unknown({"method", "draft_model", "k", "acceptance", "ngram_host_us"});
    const std::string m = s->get_choice("method", "none", {"none", "draft", "eagle", "ngram"});
    e.spec.method = m == "draft"   ? SpecMethod::Draft
                    : m == "eagle" ? SpecMethod::Eagle
                    : m == "ngram" ? SpecMethod::Ngram
                                   : SpecMethod::None;
    e.spec.k = int(s->get_int_min("k", 4, 0, L::kMaxSpecTokens));
    e.spec.acceptance = s->get_number_min("acceptance", m == "ngram" ? 0.5 : m == "eagle" ? 0.75 : 0.7, 0, 1);
    e.spec.ngram_host_us_per_seq = s->get_number_min("ngram_host_us", 3, 0, L::kMaxHostOverheadUs);
    if (e.spec.method == SpecMethod::Draft) {
      if (!s->has("draft_model"))
        throw Error(s->field("draft_model") +
                    " is required for method 'draft' (a preset name or a model object)");
      e.spec.draft_model =
          model::resolve_model(raw.at("speculative").at("draft_model"), s->field("draft_model"));
    }
  }
  e.sched.spec_tokens = e.spec.enabled() ? e.spec.k : 0;
  if (e.sched.batching == Batching::Static && e.spec.enabled())
    throw Error(o.field("speculative") + " needs serving.batching = \"continuous\"");
  return e;
}

Json EngineOptions::to_json() const {
  Json j = {{"scheduler", sched.policy == Policy::Priority ? "priority" : "fcfs"},
            {"batching", sched.batching == Batching::Static ? "static" : "continuous"},
            {"prefix_cache", prefix_cache},
            {"chunked_prefill", sched.chunked_prefill},
            {"chunk_tokens", sched.chunk_tokens},
            {"preemption", sched.preemption == Preemption::Swap ? "swap" : "recompute"},
            {"routing", routing_name(routing)},
            {"engine", engine.name},
            {"engine_preset", engine.to_json()},
            {"admission", admission_name(sched.admission)},
            {"host_overhead_us", engine.host_step_us},
            {"swap_space_GiB", swap_space_GiB},
            {"watermark", watermark}};
  if (pd.enabled)
    j["disaggregation"] = {{"prefill_instances", pd.prefill_instances},
                           {"prefill_tp", pd.prefill_tp},
                           {"decode_instances", pd.decode_instances},
                           {"decode_tp", pd.decode_tp},
                           {"kv_flows", pd.simgrid_flows ? "simgrid" : "model"}};
  if (spec.enabled()) {
    j["speculative"] = {{"method", spec_method_name(spec.method)},
                        {"k", spec.k},
                        {"acceptance", spec.acceptance},
                        {"expected_tokens_per_step", expected_tokens_per_step(spec.acceptance, spec.k)}};
    if (spec.draft_model) j["speculative"]["draft_model"] = spec.draft_model->name;
  }
  return j;
}

}  // namespace infraplan::sim::serve
