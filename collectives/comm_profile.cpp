#include "collectives/comm_profile.hpp"

#include <cmath>

#include "model/error.hpp"

namespace infraplan::coll {

CommProfile::CommProfile() {
  // Ring (also chains and direct p2p): LL, LL128, Simple.
  latency[0] = {ProtoLatency{6.6, 0.6, 2.7}, ProtoLatency{14, 1.9, 4.0}, ProtoLatency{8.4, 3.4, 14}};
  // Tree.
  latency[1] = {ProtoLatency{6.8, 0.6, 5.0}, ProtoLatency{14, 1.25, 8.5}, ProtoLatency{8.4, 4.0, 14}};
  // NVLS: Simple only (LL/LL128 entries unused).
  latency[2] = {ProtoLatency{25, 0.6, 0.6}, ProtoLatency{25, 0.6, 0.6}, ProtoLatency{25, 0.6, 0.6}};
}

CommProfile CommProfile::ideal() {
  CommProfile p;
  for (auto& a : p.latency)
    for (auto& l : a) l = ProtoLatency{};
  p.protocol_efficiency = {1, 1, 1};
  p.protocol_enabled = {false, false, true};
  p.intra_bw_efficiency = 1;
  p.inter_bw_efficiency = 1;
  p.nvls_enabled = false;
  p.nvls_efficiency = 1;
  return p;
}

CommProfile CommProfile::from_json(const Json& j, const std::string& path) {
  CommProfile p;
  if (!j.is_object()) return p;
  const Json* sec = &j;
  std::string spath = path;
  if (j.contains("comm")) {
    sec = &j.at("comm");
    spath = path + ".comm";
  } else if (!j.contains("fits") && !j.contains("rows")) {
    return p;
  }
  JsonObject o(*sec, spath);
  o.reject_unknown({"fits", "rows", "intra_bw_efficiency", "inter_bw_efficiency", "nvls_enabled",
                    "nvls_efficiency", "pipeline_chunk_bytes", "source", "device", "date", "nccl_version",
                    "env", "gpus", "notes"});
  p.intra_bw_efficiency = o.get_number_min("intra_bw_efficiency", p.intra_bw_efficiency, 1e-6);
  p.inter_bw_efficiency = o.get_number_min("inter_bw_efficiency", p.inter_bw_efficiency, 1e-6);
  p.nvls_enabled = o.get_bool("nvls_enabled", p.nvls_enabled);
  p.nvls_efficiency = o.get_number_min("nvls_efficiency", p.nvls_efficiency, 1e-6);
  p.pipeline_chunk_bytes = o.get_number_min("pipeline_chunk_bytes", p.pipeline_chunk_bytes, 1);
  if (o.has("fits")) {
    const Json& fits = o.raw().at("fits");
    if (!fits.is_array())
      throw Error(o.field("fits") + " must be an array of {op, ranks, scope, latency_us, bw_GBps}");
    for (std::size_t i = 0; i < fits.size(); ++i) {
      JsonObject f(fits[i], o.field("fits") + "[" + std::to_string(i) + "]");
      f.reject_unknown({"op", "ranks", "scope", "latency_us", "bw_GBps", "busbw_GBps", "points", "max_rel_error"});
      CommFit fit;
      fit.op = parse_op(f.get_string("op"), f.field("op"));
      fit.ranks = int(f.get_int_min("ranks", 1, 1));
      fit.inter = f.get_choice("scope", "intra", {"intra", "inter"}) == "inter";
      fit.latency_us = f.get_number_min("latency_us", 0, 0);
      // The model prices links by bus bandwidth: take busbw_GBps when the calibration wrote both
      // (bw_GBps is then the algorithm bandwidth), else bw_GBps as busbw.
      fit.bw_GBps = f.has("busbw_GBps") ? f.get_number("busbw_GBps") : f.get_number("bw_GBps");
      if (fit.bw_GBps < 0) throw Error(f.field("bw_GBps") + " must be >= 0");
      // One rank moves nothing over a link (NCCL copies locally): such a fit says nothing about
      // the fabric and is kept out of the model.
      if (fit.ranks < 2 || fit.bw_GBps <= 0) continue;
      p.fits.push_back(fit);
    }
  }
  return p;
}

std::optional<CommFit> CommProfile::find_fit(CollectiveOp op, int n, bool inter) const {
  std::optional<CommFit> best;
  for (const auto& f : fits) {
    // Only a fit measured on a group of this size describes it: bandwidth per rank and the
    // algorithm NCCL picks both change with the group size.
    if (f.op != op || f.inter != inter || f.ranks != n) continue;
    best = f;
  }
  return best;
}

}  // namespace infraplan::coll
