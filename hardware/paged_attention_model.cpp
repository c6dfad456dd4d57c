#include "hardware/paged_attention_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <sstream>

#include "common/error.hpp"
#include "hardware/log_interpolation.hpp"

namespace infraplan::hw {
namespace {

constexpr std::int64_t kQueryRows = 128;  // query rows per CTA (both prefill kernels)
constexpr int kDecodeCtasPerSm = 2;       // the decode kernel's resident CTAs per multiprocessor
constexpr double kTimedHeadDim = 128;     // head dimension of the timed kernels (bf16 KV)
// Above this many CTAs the longest-first deal is replaced by its bound (average queue + longest
// CTA): the two agree within one CTA's tiles, a small part of such a launch.
constexpr std::size_t kExactCtas = std::size_t(1) << 16;

/// How the timed prefill kernel walks keys: `key_tile` keys at a time, its 128 query rows in
/// `groups` equal groups that each stop at their own last row's position. A CTA's cost in tiles is
/// its longest group's tiles plus `second` times the other groups' (they share the tensor cores and
/// overlap part of their softmax with the longest one's products) plus `handoff` tiles for each
/// other group that has rows (the groups wait on each other's products once per tile: a fixed
/// latency that a CTA of few tiles does not hide).
struct Walk {
  std::int64_t key_tile = 64;
  int groups = 1;
  double second = 1, handoff = 0;
};

/// Key tiles of every CTA of a launch (one entry per CTA of one head, times heads).
std::vector<double> launch_tiles(const std::vector<std::array<std::int64_t, 2>>& chunks, std::int64_t heads,
                                 const Walk& w) {
  std::vector<double> tiles;
  const std::int64_t rows = kQueryRows / w.groups;
  for (const auto& [q, cached] : chunks) {
    const std::int64_t blocks = (q + kQueryRows - 1) / kQueryRows;
    for (std::int64_t j = 0; j < blocks; ++j) {
      double longest = 0, rest = 0;
      for (int g = 0; g < w.groups; ++g) {
        const std::int64_t first = kQueryRows * j + rows * g;
        if (first >= q) break;
        const std::int64_t last = cached + std::min(first + rows, q);
        const double n = double((last + w.key_tile - 1) / w.key_tile);
        rest += std::min(n, longest) + (g > 0 ? w.handoff : 0.0);
        longest = std::max(n, longest);
      }
      tiles.insert(tiles.end(), std::size_t(heads), longest + w.second * rest);
    }
  }
  return tiles;
}

/// CTAs of a launch (as a double: a hostile profile or question may ask for billions).
double launch_ctas(const std::vector<std::array<std::int64_t, 2>>& chunks, std::int64_t heads) {
  double n = 0;
  for (const auto& [q, cached] : chunks) n += double((q + kQueryRows - 1) / kQueryRows) * double(heads);
  return n;
}

/// The launch's makespan in tiles (per-CTA cost included) and its CTA count: the longest-first deal
/// up to kExactCtas CTAs, above it the bound from the tile total in closed form (the CTAs are not
/// listed).
double launch_makespan(const std::vector<std::array<std::int64_t, 2>>& chunks, std::int64_t heads,
                       double per_cta, int slots, const Walk& w, double* ctas) {
  *ctas = launch_ctas(chunks, heads);
  if (*ctas <= double(kExactCtas)) return cta_makespan(launch_tiles(chunks, heads, w), per_cta, slots);
  double total = 0, longest = 0;
  const double per_group = 1 + w.second * (w.groups - 1);
  const double handoffs = w.handoff * (w.groups - 1);
  for (const auto& [q, cached] : chunks) {
    const double blocks = double((q + kQueryRows - 1) / kQueryRows);
    // Σ_j ceil((cached + 128 (j + 1)) / tile) over the query blocks, from above, for every group.
    const double tile = double(w.key_tile);
    total += double(heads) * (blocks * ((double(cached) / tile + 1) * per_group + handoffs + per_cta) +
                              per_group * double(kQueryRows) / tile * blocks * (blocks + 1) / 2);
    longest = std::max(longest, std::ceil(double(cached + q) / tile) * per_group + handoffs + per_cta);
  }
  return total / slots + longest;
}

/// Keys a launch's chunks attend to, new and cached, summed over the chunks.
double launch_keys(const std::vector<std::array<std::int64_t, 2>>& chunks) {
  double keys = 0;
  for (const auto& [q, cached] : chunks) keys += double(q + cached);
  return keys;
}

/// Distinct key and value bytes a launch reads: every chunk's keys, K and V, bf16 at the timed
/// head dimension.
double launch_kv_bytes(double keys, std::int64_t kv_heads) {
  return keys * double(kv_heads) * kTimedHeadDim * 2 /* K and V */ * 2 /* bf16 */;
}

std::string chunk_label(const std::vector<std::array<std::int64_t, 2>>& chunks, int heads) {
  std::ostringstream o;
  o << "prefill h" << heads << " ";
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    std::size_t same = i;
    while (same + 1 < chunks.size() && chunks[same + 1] == chunks[i]) ++same;
    if (i) o << "+";
    if (same > i) o << (same - i + 1) << "x";
    o << chunks[i][0] << "@" << chunks[i][1];
    i = same;
  }
  return o.str();
}

}  // namespace

double cta_makespan(std::vector<double> tiles, double per_cta, int slots) {
  if (tiles.empty() || slots <= 0) return 0;
  for (double& t : tiles) t += per_cta;
  if (tiles.size() <= std::size_t(slots)) return *std::max_element(tiles.begin(), tiles.end());
  if (tiles.size() > kExactCtas) {
    double total = 0, longest = 0;
    for (double t : tiles) total += t, longest = std::max(longest, t);
    return total / slots + longest;
  }
  std::sort(tiles.begin(), tiles.end(), std::greater<>());
  std::priority_queue<double, std::vector<double>, std::greater<>> q;
  for (int i = 0; i < slots; ++i) q.push(0.0);
  double span = 0;
  for (double t : tiles) {
    const double at = q.top() + t;
    q.pop();
    q.push(at);
    span = std::max(span, at);
  }
  return span;
}

PagedAttentionModel::PagedAttentionModel(const Profile::ServingAttention& s, int sms, double l2_bytes) {
  if (sms <= 0) throw Error("serving_attention: the profile's device has no multiprocessor count");
  if (s.prefill_key_tile <= 0 || s.prefill_ctas_per_sm <= 0 || s.prefill_row_groups <= 0 ||
      kQueryRows % s.prefill_row_groups != 0)
    throw Error(
        "serving_attention: prefill_key_tile, prefill_ctas_per_sm and prefill_row_groups (a divisor of "
        "128) must be positive");
  params_.key_tile = s.prefill_key_tile;
  params_.ctas_per_sm = s.prefill_ctas_per_sm;
  params_.row_groups = s.prefill_row_groups;
  params_.sms = sms;
  params_.l2_bytes = std::max(0.0, l2_bytes);
  params_.slots = params_.ctas_per_sm * sms;
  struct Pt {
    const Profile::ServingAttention::Prefill* p;
    bool fit;
  };
  std::vector<Pt> pts;
  for (const auto& p : s.prefill) pts.push_back({&p, p.chunks.size() == 1});
  const auto nfit = std::count_if(pts.begin(), pts.end(), [](const Pt& p) { return p.fit; });
  if (nfit < 3) throw Error("serving_attention: need at least 3 single-chunk prefill points to fit the launch model");
  // The grid of the terms fitted by search: per-CTA cost, shared-SM slow-down (two CTAs per
  // multiprocessor only), the other row groups' share and handoff (several groups only; a coarser
  // per-CTA step keeps the grid near the one-group size, ~1,000 points).
  struct Candidate {
    double c, shared;
    Walk walk;
  };
  std::vector<Candidate> grid;
  const bool groups = params_.row_groups > 1;
  const double c_step = groups ? 0.5 : 0.25;
  for (int ci = 0; ci * c_step <= 4.0; ++ci)
    for (int si = 0; si <= (params_.ctas_per_sm > 1 ? 20 : 0); ++si)
      for (int gi = 0; gi <= (groups ? 10 : 0); ++gi)
        for (int hi = 0; hi <= (groups ? 8 : 0); ++hi)
          grid.push_back({c_step * ci, 1.0 + 0.05 * si,
                          Walk{params_.key_tile, params_.row_groups, groups ? 0.1 * gi : 1.0, 1.0 * hi}});
  // At each point, weighted least squares in relative error for (t0, t_tile); the best point wins.
  double best = INFINITY;
  for (const Candidate& g : grid) {
    double sw = 0, swx = 0, swxx = 0, swy = 0, swxy = 0;
    std::vector<double> xs;
    for (const Pt& p : pts) {
      if (!p.fit) continue;
      double ctas = 0;
      const double span = launch_makespan(p.p->chunks, p.p->heads, g.c, params_.slots, g.walk, &ctas);
      const double x = span * occupancy_factor(ctas, g.shared);
      const double y = p.p->seconds, w = 1.0 / (y * y);
      sw += w, swx += w * x, swxx += w * x * x, swy += w * y, swxy += w * x * y;
      xs.push_back(x);
    }
    const double det = sw * swxx - swx * swx;
    double t0 = det > 0 ? (swy * swxx - swx * swxy) / det : 0;
    double a = det > 0 ? (sw * swxy - swx * swy) / det : 0;
    if (t0 < 0 || !(a > 0)) t0 = 0, a = swxy / swxx;
    double err = 0;
    std::size_t i = 0;
    for (const Pt& p : pts)
      if (p.fit) {
        const double r = (t0 + a * xs[i++]) / p.p->seconds - 1;
        err += r * r;
      }
    if (err < best - 1e-15) {
      best = err;
      params_.t0 = t0, params_.t_tile = a, params_.c_cta = g.c, params_.shared_slowdown = g.shared;
      params_.second_group = g.walk.second, params_.group_handoff = g.walk.handoff;
    }
  }

  // Decode sharing: each shared batch against the same batch without sharing.
  struct Pair {
    double u, r;
    bool fit;
    std::string label;
  };
  std::vector<Pair> pairs;
  for (const auto& d : s.decode) {
    if (d.groups >= d.batch || d.shared_prefix == 0) continue;
    for (const auto& o : s.decode)
      if (o.groups == o.batch && o.batch == d.batch && o.context == d.context && o.heads == d.heads &&
          o.kv_heads == d.kv_heads) {
        const double all = double(d.batch) * double((d.context + 15) / 16);
        std::ostringstream l;
        l << "decode h" << d.heads << "/" << d.kv_heads << " b" << d.batch << " ctx" << d.context << " shared "
          << d.shared_prefix << " in " << d.groups << (d.groups == 1 ? " group" : " groups");
        pairs.push_back({double(d.unique_blocks) / all, d.seconds / o.seconds, d.groups == 1, l.str()});
        break;
      }
  }
  // Unshared grids: every (heads, KV heads), over the contexts measured at every batch.
  UnsharedDecode unshared;
  for (const auto& d : s.decode)
    if (d.shared_prefix == 0 && d.groups == d.batch)
      unshared[{d.heads, d.kv_heads}][{double(d.batch), double(d.context)}] = d.seconds;
  for (const auto& [hk, cells] : unshared) {
    DecodeGrid g;
    g.heads = hk.first, g.kv_heads = hk.second;
    std::map<double, std::size_t> batches_at;  // context -> batches measured there
    for (const auto& [bc, sec] : cells) {
      g.batch.push_back(bc.first);
      ++batches_at[bc.second];
    }
    std::sort(g.batch.begin(), g.batch.end());
    g.batch.erase(std::unique(g.batch.begin(), g.batch.end()), g.batch.end());
    for (const auto& [c, n] : batches_at)
      if (n == g.batch.size()) g.context.push_back(c);
    if (g.batch.size() < 2 || g.context.size() < 2) continue;
    for (double b : g.batch)
      for (double c : g.context) g.seconds.push_back(cells.at({b, c}));
    grids_.push_back(std::move(g));
  }
  fit_partial_tiles(s.decode_tile_tokens, unshared);
  // The prefill checks, with the streaming floor from the decode grids just built.
  for (const Pt& p : pts)
    checks_.push_back({chunk_label(p.p->chunks, p.p->heads), p.fit ? "fit" : "holdout", p.p->seconds,
                       prefill_launch_seconds(p.p->chunks, p.p->heads, p.p->kv_heads),
                       launch_kv_bytes(launch_keys(p.p->chunks), p.p->kv_heads)});
  double num = 0, den = 0;
  for (const Pair& p : pairs)
    if (p.fit) num += (p.r - p.u) * (1 - p.u), den += (1 - p.u) * (1 - p.u);
  if (den > 0) {
    params_.rho = std::clamp(num / den, 0.05, 1.0);
    params_.has_decode = true;
    for (const Pair& p : pairs)
      checks_.push_back({p.label, p.fit ? "fit" : "holdout", p.r, decode_share_factor(p.u)});
  }
}

void PagedAttentionModel::fit_partial_tiles(int tile, const UnsharedDecode& unshared) {
  if (tile <= 0) return;
  params_.tile = tile;
  // Each context c = n·tile + r (0 < r < tile) measured beside both whole-tile neighbours at the
  // same batch: the share g of the step from n to n + 1 tiles that it pays, against its filled
  // share f = r / tile. Model: g = φ + (1 − φ) f (φ: what any partial tile costs of a whole one).
  // Fitted by least squares on the short contexts (under 8 tiles), held out on the long ones.
  struct Pt {
    double f, g, lo, hi, measured;
    bool fit;
    std::string label;
  };
  std::vector<Pt> pts;
  for (const auto& [hk, cells] : unshared)
    for (const auto& [bc, sec] : cells) {
      const auto c = std::int64_t(bc.second), r = c % tile, n = c / tile;
      if (r == 0) continue;
      auto lo = cells.find({bc.first, double(n * tile)}), hi = cells.find({bc.first, double((n + 1) * tile)});
      if (lo == cells.end() || hi == cells.end() || !(hi->second > lo->second)) continue;
      std::ostringstream l;
      l << "decode h" << hk.first << "/" << hk.second << " b" << bc.first << " ctx" << c << " (partial tile)";
      pts.push_back({double(r) / tile, (sec - lo->second) / (hi->second - lo->second), lo->second, hi->second, sec,
                     n < 8, l.str()});
    }
  double num = 0, den = 0;
  for (const Pt& p : pts)
    if (p.fit) num += (p.g - p.f) * (1 - p.f), den += (1 - p.f) * (1 - p.f);
  if (!(den > 0)) return;
  params_.partial_tile = std::clamp(num / den, 0.0, 1.0);
  for (const Pt& p : pts)
    checks_.push_back({p.label, p.fit ? "fit" : "holdout", p.measured,
                       p.lo + (p.hi - p.lo) * (params_.partial_tile + (1 - params_.partial_tile) * p.f)});
}

double PagedAttentionModel::decode_context(double context, double padding) const {
  return context + (params_.partial_tile > 0 ? params_.partial_tile * std::max(0.0, padding) : 0.0);
}

std::optional<double> PagedAttentionModel::decode_seconds(double batch, double context, std::int64_t heads,
                                                         std::int64_t kv_heads) const {
  // The grid of these heads; else one of the same query heads per KV head (the nearest KV heads),
  // a CTA per (sequence, KV head) walking the same tiles either way, so B sequences of K KV heads
  // launch the CTAs of B · K / K' sequences of the grid's K' (a 40-head MHA model on the 32-head
  // MHA grid); else the nearest group size: the kernel pads a CTA's query heads to one 8-row MMA
  // tile (calib_kernels/decode_attention.cu), so up to 8 query heads per KV head a CTA does the same
  // work per key tile whatever the group; what differs (the query loads, the output) is small.
  constexpr std::int64_t kMaxPaddedGroup = 8;
  const DecodeGrid* g = nullptr;
  for (const DecodeGrid& x : grids_)
    if (x.heads == heads && x.kv_heads == kv_heads) g = &x;
  if (!g && kv_heads > 0 && heads % kv_heads == 0) {
    const std::int64_t want = heads / kv_heads;
    double best_group = INFINITY, best_kv = INFINITY;
    for (const DecodeGrid& x : grids_) {
      if (x.kv_heads <= 0 || x.heads % x.kv_heads != 0) continue;
      const std::int64_t group = x.heads / x.kv_heads;
      if (group != want && (group > kMaxPaddedGroup || want > kMaxPaddedGroup)) continue;
      // Rank by group distance (log), then, within the same group, by KV-head distance.
      const double dg = std::abs(std::log(double(group)) - std::log(double(want)));
      const double dk = group == want ? double(std::abs(x.kv_heads - kv_heads)) : 0.0;
      if (dg < best_group - 1e-12 || (std::abs(dg - best_group) <= 1e-12 && dk < best_kv)) {
        g = &x;
        best_group = dg, best_kv = dk;
      }
    }
  }
  double b = g ? batch * double(kv_heads) / double(g->kv_heads) : batch;
  if (!g || b < g->batch.front() || context < g->context.front() || context > g->context.back())
    return std::nullopt;
  // Past the largest batch the launch is many waves of CTAs (at least two per resident slot there):
  // time in proportion to the CTAs.
  double scale = 1.0;
  if (b > g->batch.back()) {
    if (g->batch.back() * double(g->kv_heads) < 2.0 * kDecodeCtasPerSm * params_.sms) return std::nullopt;
    scale = b / g->batch.back();
    b = g->batch.back();
  }
  const Pos pb = locate(g->batch, b), pc = locate(g->context, context);
  const std::size_t nc = g->context.size();
  auto at = [&](std::size_t bi, std::size_t ci) { return g->seconds[bi * nc + ci]; };
  const double v = lerp_log(lerp_log(at(pb.i0, pc.i0), at(pb.i0, pc.i1), pc.w),
                            lerp_log(at(pb.i1, pc.i0), at(pb.i1, pc.i1), pc.w), pb.w);
  if (!std::isfinite(v)) return std::nullopt;
  return v * scale;
}

double PagedAttentionModel::prefill_launch_seconds(const std::vector<std::array<std::int64_t, 2>>& chunks,
                                                   std::int64_t heads, std::int64_t kv_heads) const {
  if (chunks.empty() || heads <= 0) return 0;
  double ctas = 0;
  const double span = launch_makespan(
      chunks, heads, params_.c_cta, params_.slots,
      Walk{params_.key_tile, params_.row_groups, params_.second_group, params_.group_handoff}, &ctas);
  const double tiles = params_.t0 + params_.t_tile * span * occupancy_factor(ctas, params_.shared_slowdown);
  return std::max(tiles, kv_stream_seconds(chunks, heads, kv_heads));
}

double PagedAttentionModel::kv_stream_seconds(const std::vector<std::array<std::int64_t, 2>>& chunks,
                                              std::int64_t heads, std::int64_t kv_heads) const {
  if (kv_heads <= 0 || chunks.empty() || !(params_.l2_bytes > 0)) return 0;
  const double keys = launch_keys(chunks);
  if (launch_kv_bytes(keys, kv_heads) <= params_.l2_bytes) return 0;
  const double n = double(chunks.size());
  return decode_seconds(n, keys / n, heads, kv_heads).value_or(0.0);
}

double PagedAttentionModel::occupancy_factor(double ctas, double shared) const {
  // The share of multiprocessors that hold two CTAs: none up to one CTA per multiprocessor, all
  // from two per multiprocessor on (none ever for a kernel of one CTA per multiprocessor).
  if (params_.ctas_per_sm < 2) return 1.0;
  const double sms = double(params_.slots) / params_.ctas_per_sm;
  const double two = std::clamp((ctas - sms) / sms, 0.0, 1.0);
  return 1.0 + (shared - 1.0) * two;
}

double PagedAttentionModel::decode_share_factor(double unique_fraction) const {
  const double u = std::clamp(unique_fraction, 0.0, 1.0);
  return params_.has_decode ? u + params_.rho * (1 - u) : 1.0;
}

double PagedAttentionModel::max_error(const std::string& kind, const std::string& role) const {
  double m = 0;
  for (const Check& c : checks_)
    if (c.role == role && c.label.rfind(kind, 0) == 0) m = std::max(m, std::fabs(c.modelled / c.measured - 1));
  return m;
}

}  // namespace infraplan::hw
