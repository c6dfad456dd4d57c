#include "simulator/limited_step_clock.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "common/error.hpp"
#include "hardware/clocked_cost_model.hpp"
#include "hardware/power_limiter.hpp"

namespace infraplan::sim::train {

namespace {

/// A stretch of the walked GPU's timeline (top clock) with one compute op or none, and the
/// memory traffic of the collectives running beside it.
struct Piece {
  double start = 0, end = 0;
  int op = -1;             ///< index into the compute ops, -1: no compute
  double comm_TBps = 0;    ///< collectives' HBM traffic rate
};

struct ComputeOp {
  double start = 0, end = 0;
  double low_ratio = 1;    ///< base time at the low clock over that at the top clock
  hw::PowerDemand demand;  ///< at the top clock
};

}  // namespace

StepClock limited_step_clock(const hw::PowerModel& law, const hw::CostModel& cost, const LimitedClockInput& in) {
  const double tau = cost.power_limiter_tau_s();
  if (!(tau > 0) || !in.top_graph || !in.top_times || !in.low_graph)
    throw Error("limited_step_clock: needs the limiter's time constant and both priced graphs");
  const strat::WorkGraph& g = *in.top_graph;
  const ExecutionTimes& x = *in.top_times;
  const double top_mhz = law.max_clock_mhz();
  const double low_mhz = std::min(in.low_mhz, top_mhz);
  const double idle_w = cost.idle_power_w();
  const Dtype dt = in.eight_bit ? Dtype::FP8 : Dtype::BF16;
  // The clock's time factor, (reference / f)^β: every op's time is affine in it (GEMMs in their
  // compute share, attention fully, memory-bound kernels not at all).
  auto factor = [&](double mhz) { return hw::ClockedCostModel(cost, mhz).factor(dt); };
  const double f_top = factor(top_mhz), f_low = factor(low_mhz);

  std::vector<ComputeOp> ops;
  struct Comm {
    double start, end, TBps;
  };
  std::vector<Comm> comms;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const strat::Op& op = g.ops[i];
    if (op.lane != in.lane || op.stream == strat::Stream::Host) continue;
    const double d = x.end[i] - x.start[i];
    if (!(d > 0)) continue;
    if (op.group >= 0) {
      const double traffic = i < in.comm_traffic_bytes.size() ? in.comm_traffic_bytes[i] : 0.0;
      if (traffic > 0) comms.push_back({x.start[i], x.end[i], traffic * 1e-12 / d});
      continue;
    }
    ComputeOp o;
    o.start = x.start[i], o.end = x.end[i];
    const double base = op.seconds, low = in.low_graph->ops[i].seconds;
    o.low_ratio = base > 0 && low > base ? low / base : 1.0;
    // Attention kernels (attention_fwd / _bwd / _recompute) draw more per matmul FLOP than GEMMs:
    // the law's attention term (its e16 when the profile has no attention points).
    const bool attention = std::string_view(op.name).rfind("attention", 0) == 0;
    if (op.flops > 0)
      (in.eight_bit ? o.demand.tflops8
       : attention  ? o.demand.attn_tflops16
                    : o.demand.tflops16) = op.flops * 1e-12 / d;
    else
      (law.knows_elementwise() ? o.demand.ew_TBps : o.demand.TBps) = op.bytes * 1e-12 / d;
    ops.push_back(o);
  }
  std::sort(ops.begin(), ops.end(), [](const ComputeOp& a, const ComputeOp& b) { return a.start < b.start; });

  StepClock c;
  c.reference_mhz = cost.reference_clock_mhz();
  c.max_mhz = top_mhz;
  c.limit_w = law.limit_w();
  c.operand_energy_factor = law.normal_operand_factor();
  c.time_constant_s = tau;
  c.mhz = top_mhz;
  c.power_w = idle_w;
  if (ops.empty() || !(x.makespan > 0)) return c;

  // The timeline cut at every compute and collective boundary (one compute stream: its ops do
  // not overlap one another).
  std::vector<double> cuts = {0.0, x.makespan};
  for (const auto& o : ops) cuts.push_back(o.start), cuts.push_back(o.end);
  for (const auto& m : comms) cuts.push_back(m.start), cuts.push_back(m.end);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::sort(comms.begin(), comms.end(), [](const Comm& a, const Comm& b) { return a.start < b.start; });
  std::vector<Piece> pieces;
  {
    std::size_t oi = 0, ci = 0;
    std::vector<const Comm*> open;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      const double a = cuts[k], b = cuts[k + 1];
      if (!(b > a)) continue;
      const double mid = 0.5 * (a + b);
      while (oi < ops.size() && ops[oi].end <= mid) ++oi;
      while (ci < comms.size() && comms[ci].start <= mid) open.push_back(&comms[ci++]);
      open.erase(std::remove_if(open.begin(), open.end(), [mid](const Comm* m) { return m->end <= mid; }), open.end());
      Piece p;
      p.start = a, p.end = b;
      p.op = oi < ops.size() && ops[oi].start <= mid && mid < ops[oi].end ? int(oi) : -1;
      for (const Comm* m : open) p.comm_TBps += m->TBps;
      if (!pieces.empty() && pieces.back().op == p.op && pieces.back().comm_TBps == p.comm_TBps &&
          pieces.back().end == p.start)
        pieces.back().end = b;
      else
        pieces.push_back(p);
    }
  }

  // An op's time at clock f: top · (1 + (ρ − 1)·(F(f) − F(top)) / (F(low) − F(top))).
  auto stretch = [&](const ComputeOp& o, double f) {
    return f_low > f_top ? 1.0 + (o.low_ratio - 1.0) * (f - f_top) / (f_low - f_top) : 1.0;
  };
  hw::PowerLimiter lim(law.limit_w(), idle_w, tau);
  double busy_top_s = 0, limited_s = 0, energy_j = 0, extra_s = 0;
  hw::PowerDemand work;
  for (int pass = 0; pass < 2; ++pass) {  // the step repeats: the second pass counts
    busy_top_s = limited_s = energy_j = extra_s = 0;
    work = {};
    for (const Piece& p : pieces) {
      const double len = p.end - p.start;
      hw::PowerDemand d;
      d.TBps = p.comm_TBps;
      if (p.op < 0) {
        if (d.TBps > 0) {
          const double draw = law.power_w(d, top_mhz);
          lim.run({draw, len, len});
          energy_j += len * draw;
        } else {
          lim.idle(len);
          energy_j += len * idle_w;
        }
        continue;
      }
      const ComputeOp& o = ops[std::size_t(p.op)];
      d.tflops16 = o.demand.tflops16, d.tflops8 = o.demand.tflops8, d.attn_tflops16 = o.demand.attn_tflops16;
      d.TBps += o.demand.TBps, d.ew_TBps = o.demand.ew_TBps;
      const double draw = law.power_w(d, top_mhz);
      // The GPU's clock moves in 15 MHz steps: the capped clock rounded down to one.
      const double cap_mhz = std::max(15.0, std::floor(law.sustained_clock_mhz(d) / 15.0) * 15.0);
      const double capped = cap_mhz < top_mhz ? len * stretch(o, factor(cap_mhz)) : len;
      const auto r = lim.run({draw, len, capped});
      limited_s += r.seconds;
      extra_s += r.seconds - len;
      energy_j += r.top_fraction * len * draw + (r.seconds - r.top_fraction * len) * std::min(draw, law.limit_w());
      busy_top_s += len;
      work.tflops16 += o.demand.tflops16 * len, work.tflops8 += o.demand.tflops8 * len;
      work.attn_tflops16 += o.demand.attn_tflops16 * len;
      work.TBps += o.demand.TBps * len, work.ew_TBps += o.demand.ew_TBps * len;
    }
  }
  // The one clock at which the lane's compute takes limited_s: its time is affine in F(f) and
  // falls as f rises; bisection on f between 15 MHz and the top clock.
  double slope = 0;  // dT/dF
  for (const Piece& p : pieces)
    if (p.op >= 0 && f_low > f_top)
      slope += (p.end - p.start) * (ops[std::size_t(p.op)].low_ratio - 1.0) / (f_low - f_top);
  if (slope > 0 && limited_s > busy_top_s * (1 + 1e-9)) {
    const double f_target = f_top + (limited_s - busy_top_s) / slope;
    double lo = 15.0, hi = top_mhz;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      (factor(mid) > f_target ? lo : hi) = mid;
    }
    c.mhz = 0.5 * (lo + hi);
  }
  const double span = x.makespan + extra_s;
  c.power_w = span > 0 ? energy_j / span : idle_w;
  if (busy_top_s > 0) {
    c.demand.tflops16 = work.tflops16 / busy_top_s, c.demand.tflops8 = work.tflops8 / busy_top_s;
    c.demand.attn_tflops16 = work.attn_tflops16 / busy_top_s;
    c.demand.TBps = work.TBps / busy_top_s, c.demand.ew_TBps = work.ew_TBps / busy_top_s;
  }
  return c;
}

}  // namespace infraplan::sim::train
