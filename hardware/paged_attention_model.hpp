#pragma once
// The serving engine's paged attention kernels as a step launches them, from the profile's
// "serving_attention" measurements (infraplan-bench attention).
//
// Prefill: every prefill chunk of a step goes into one launch of the engine's paged prefill kernel
// (engine/paged_prefill_attention.cu, mma.sync; engine/paged_prefill_wgmma.cu on Hopper): one CTA
// per 128 query rows of one head of one chunk, which walks the chunk's keys T at a time up to its
// last row's position — a chunk of q new tokens after c cached ones gives ceil(q / 128) · heads
// CTAs, the j-th doing ceil((c + min(128 (j + 1), q)) / T) key tiles. T and the CTAs resident per
// multiprocessor are the timed kernel's (profile: prefill_key_tile, prefill_ctas_per_sm; mma.sync
// 64 and 2, 96 KiB of shared memory each; wgmma 128 and 1, 224 KiB). The wgmma kernel's two
// consumer warpgroups of 64 rows (prefill_row_groups 2) take turns on the tensor cores, each
// overlapping its softmax with the other's products; a block of at most 64 rows runs one alone. A
// CTA costs its longest group's tiles plus g times the other's plus h tiles if the other has rows,
// g and h fitted (g 0 … 1, h 0 … 8; h: the groups wait on each other once per tile, a latency a CTA
// of few tiles does not hide). The launch takes
//     t = t0 + t_tile · makespan · (1 + (s − 1) · f2)
// where makespan is the longest queue, in tiles plus a per-CTA cost of c_cta tiles, when the CTAs
// are dealt longest first onto 2 × SMs slots, f2 the share of multiprocessors that hold two CTAs
// (0 up to one CTA per multiprocessor, 1 from two on; always 0 for one CTA per multiprocessor) and
// s the tile time of two CTAs sharing a
// multiprocessor against one alone. t0, t_tile, c_cta and s are fitted on the single-chunk
// points (role "fit"); the launches of several chunks are held out. A short chunk after a long
// cached prefix is slow for its FLOPs (32 CTAs walking 17 tiles each leave most of the GPU idle),
// and several chunks share a launch (their CTAs fill the GPU together): neither follows from a
// table of q = kv shapes, which is what the per-chunk price assumed. A launch whose distinct keys
// and values outgrow L2 (several chunks after long prefixes with many KV heads) streams them from
// HBM and can take longer than its tiles: such a launch takes no less than the engine's decode
// kernel, timed with its KV in HBM (the decode grid below), takes to read the same keys — one
// sequence per chunk at the chunks' mean length (kv_stream_seconds; a floor from calibration,
// nothing fitted). Within L2 the decode grid's small batches are the decode kernel's latency, not a
// stream, and the floor does not apply.
// Check::kv_bytes marks the launches that outgrow L2.
//
// Decode: sequences that share prefix blocks (prefix caching) read each shared block from HBM
// once; the other reads hit L2 and cost a fraction ρ of an HBM read. A batch whose distinct blocks
// are a fraction u of the blocks it reads takes (u + ρ (1 − u)) of the time of the same batch
// without sharing. ρ is fitted on the points where the whole batch shares one prefix; the points
// with several groups are held out. Unshared decode over a batch × context grid, timed with the
// engine's split rule and the KV in HBM, is kept as a grid per (heads, KV heads) and interpolated.
// The decode kernel walks a sequence's keys in whole tiles (calib::kDecodeTileTokens): a context
// that ends inside a tile skips the missing keys' loads but not the tile's fixed work, so between
// two whole-tile contexts the time steps up at the boundary and then rises with the keys. A
// partial tile filled to a share f pays φ + (1 − φ) f of a whole tile's time; φ is fitted on
// contexts measured between 128 and 192 keys and held out between 1,024 and 1,088. A batch is
// priced on the whole-tile grid at its mean context plus φ times the keys that would fill each
// sequence's last tile.
#include <array>
#include <map>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/profile.hpp"

namespace infraplan::hw {

class PagedAttentionModel {
 public:
  struct Params {
    double t0 = 0;       ///< seconds per launch
    double t_tile = 0;   ///< seconds per key tile of one CTA
    double c_cta = 0;    ///< per-CTA cost, in tiles
    /// Tile time of two CTAs sharing a multiprocessor against one alone (1 … 2: they share its
    /// tensor cores and load pipes).
    double shared_slowdown = 1;
    int sms = 0;          ///< the GPU's multiprocessors
    double l2_bytes = 0;  ///< the GPU's L2 (0: no streaming floor)
    int slots = 0;        ///< resident prefill CTAs (ctas_per_sm × SMs)
    int key_tile = 64;    ///< keys per CTA tile of the timed prefill kernel
    int ctas_per_sm = 2;  ///< its CTAs resident per multiprocessor
    int row_groups = 1;   ///< groups of a CTA's query rows that stop at their own last position
    /// Cost of the other row groups' tiles against the longest group's (1 with one group).
    double second_group = 1;
    double group_handoff = 0;  ///< tiles per CTA for each other row group with rows
    double rho = 1;      ///< cost of an L2-hit KV read against an HBM read (decode sharing)
    bool has_decode = false;
    int tile = 0;        ///< keys per tile of the decode kernel (0: not recorded)
    /// Share of a whole tile's decode time that a partial tile costs before its keys are counted
    /// (φ; −1: not measured).
    double partial_tile = -1;
  };
  /// A measured point against the model.
  struct Check {
    std::string label, role;  ///< role: "fit" or "holdout"
    double measured = 0, modelled = 0;
    /// Prefill: distinct key and value bytes the launch reads (head dimension 128, bf16: the tables'
    /// kernels); 0 for decode checks.
    double kv_bytes = 0;
  };

  /// Fits on `s`; `sms` = the GPU's multiprocessors, `l2_bytes` its L2 (0: no streaming floor).
  /// Throws Error without at least 3 single-chunk prefill points.
  PagedAttentionModel(const Profile::ServingAttention& s, int sms, double l2_bytes = 0);

  /// One launch over `chunks` ({new tokens, cached tokens}) with `heads` query heads (this GPU's)
  /// and `kv_heads` KV heads (0: no streaming floor): the tile model, and no less than
  /// kv_stream_seconds.
  double prefill_launch_seconds(const std::vector<std::array<std::int64_t, 2>>& chunks, std::int64_t heads,
                                std::int64_t kv_heads = 0) const;
  /// The floor of a launch whose distinct keys and values (head dimension 128, bf16) outgrow L2, so
  /// that it streams them from HBM: what the engine's decode kernel, timed with its KV in HBM, takes
  /// to read the same keys (one sequence per chunk at the chunks' mean length); 0 for a launch
  /// within L2 (its reads are latency, which the tile model prices) and outside the decode grids.
  double kv_stream_seconds(const std::vector<std::array<std::int64_t, 2>>& chunks, std::int64_t heads,
                           std::int64_t kv_heads) const;
  /// Seconds of the engine's decode kernel for `batch` sequences of `context` tokens each (no
  /// sharing), interpolated in log space over the measured batch × context grid of the same heads
  /// and KV heads (or of the same query heads per KV head, else of the nearest group size up to 8
  /// — the kernel pads a group to one 8-row MMA tile — its batch scaled to the same CTAs; past the
  /// grid's largest batch in proportion to the CTAs); nullopt outside the grid or without one.
  std::optional<double> decode_seconds(double batch, double context, std::int64_t heads, std::int64_t kv_heads) const;
  /// The context a sequence of `context` tokens is priced at on the whole-tile grid when `padding`
  /// more keys would fill its last tile: context + φ · padding (context itself without φ).
  double decode_context(double context, double padding) const;
  /// Time factor of a decode batch whose distinct KV blocks are `unique_fraction` of those it reads.
  double decode_share_factor(double unique_fraction) const;

  const Params& params() const { return params_; }
  const std::vector<Check>& checks() const { return checks_; }
  /// Largest |modelled / measured − 1| over the checks of `role` whose label starts with `kind`
  /// ("prefill" or "decode").
  double max_error(const std::string& kind, const std::string& role) const;

 private:
  struct DecodeGrid {
    std::int64_t heads = 0, kv_heads = 0;
    std::vector<double> batch, context;  ///< ascending axes
    std::vector<double> seconds;         ///< [batch][context], NaN = not measured
  };
  std::vector<DecodeGrid> grids_;
  /// Unshared decode points: {heads, KV heads} → {batch, context} → seconds.
  using UnsharedDecode = std::map<std::pair<std::int64_t, std::int64_t>, std::map<std::pair<double, double>, double>>;
  void fit_partial_tiles(int tile, const UnsharedDecode& unshared);
  /// Tile time against a CTA alone on its multiprocessor, for a launch of `ctas` CTAs.
  double occupancy_factor(double ctas, double shared) const;
  Params params_;
  std::vector<Check> checks_;
};

/// Makespan, in tiles, of CTAs of `tiles` (each + per_cta) dealt longest first onto `slots` queues.
double cta_makespan(std::vector<double> tiles, double per_cta, int slots);

}  // namespace infraplan::hw
