#include "strategies/pipeline_layout.hpp"

#include <algorithm>
#include <numeric>

#include "common/error.hpp"

namespace infraplan::strat {

int PipelineLayout::chunk_at(int stage, int slot) const {
  if (dual_) return slot == 0 ? stage : p_ - 1 - stage;
  return slot * p_ + stage;
}

PipelineLayout::Place PipelineLayout::place(int k, std::int64_t mb, std::int64_t micro_batches) const {
  if (dual_) return reversed(mb, micro_batches) ? Place{p_ - 1 - k, 1} : Place{k, 0};
  return {k % p_, k / p_};
}

std::int64_t PipelineLayout::position_in_chunk(std::int64_t layer) const {
  for (const LayerRange& r : ranges_)
    if (layer >= r.first && layer < r.first + r.count) return layer - r.first;
  return layer;
}

std::int64_t PipelineLayout::layers_on_stage(int stage) const {
  std::int64_t n = 0;
  for (int s = 0; s < slots_; ++s) n += slot_layers(stage, s).count;
  return n;
}

namespace {

std::string counts(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Spreads `n` layers over the `v` chunks of rank `stage`: equal shares, the remainder to the
// chunks that hold neither the embedding nor the LM head first (in chunk order), then to those.
std::vector<std::int64_t> spread(std::int64_t n, int v, int stage, int p) {
  std::vector<std::int64_t> out(std::size_t(v), n / v);
  std::vector<int> order;
  auto special = [&](int c) {
    const int k = c * p + stage;
    return k == 0 || k == p * v - 1;
  };
  for (int c = 0; c < v; ++c)
    if (!special(c)) order.push_back(c);
  for (int c = 0; c < v; ++c)
    if (special(c)) order.push_back(c);
  for (std::int64_t i = 0; i < n % v; ++i) ++out[std::size_t(order[std::size_t(i)])];
  return out;
}

}  // namespace

PipelineLayout pipeline_layout(const model::ModelSpec& m, const TrainingConfig& t) {
  PipelineLayout L;
  const int p = t.pp;
  L.p_ = p;
  L.dual_ = t.pp_schedule == PpSchedule::DualPipe;
  L.slots_ = chunks_per_stage(t);
  const int v = L.dual_ ? 1 : L.slots_;  // model chunks per rank in visiting order
  const int n = p * v;
  const std::string field = "training.pp_layers";
  std::vector<std::int64_t> per(std::size_t(n), 0);  // layers per model chunk
  const auto& given = t.pp_layers;
  if (given.empty()) {
    if (v > 1 && m.layers % n != 0)
      throw Error("training.pp_virtual_stages=" + std::to_string(v) + ": layers=" + std::to_string(m.layers) +
                  " must be divisible by pp×pp_virtual_stages=" + std::to_string(n) +
                  ", or give pp_layers for unequal chunks");
    for (int k = 0; k < n; ++k) per[std::size_t(k)] = m.layers / n + (k < m.layers % n ? 1 : 0);
  } else {
    const std::int64_t sum = std::accumulate(given.begin(), given.end(), std::int64_t(0));
    if (given.size() != std::size_t(p) && !(v > 1 && given.size() == std::size_t(n)))
      throw Error(field + " has " + std::to_string(given.size()) + " entries; give one per pipeline stage (pp=" +
                  std::to_string(p) + ")" +
                  (v > 1 ? " or one per model chunk (pp×pp_virtual_stages=" + std::to_string(n) + ")" : ""));
    if (sum != m.layers)
      throw Error(field + "=" + counts(given) + " sums to " + std::to_string(sum) + " but " + m.name + " has " +
                  std::to_string(m.layers) + " layers");
    if (given.size() == std::size_t(n)) {
      per = given;
    } else {
      for (int s = 0; s < p; ++s) {
        auto part = spread(given[std::size_t(s)], v, s, p);
        for (int c = 0; c < v; ++c) per[std::size_t(c * p + s)] = part[std::size_t(c)];
      }
    }
  }
  for (int k = 0; k < n; ++k)
    if (per[std::size_t(k)] == 0 && k != 0 && k != n - 1) {
      const int s = k % p;
      throw Error(field + (given.empty() ? std::string() : "=" + counts(given)) + " leaves model chunk " +
                  std::to_string(k) + " (stage " + std::to_string(s) + (v > 1 ? ", chunk " + std::to_string(k / p) : "") +
                  ") without layers; only the chunks holding the embedding or the LM head may be empty" +
                  (v > 1 ? " (give each stage at least pp_virtual_stages=" + std::to_string(v) + " layers)" : ""));
    }
  if (n == 1 && per[0] == 0) throw Error(field + ": the model needs at least one layer");
  std::int64_t first = 0;
  for (int k = 0; k < n; ++k) {
    L.ranges_.push_back({first, per[std::size_t(k)]});
    first += per[std::size_t(k)];
  }
  return L;
}

}  // namespace infraplan::strat
