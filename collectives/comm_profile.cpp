#include "collectives/comm_profile.hpp"

#include <cmath>

#include "common/error.hpp"

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

namespace {

bool read_scope(const JsonObject& f) { return f.get_choice("scope", "intra", {"intra", "inter"}) == "inter"; }

void read_refit(const JsonObject& m, CommProfile& p) {
  m.reject_unknown({"link_efficiency", "latency", "method", "fitted_from", "residuals"});
  if (m.has("link_efficiency")) {
    const Json& arr = m.raw().at("link_efficiency");
    if (!arr.is_array()) throw Error(m.field("link_efficiency") + " must be an array of {op, protocol, scope, efficiency}");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      JsonObject f(arr[i], m.field("link_efficiency") + "[" + std::to_string(i) + "]");
      f.reject_unknown({"op", "protocol", "scope", "efficiency", "points"});
      LinkEfficiencyFit e;
      e.op = parse_op(f.get_string("op"), f.field("op"));
      e.protocol = parse_protocol(f.get_string("protocol"), f.field("protocol"));
      e.inter = read_scope(f);
      e.efficiency = f.get_number("efficiency");
      if (!(e.efficiency > 0 && e.efficiency <= 1.5))
        throw Error(f.field("efficiency") + "=" + std::to_string(e.efficiency) + " is invalid: must be in (0, 1.5]");
      p.link_efficiency.push_back(e);
    }
  }
  if (m.has("latency")) {
    const Json& arr = m.raw().at("latency");
    if (!arr.is_array()) throw Error(m.field("latency") + " must be an array of {op, scope, ranks, latency_us, extra_us}");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      JsonObject f(arr[i], m.field("latency") + "[" + std::to_string(i) + "]");
      f.reject_unknown({"op", "scope", "ranks", "latency_us", "extra_us", "points"});
      LatencyFit l;
      l.op = parse_op(f.get_string("op"), f.field("op"));
      l.inter = read_scope(f);
      l.ranks = int(f.get_int_min("ranks", 2, 2));
      l.latency_us = f.get_number_min("latency_us", 0, 0);
      l.extra_us = f.get_number("extra_us");
      p.latency_fits.push_back(l);
    }
  }
}

}  // namespace

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
                    "env", "gpus", "notes", "model", "transport", "launcher", "ranks", "groups", "phases",
                    "sizes", "report", "run_seconds", "command", "iterations", "library"});
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
      f.reject_unknown({"op", "ranks", "scope", "latency_us", "bw_GBps", "busbw_GBps", "points", "max_rel_error",
                        "phase", "placement", "nodes"});
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
  if (auto m = o.opt_object("model")) read_refit(*m, p);
  return p;
}

std::optional<CommFit> CommProfile::find_fit(CollectiveOp op, int n, bool inter) const {
  std::optional<CommFit> best;
  if (!link_efficiency.empty()) return best;
  for (const auto& f : fits) {
    // Only a fit measured on a group of this size describes it: bandwidth per rank and the
    // algorithm NCCL picks both change with the group size.
    if (f.op != op || f.inter != inter || f.ranks != n) continue;
    best = f;
  }
  return best;
}

double CommProfile::step_efficiency(CollectiveOp op, Protocol p, bool inter) const {
  for (const auto& e : link_efficiency)
    if (e.op == op && e.protocol == p && e.inter == inter)
      return e.efficiency / (inter ? inter_bw_efficiency : intra_bw_efficiency);
  return protocol_efficiency[std::size_t(p)];
}

double CommProfile::extra_latency_us(CollectiveOp op, int n, bool inter) const {
  // Fits of this op and scope sorted by group size; interpolate in log2(n), clamp outside.
  const LatencyFit* lo = nullptr;
  const LatencyFit* hi = nullptr;
  for (const auto& f : latency_fits) {
    if (f.op != op || f.inter != inter) continue;
    if (f.ranks <= n && (!lo || f.ranks > lo->ranks)) lo = &f;
    if (f.ranks >= n && (!hi || f.ranks < hi->ranks)) hi = &f;
  }
  if (!lo && !hi) return 0;
  if (!lo) return hi->extra_us;
  if (!hi || hi->ranks == lo->ranks) return lo->extra_us;
  const double w = (std::log2(double(n)) - std::log2(double(lo->ranks))) /
                   (std::log2(double(hi->ranks)) - std::log2(double(lo->ranks)));
  return lo->extra_us + w * (hi->extra_us - lo->extra_us);
}

Json CommProfile::refit_json() const {
  Json m = Json::object();
  if (!link_efficiency.empty()) {
    Json a = Json::array();
    for (const auto& e : link_efficiency)
      a.push_back({{"op", op_name(e.op)},
                   {"protocol", protocol_name(e.protocol)},
                   {"scope", e.inter ? "inter" : "intra"},
                   {"efficiency", e.efficiency}});
    m["link_efficiency"] = a;
  }
  if (!latency_fits.empty()) {
    Json a = Json::array();
    for (const auto& l : latency_fits)
      a.push_back({{"op", op_name(l.op)},
                   {"scope", l.inter ? "inter" : "intra"},
                   {"ranks", l.ranks},
                   {"latency_us", l.latency_us},
                   {"extra_us", l.extra_us}});
    m["latency"] = a;
  }
  return m;
}

}  // namespace infraplan::coll
