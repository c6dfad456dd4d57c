#include "simulator/engine_step_draw.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.hpp"
#include "simulator/execution_backend.hpp"

namespace infraplan::sim::serve {

std::vector<EngineStepDraw> engine_step_draws(const hw::CostModel& cm) {
  std::vector<EngineStepDraw> out;
  const hw::Profile* prof = cm.measured_profile();
  const hw::PowerModel* law = cm.power_model();
  if (!prof || !prof->power || !law) return out;
  const auto& par = law->params();
  const double fmax = law->max_clock_mhz();
  const double idle = cm.idle_power_w() > 0 ? cm.idle_power_w() : 0.15 * law->limit_w();
  std::int64_t largest = 1;
  for (const auto& p : prof->power->engine_steps) largest = std::max(largest, p.batch);
  const EnginePreset engine = engine_preset("infraplan", int(std::min<std::int64_t>(largest, 1 << 16)));
  for (std::size_t i = 0; i < prof->power->engine_steps.size(); ++i) {
    const hw::Profile::EngineStepPoint& p = prof->power->engine_steps[i];
    const std::string field = "power.engine_steps[" + std::to_string(i) + "].model";
    if (p.model.is_string()) {
      const auto names = model::preset_names();
      if (std::find(names.begin(), names.end(), p.model.get<std::string>()) == names.end())
        throw Error(field + ": '" + p.model.get<std::string>() +
                    "' is not a model preset (a profile names presets or holds the model object)");
    }
    const model::ModelSpec m = model::resolve_model(p.model, field);
    strat::ServingConfig sc;
    BackendOptions bo;
    bo.engine = engine;
    SimulatedBackend be(m, sc, cm, nullptr, bo);
    BatchShape b;
    for (std::int64_t s = 0; s < p.batch; ++s) b.items.push_back({1, p.context, false, true, nullptr});
    const SimulatedBackend::TopClockWork w = be.top_clock_work(b);
    hw::PowerDemand d;
    d.tflops16 = w.flops / w.gpu_s * 1e-12;
    d.TBps = w.bytes / w.gpu_s * 1e-12;
    d.ew_TBps = w.memory_bytes / w.gpu_s * 1e-12;
    const double dyn = law->power_w(d, fmax) - par.base_w;
    EngineStepDraw e;
    e.model = p.name.empty() ? m.name : p.name;
    e.batch = p.batch;
    e.context = p.context;
    e.role = p.role;
    e.measured_mhz = p.clock_mhz;
    e.measured_w = p.power_w;
    e.busy_fraction = std::clamp(p.gpu_seconds / p.wall_seconds, 0.05, 1.0);
    e.step_seconds = w.gpu_s;
    e.demand = d;
    e.law_mhz = law->sustained_clock_mhz(d);
    const double busy_w = (p.power_w - (1.0 - e.busy_fraction) * idle) / e.busy_fraction;
    const double x = std::pow(std::min(p.clock_mhz, fmax) / fmax, par.exponent);
    if (dyn > 0 && x > 0 && busy_w > par.base_w) e.scale = std::clamp((busy_w - par.base_w) / (dyn * x), 0.25, 4.0);
    out.push_back(std::move(e));
  }
  return out;
}

hw::PowerDemand with_draw_scale(hw::PowerDemand d, double k) {
  d.tflops16 *= k, d.tflops8 *= k, d.TBps *= k, d.ew_TBps *= k;
  return d;
}

DecodeDrawScale::DecodeDrawScale(const std::vector<EngineStepDraw>& draws) {
  std::map<std::int64_t, std::vector<double>> by_batch;
  for (const EngineStepDraw& d : draws)
    if (d.role == "fit") by_batch[d.batch].push_back(d.scale);
  for (auto& [batch, v] : by_batch) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    pts_.emplace_back(std::log(double(batch)), med);
  }
}

double DecodeDrawScale::at(double rows) const {
  if (pts_.empty() || rows <= 0) return 1.0;
  const double x = std::log(rows);
  if (x <= pts_.front().first) return pts_.front().second;
  if (x >= pts_.back().first) return pts_.back().second;
  auto hi = std::upper_bound(pts_.begin(), pts_.end(), x, [](double v, const auto& p) { return v < p.first; });
  auto lo = hi - 1;
  const double t = (x - lo->first) / (hi->first - lo->first);
  return lo->second + t * (hi->second - lo->second);
}

}  // namespace infraplan::sim::serve
