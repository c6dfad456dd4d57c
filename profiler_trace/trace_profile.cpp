#include "profiler_trace/trace_profile.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/framework_costs.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/profile.hpp"
#include "profiler_trace/compiled_rope_trace.hpp"
#include "profiler_trace/eager_table.hpp"
#include "profiler_trace/trace_gpu.hpp"
#include "strategies/compiled_ops.hpp"
#include "strategies/framework.hpp"

namespace infraplan::ptrace {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// GPU seconds of each call (op instance), summed over its kernels, keyed by the op instance.
template <class Pred>
std::map<int, double> call_seconds(const std::vector<ClassifiedWork>& work, Pred pred) {
  std::map<int, double> calls;
  for (const auto& w : work)
    if (w.unit_op >= 0 && pred(w)) calls[w.unit_op] += w.seconds();
  return calls;
}

std::vector<TracedGemm> traced_gemms(const std::vector<ClassifiedWork>& work) {
  std::map<int, const ClassifiedWork*> first;
  for (const auto& w : work)
    if (w.gemm && w.unit_op >= 0 && w.phase != Phase::Optimizer) first.emplace(w.unit_op, &w);
  auto secs = call_seconds(work, [](const ClassifiedWork& w) { return w.gemm.has_value(); });
  std::map<std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t>,
           TracedGemm>
      by_shape;
  for (const auto& [op, w] : first) {
    const GemmCall& g = *w->gemm;
    auto& t = by_shape[{g.dtype, g.layout, g.m, g.n, g.k, g.batch}];
    t.dtype = g.dtype, t.layout = g.layout, t.m = g.m, t.n = g.n, t.k = g.k, t.batch = g.batch;
    t.seconds.push_back(secs[op]);
  }
  std::vector<TracedGemm> out;
  for (auto& [k, t] : by_shape) out.push_back(std::move(t));
  return out;
}

std::vector<TracedAttention> traced_attention(const std::vector<ClassifiedWork>& work) {
  std::map<int, const ClassifiedWork*> first;
  for (const auto& w : work)
    if (w.attention && w.unit_op >= 0) first.emplace(w.unit_op, &w);
  auto secs = call_seconds(work, [](const ClassifiedWork& w) { return w.attention.has_value(); });
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  std::map<Key, TracedAttention> by_shape;
  std::map<Key, bool> causal_seen;
  for (const auto& [op, w] : first) {
    const AttentionCall& a = *w->attention;
    Key k{a.batch, a.heads, a.kv_heads, a.q_len, a.kv_len, a.head_dim};
    auto& t = by_shape[k];
    if (!a.backward) {
      t.shape = a;
      causal_seen[k] = true;
    } else if (!causal_seen.count(k)) {
      t.shape = a;  // a backward seen first: shape from it (causal from its signature)
      t.shape.backward = false;
    }
    (a.backward ? t.backward_seconds : t.forward_seconds).push_back(secs[op]);
  }
  std::vector<TracedAttention> out;
  for (auto& [k, t] : by_shape) out.push_back(std::move(t));
  return out;
}

/// Parameters and tensors the optimizer step updated: the fused / foreach optimizer op's first
/// tensor list (params), once per op instance; when the trace records no tensor-list shapes (as
/// PyTorch 2.11 does), the gradients autograd accumulated (AccumulateGrad nodes, one per
/// parameter tensor, with the gradient's shape).
void optimizer_params(const TraceStep& s, const std::vector<ClassifiedWork>& work, double* params,
                      double* tensors) {
  *params = 0, *tensors = 0;
  for (const auto& op : s.ops)
    if (op.ev->name == "torch::autograd::AccumulateGrad" && !op.ev->inputs.empty() &&
        op.ev->inputs[0].shapes.size() == 1) {
      *params += op.ev->inputs[0].elements();
      *tensors += 1;
    }
  if (*params > 0) return;
  std::map<int, bool> seen;
  for (const auto& w : work) {
    if (w.phase != Phase::Optimizer || w.work->op < 0) continue;
    for (int a = w.work->op; a >= 0; a = s.ops[std::size_t(a)].parent) {
      const TraceEvent& ev = *s.ops[std::size_t(a)].ev;
      if ((ev.name.rfind("aten::_fused_adam", 0) == 0 || ev.name.rfind("aten::_fused_sgd", 0) == 0 ||
           ev.name == "aten::_foreach_add_" || ev.name == "aten::_foreach_lerp_") &&
          !ev.inputs.empty() && ev.inputs[0].shapes.size() > 1) {
        if (!seen.emplace(a, true).second) break;
        if (ev.name.rfind("aten::_foreach", 0) == 0 && (*params > 0)) break;  // foreach: count once
        *params += ev.inputs[0].elements();
        *tensors += double(ev.inputs[0].shapes.size());
        break;
      }
    }
  }
}

/// Multiplies every number of a (nested) array by `f`; nulls stay.
void scale_numbers(Json& j, double f) {
  if (j.is_number())
    j = j.get<double>() * f;
  else if (j.is_array())
    for (auto& x : j) scale_numbers(x, f);
}

/// "TN" -> "tn", as profiles spell layouts.
std::string lower_layout(std::string l) {
  for (auto& c : l) c = char(std::tolower(static_cast<unsigned char>(c)));
  return l;
}

/// Host time of the step's module-level work as the trace saw it: per outermost ATen op of the
/// forward (by name) and per autograd node of the backward (by node), the calls and the median
/// host µs. Recorded for the provenance only: the profiler's own cost per recorded op makes these
/// longer than the same step's host time without it.
Json traced_host(const TraceStep& s) {
  std::map<std::string, std::vector<double>> fwd, bwd;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const TraceEvent& e = *s.ops[i].ev;
    if (e.kind != EventKind::CpuOp) continue;
    bool inside_aten = false, in_backward = false, in_optimizer = false;
    for (int a = s.ops[i].parent; a >= 0; a = s.ops[std::size_t(a)].parent) {
      const std::string& n = s.ops[std::size_t(a)].ev->name;
      inside_aten = inside_aten || n.rfind("aten::", 0) == 0;
      in_backward = in_backward || n.rfind("autograd::engine", 0) == 0;
      in_optimizer = in_optimizer || n.rfind("Optimizer.", 0) == 0;
    }
    if (in_optimizer) continue;
    if (e.name.rfind("autograd::engine::evaluate_function: ", 0) == 0)
      bwd[e.name.substr(37)].push_back(e.dur_us);
    else if (!in_backward && !inside_aten && e.name.rfind("aten::", 0) == 0)
      fwd[e.name].push_back(e.dur_us);
  }
  auto table = [](const std::map<std::string, std::vector<double>>& m) {
    Json j = Json::object();
    for (const auto& [name, v] : m) j[name] = {{"calls", v.size()}, {"median_us", median_of(v)}};
    return j;
  };
  return {{"forward_ops", table(fwd)},
          {"backward_nodes", table(bwd)},
          {"note",
           "host µs under torch.profiler (record_shapes): longer than without the profiler; recorded, "
           "not used (the profile's host costs stay the base's)"}};
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

double TracedGemm::median() const { return median_of(seconds); }

TraceCalibration calibrate_from_trace(const TraceCalibrationOptions& o) {
  std::string framework = o.framework;  // "auto" = detect
  if (!framework.empty() && strat::parse_framework(framework, "--framework") == strat::Framework::Auto)
    framework.clear();
  const KinetoTrace t = read_kineto_trace(o.trace_path);
  const TraceStep step = find_step(t, o.step);
  if (step.work.empty())
    throw Error(
        "--from-trace: " + step.name + " of '" + o.trace_path +
        "' launched no GPU kernels; profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] "
        "around a training step");
  TraceCalibration r;
  r.gpu = trace_gpu(t, step, o.gpu);

  bool any_shapes = false;
  for (const auto& op : step.ops) any_shapes = any_shapes || !op.ev->inputs.empty();
  if (!any_shapes)
    throw Error("--from-trace: '" + o.trace_path +
                "' records no CPU op shapes; profile with record_shapes=True (and the CPU activity)");
  const auto work = classify(step);
  r.summary = summarize(step, work, o.trace_path);
  if (r.summary.seconds_by_phase[std::size_t(Phase::Backward)] <= 0)
    throw Error("--from-trace: " + step.name + " of '" + o.trace_path +
                "' has no backward pass (no autograd kernels); trace a whole training step "
                "(forward, backward, optimizer)");
  r.framework = framework.empty() ? r.summary.framework : framework;

  // Base profile.
  Json base_json = o.base_profile.empty()
                       ? parse_json_text(hw::default_profile_json(r.gpu), "embedded:" + r.gpu)
                       : read_json_file(o.base_profile);
  if (o.base_profile.empty() && base_json.is_null())
    throw Error("--from-trace: no built-in profile for " + r.gpu +
                " to start from; pass --base PROFILE.json");
  const hw::Profile base =
      o.base_profile.empty() ? hw::default_profile(r.gpu) : hw::load_profile_for(o.base_profile, r.gpu);
  hw::CalibratedCostModel cost(base, hw::find_gpu(r.gpu));

  Json p = base_json;
  // The base's validation record describes the base's tables, not these: a trace profile has none.
  p.erase("validation_error");
  // Framework section: the base's host costs stay (measured without a profiler attached); the
  // name, the eager table and the optimizer's GPU time come from the trace.
  Json fw = p.contains("framework") && p["framework"].is_object() ? p["framework"] : Json::object();
  if (!fw.contains("op_dispatch_us_forward")) fw["op_dispatch_us_forward"] = 0.0;
  if (!fw.contains("op_dispatch_us_backward")) fw["op_dispatch_us_backward"] = 0.0;
  if (!fw.contains("optimizer_us_per_tensor")) fw["optimizer_us_per_tensor"] = 0.0;
  fw["name"] = r.framework;
  const EagerCalls calls = eager_calls(step, work);
  r.eager_types = calls.size();
  fw["elementwise"] =
      merge_eager_table(base, cost, fw.contains("elementwise") ? fw["elementwise"] : Json(), calls);
  // A traced kernel took what it took at the traced step's clock, which is what this profile
  // stands for: it does not follow the clock share of the base's top-clock row.
  if (fw.contains("clock_share") && fw["clock_share"].contains("ops") && fw["clock_share"]["ops"].is_object())
    for (const auto& [type, pts] : calls) fw["clock_share"]["ops"].erase(type);

  // Optimizer step on the GPU.
  for (const auto& w : work)
    if (w.phase == Phase::Optimizer) r.optimizer_seconds += w.seconds();
  optimizer_params(step, work, &r.optimizer_params, &r.optimizer_tensors);
  if (r.optimizer_seconds > 0 && r.optimizer_params > 0)
    fw["optimizer_gpu"] = {{"seconds", r.optimizer_seconds},
                           {"params", r.optimizer_params},
                           {"tensors", r.optimizer_tensors},
                           {"seconds_per_param", r.optimizer_seconds / r.optimizer_params},
                           {"seconds_per_tensor", r.optimizer_seconds / std::max(1.0, r.optimizer_tensors)}};
  // Inductor's rotary kernels (a compiled step): the base rows scaled to this machine's speed on
  // them, forward and backward apart, at the traced element counts (both precisions' rows: the
  // kernels differ only in the tables' dtype).
  if (r.framework == "torch-compile" && fw.contains("elementwise"))
    if (const auto rope = traced_compiled_rope(work)) {
      Json& ops = fw["elementwise"]["ops"];
      for (const bool amp : {true, false})
        for (const bool bwd : {false, true}) {
          const std::string name = strat::compiled_rope_row(amp, bwd);
          const double elements = bwd ? rope->rotated_elements : rope->forward_elements;
          const double traced = bwd ? rope->backward_seconds : rope->forward_seconds;
          const auto base_s = hw::eager_op_seconds(base, name, elements);
          if (!ops.contains(name) || !base_s || *base_s <= 0 || elements <= 0 || traced <= 0) continue;
          const double f = traced / *base_s;
          scale_numbers(ops[name]["seconds"], f);
          ops[name]["trace_scale"] = {{"factor", f},
                                      {"elements", elements},
                                      {"traced_seconds_per_layer", traced},
                                      {"layers", rope->layers}};
        }
    }
  p["framework"] = fw;

  // GEMMs at their exact shapes.
  r.gemms = traced_gemms(work);
  Json& tables = p["tables"];
  Json shapes = tables.contains("gemm_shapes") && tables["gemm_shapes"].is_array() ? tables["gemm_shapes"]
                                                                                   : Json::array();
  Json rows = Json::array();
  if (tables.contains("gemm_rows") && tables["gemm_rows"].is_array())
    for (const auto& row : tables["gemm_rows"]) rows.push_back(row);
  std::set<std::tuple<std::string, std::string, std::int64_t, std::int64_t>> covered;  // rows written
  for (const auto& g : r.gemms) {
    if (g.dtype != "bf16" && g.dtype != "f16" && g.dtype != "fp8e4m3") continue;
    if (g.layout != "TN" && g.layout != "NN" && g.layout != "NT") continue;  // the cost model's three
    const std::string fmt = g.dtype == "f16" ? "fp16" : g.dtype == "fp8e4m3" ? "fp8" : "bf16";
    hw::GemmShape shape{g.m, g.n, g.k,
                        fmt == "fp16"  ? Dtype::FP16
                        : fmt == "fp8" ? Dtype::FP8
                                       : Dtype::BF16,
                        1};
    Json e = {{"dtype", fmt},
              {"m", g.m},
              {"n", g.n},
              {"k", g.k},
              {"layout", lower_layout(g.layout)},
              {"seconds", g.median() / double(g.batch)},
              {"repeats", Json::array()},
              {"source", "trace"},
              {"base_seconds", cost.gemm_from_tables(shape).seconds}};
    for (double s : g.seconds) e["repeats"].push_back(s / double(g.batch));
    if (g.batch > 1) e["batch"] = g.batch;
    shapes.push_back(e);
    // Other token counts of the same weight: a row along m (the token axis of the forward and the
    // input gradient) at the base table's m values, the base prediction scaled by what the trace
    // measured at its own m (this machine's speed on this (n, k) against the base profile).
    const hw::GemmTable* table = base.gemm_table(shape.dtype);
    const double base_here = cost.gemm_from_tables(shape).seconds;
    if (g.batch == 1 && g.layout != "NT" && table && base_here > 0 &&
        !covered.count({fmt, g.layout, g.n, g.k})) {
      covered.insert({fmt, g.layout, g.n, g.k});
      const double ratio = g.median() / base_here;
      std::set<double> ms(table->m.begin(), table->m.end());
      ms.insert(double(g.m));
      Json points = Json::array();
      for (double m : ms) {
        if (m < double(g.m) / 64 || m > double(g.m) * 64) continue;
        hw::GemmShape at = shape;
        at.m = std::int64_t(m);
        const double secs = m == double(g.m) ? g.median() : cost.gemm_from_tables(at).seconds * ratio;
        points.push_back({{"m", std::int64_t(m)}, {"seconds", secs}});
      }
      if (points.size() >= 2)
        rows.push_back(
            {{"dtype", fmt},
             {"n", g.n},
             {"k", g.k},
             {"layout", lower_layout(g.layout)},
             {"source", "trace: base tables scaled by the traced time at m = " + std::to_string(g.m)},
             {"scale", ratio},
             {"points", points}});
    }
  }
  tables["gemm_shapes"] = shapes;
  if (!rows.empty()) tables["gemm_rows"] = rows;

  // Attention calls, each priced by the base's tables of the kernel it ran: SDPA's flash backend is
  // FlashAttention-2 (the base's flash2 tables where it has them), the others its default tables.
  r.attention = traced_attention(work);
  auto kernel_of = [&](const std::string& backend) {
    return backend == "flash" && base.has_prefill_kernel(hw::AttentionKernel::Flash2)
               ? hw::AttentionKernel::Flash2
               : hw::AttentionKernel::Default;
  };
  Json att = Json::array();
  for (const auto& a : r.attention) {
    if (a.forward_seconds.empty()) continue;
    Json e = {{"batch", a.shape.batch},           {"heads", a.shape.heads},
              {"kv_heads", a.shape.kv_heads},     {"q_len", a.shape.q_len},
              {"kv_len", a.shape.kv_len},         {"head_dim", a.shape.head_dim},
              {"causal", a.shape.causal},         {"backend", a.shape.backend},
              {"dtype", a.shape.dtype},           {"seconds", median_of(a.forward_seconds)},
              {"calls", a.forward_seconds.size()}};
    if (!a.backward_seconds.empty()) e["backward_seconds"] = median_of(a.backward_seconds);
    hw::AttentionPrefillShape as;
    as.batch = a.shape.batch, as.q_len = a.shape.q_len, as.kv_len = a.shape.kv_len, as.heads = a.shape.heads;
    as.kv_heads = a.shape.kv_heads, as.head_dim = a.shape.head_dim, as.causal = a.shape.causal;
    as.kernel = kernel_of(a.shape.backend);
    e["kernel"] = hw::attention_kernel_name(as.kernel);
    e["base_seconds"] = cost.attention_prefill(as).seconds;
    if (auto ratio = hw::attention_backward_ratio(base, as))
      e["base_backward_seconds"] = *ratio * cost.attention_prefill(as).seconds;
    att.push_back(e);
  }
  if (!att.empty()) tables["attention_points"] = att;
  // The attention table the model's head width uses, of the kernel the trace ran, scaled to this
  // machine's speed at the most called traced shape (forward and backward apart): other sequence
  // lengths and batches keep the table's measured shape, at the level the trace measured. A trace
  // that ran FlashAttention-2 also puts its scaled table under the default key: the job runs that
  // kernel, whichever attention_kernel a scenario on this profile names.
  const Json* most = nullptr;
  for (const auto& e : att)
    if (e["causal"].get<bool>() &&
        (!most || e["calls"].get<std::size_t>() > (*most)["calls"].get<std::size_t>()))
      most = &e;
  const hw::AttentionKernel traced_kernel =
      most ? hw::parse_attention_kernel((*most)["kernel"].get<std::string>(), "attention_points.kernel")
           : hw::AttentionKernel::Default;
  const std::string key =
      traced_kernel == hw::AttentionKernel::Flash2 ? "attention_prefill_flash2" : "attention_prefill";
  if (most && tables.contains(key) && tables[key].is_array()) {
    const int hd = (*most)["head_dim"].get<int>();
    const hw::PrefillTable* used = base.prefill_table(hd, traced_kernel);
    for (auto& tab : tables[key]) {
      if (!used || tab.value("head_dim", 0) != used->head_dim) continue;
      const double f = (*most)["seconds"].get<double>() / (*most)["base_seconds"].get<double>();
      const double b =
          most->contains("backward_seconds") && most->contains("base_backward_seconds")
              ? (*most)["backward_seconds"].get<double>() / (*most)["base_backward_seconds"].get<double>()
              : f;
      scale_numbers(tab["seconds"], f);
      if (tab.contains("backward_seconds")) scale_numbers(tab["backward_seconds"], b);
      tab["trace_scale"] = {{"forward", f}, {"backward", b}, {"at", *most}};
      if (traced_kernel == hw::AttentionKernel::Flash2) {
        bool replaced = false;
        for (auto& d : tables["attention_prefill"])
          if (d.value("head_dim", 0) == used->head_dim) d = tab, replaced = true;
        if (!replaced) tables["attention_prefill"].push_back(tab);
        continue;  // the default tables' fit points stay: they fit the block size, not the level
      }
      // The fit points the attention block size is fitted on move with their table.
      if (tables.contains("attention_prefill_fit_points") &&
          tables["attention_prefill_fit_points"].is_array())
        for (auto& fp : tables["attention_prefill_fit_points"]) {
          if (fp.value("head_dim", 0) != used->head_dim) continue;
          if (fp.contains("seconds")) scale_numbers(fp["seconds"], f);
          if (fp.contains("backward_seconds")) scale_numbers(fp["backward_seconds"], b);
        }
    }
  }

  p["trace_calibration"] = {{"trace", o.trace_path},
                            {"step", step.name},
                            {"gpu", r.gpu},
                            {"framework", r.framework},
                            {"framework_detected", r.summary.framework},
                            {"date", utc_now()},
                            {"command", o.command},
                            {"base", o.base_profile.empty() ? "embedded:" + r.gpu : o.base_profile},
                            {"summary", summary_json(r.summary)},
                            {"host", traced_host(step)}};
  // Refuse to hand out a profile that does not load.
  hw::parse_profile(p, "calibrated profile");
  r.profile = std::move(p);
  return r;
}

}  // namespace infraplan::ptrace
