#include "strategies/training_schedule.hpp"

#include <algorithm>

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

}  // namespace

std::vector<PipelineStep> pipeline_order(PpSchedule s, int p, int stage, std::int64_t m, int v) {
  std::vector<PipelineStep> out;
  if (s == PpSchedule::GPipe) {
    out.reserve(std::size_t(2 * m));
    for (std::int64_t i = 0; i < m; ++i) out.push_back({true, i, 0});
    for (std::int64_t i = m - 1; i >= 0; --i) out.push_back({false, i, 0});
    return out;
  }
  if (s == PpSchedule::OneFOneB || v <= 1) {
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
  const std::int64_t total = m * v;
  const std::int64_t warm = std::min<std::int64_t>(std::int64_t(p - stage - 1) * 2 + std::int64_t(v - 1) * p, total);
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

LayerRange stage_layers(std::int64_t layers, int p, int v, int stage, int chunk) {
  if (v > 1) {
    const std::int64_t per = layers / (std::int64_t(p) * v);
    return {(std::int64_t(chunk) * p + stage) * per, per};
  }
  const std::int64_t base = layers / p, extra = layers % p;
  const std::int64_t first = stage * base + std::min<std::int64_t>(stage, extra);
  return {first, base + (stage < extra ? 1 : 0)};
}

double ideal_bubble_fraction(int p, std::int64_t m, int v) {
  return double(p - 1) / (double(v) * double(m) + double(p - 1));
}

}  // namespace infraplan::strat
