#include "strategies/training_schedule.hpp"

#include <algorithm>
#include <deque>

namespace infraplan::strat {

namespace {

// Megatron's mapping of the k-th virtual micro-batch to (micro-batch, chunk) for interleaving.
PipelineStep virtual_step(std::int64_t k, int p, int v, bool forward) {
  const std::int64_t group = k / (std::int64_t(p) * v);
  const std::int64_t in_group = k % (std::int64_t(p) * v);
  int chunk = int(in_group / p);
  if (!forward) chunk = v - 1 - chunk;
  return {forward, group * p + in_group % p, chunk};
}

std::vector<PipelineStep> one_f_one_b(int p, int stage, std::int64_t m) {
  std::vector<PipelineStep> out;
  const std::int64_t warm = std::min<std::int64_t>(p - stage - 1, m);
  out.reserve(std::size_t(2 * m));
  std::int64_t f = 0, b = 0;
  for (; f < warm; ++f) out.push_back({true, f, 0});
  while (f < m) {
    out.push_back({true, f++, 0});
    out.push_back({false, b++, 0});
  }
  while (b < m) out.push_back({false, b++, 0});
  return out;
}

// ZB-H1: 1F1B's forwards and input-gradient backwards; stage s lets up to s weight-gradient
// passes wait, so the W passes of later stages fill the cool-down while the B chain runs back.
std::vector<PipelineStep> zb_h1(int p, int stage, std::int64_t m) {
  std::vector<PipelineStep> out;
  out.reserve(std::size_t(3 * m));
  const std::int64_t warm = std::min<std::int64_t>(p - stage - 1, m), delay = stage;
  std::int64_t f = 0, b = 0, w = 0;
  auto backward = [&] {
    out.push_back({false, b++, 0, BackwardPart::Input});
    if (b - w > delay) out.push_back({false, w++, 0, BackwardPart::Weight});
  };
  for (; f < warm; ++f) out.push_back({true, f, 0});
  while (f < m) {
    out.push_back({true, f++, 0});
    backward();
  }
  while (b < m) backward();
  while (w < m) out.push_back({false, w++, 0, BackwardPart::Weight});
  return out;
}

// DualPipe's eight phases for rank `stage`. Phase 0 is the direction in which this rank is in
// the first half of the pipeline (position h = min(r, p − 1 − r)), phase 1 the other one.
std::vector<PipelineStep> dualpipe(int p, int stage, std::int64_t m) {
  const int half = p / 2, h = std::min(stage, p - 1 - stage);
  const std::int64_t per_dir = m / 2;
  // Slot (pipeline_layout.hpp): slot 0 = stage r, travelled by the first half of the
  // micro-batches; slot 1 = stage p − 1 − r, by the second half.
  const int slot_of[2] = {stage < half ? 0 : 1, stage < half ? 1 : 0};
  std::int64_t next_f[2] = {0, 0}, next_b[2] = {0, 0};
  std::deque<PipelineStep> waiting_w;
  std::vector<PipelineStep> out;
  out.reserve(std::size_t(3 * m));
  auto mb = [&](int phase, std::int64_t i) { return slot_of[phase] == 0 ? i : per_dir + i; };
  auto F = [&](int phase, bool paired = false) {
    PipelineStep s{true, mb(phase, next_f[phase]++), slot_of[phase]};
    s.paired = paired;
    out.push_back(s);
  };
  auto B = [&](int phase, bool split) {
    PipelineStep s{false, mb(phase, next_b[phase]++), slot_of[phase]};
    if (split) {
      s.part = BackwardPart::Input;
      PipelineStep w = s;
      w.part = BackwardPart::Weight;
      waiting_w.push_back(w);
    }
    out.push_back(s);
  };
  auto W = [&] {
    out.push_back(waiting_w.front());
    waiting_w.pop_front();
  };
  auto FB = [&](int f_phase, int b_phase) {
    F(f_phase, true);
    B(b_phase, false);
  };
  for (int i = 0; i < (half - h - 1) * 2; ++i) F(0);  // 1: forwards of the near direction
  for (int i = 0; i < h + 1; ++i) F(0), F(1);          // 2: forward pairs of both directions
  for (int i = 0; i < half - h - 1; ++i) {             // 3: zero-bubble B, W, F
    B(1, true);
    W();
    F(1);
  }
  const std::int64_t main = per_dir - p + h + 1;  // 4: steady state, F&B pairs
  for (std::int64_t i = 0; i < main; ++i) {
    if (i == 0 && h == half - 1) {
      F(0);  // the middle ranks do not overlap the first pair (it would only add to the bubble)
      B(1, false);
    } else {
      FB(0, 1);
    }
    FB(1, 0);
  }
  for (int i = 0; i < half - h - 1; ++i) {  // 5: backward, then F&B
    B(1, false);
    FB(1, 0);
  }
  bool split = false;  // 6: backward drain, the second half's W passes deferred
  for (int i = 0; i < h + 1; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) split = true;
    B(1, split);
    if (i == (h + 1) / 2 && h % 2 == 0) split = true;
    B(0, split);
  }
  for (int i = 0; i < half - h - 1; ++i) {  // 7: W, then B with its W deferred
    W();
    B(0, true);
  }
  while (!waiting_w.empty()) W();  // 8: the remaining W passes
  return out;
}

}  // namespace

std::vector<PipelineStep> pipeline_order(PpSchedule s, int p, int stage, std::int64_t m, int v) {
  std::vector<PipelineStep> out;
  switch (s) {
    case PpSchedule::GPipe:
      out.reserve(std::size_t(2 * m));
      for (std::int64_t i = 0; i < m; ++i) out.push_back({true, i, 0});
      for (std::int64_t i = m - 1; i >= 0; --i) out.push_back({false, i, 0});
      return out;
    case PpSchedule::ZBH1:
      return zb_h1(p, stage, m);
    case PpSchedule::DualPipe:
      return dualpipe(p, stage, m);
    case PpSchedule::OneFOneB:
      return one_f_one_b(p, stage, m);
    case PpSchedule::Interleaved:
      break;
  }
  if (v <= 1) return one_f_one_b(p, stage, m);
  const std::int64_t total = m * v;
  const std::int64_t warm =
      std::min<std::int64_t>(std::int64_t(p - stage - 1) * 2 + std::int64_t(v - 1) * p, total);
  out.reserve(std::size_t(2 * total));
  std::int64_t f = 0, b = 0;
  for (; f < warm; ++f) out.push_back(virtual_step(f, p, v, true));
  while (f < total) {
    out.push_back(virtual_step(f++, p, v, true));
    out.push_back(virtual_step(b++, p, v, false));
  }
  while (b < total) out.push_back(virtual_step(b++, p, v, false));
  return out;
}

double ideal_bubble_fraction(int p, std::int64_t m, int v) {
  return double(p - 1) / (double(v) * double(m) + double(p - 1));
}

double schedule_bubble_seconds(PpSchedule s, int p, int v, const PassTimes& t) {
  const double full = t.f + t.b + t.w;
  switch (s) {
    case PpSchedule::GPipe:
    case PpSchedule::OneFOneB:
      return (p - 1) * full;
    case PpSchedule::Interleaved:
      return (p - 1) * full / std::max(1, v);
    case PpSchedule::ZBH1:
      return (p - 1) * std::max(0.0, t.f + t.b - t.w);
    case PpSchedule::DualPipe: {
      const double fb = full, b_full = t.b + t.w;  // F&B without overlap inside the pair
      return std::max(0.0, (p / 2.0 - 1) * (fb + b_full - 3 * t.w));
    }
  }
  return 0;
}

double schedule_inflight_microbatches(PpSchedule s, int p, int stage, std::int64_t m, int v) {
  const double mm = double(m);
  switch (s) {
    case PpSchedule::GPipe:
      return mm;
    case PpSchedule::OneFOneB:
      return std::min(double(p - stage), mm);
    case PpSchedule::Interleaved: {
      const double base = std::min(double(p - stage), mm);
      return std::min(base * (1 + double(p - 1 - stage) / (double(p) * v)), mm);
    }
    case PpSchedule::ZBH1:
      return std::min(double(p), mm);
    case PpSchedule::DualPipe:
      return std::min((p + 1) / 2.0, mm);
  }
  return mm;
}

}  // namespace infraplan::strat
