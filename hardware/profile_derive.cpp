// derive_profile: a profile for a GPU nobody has measured yet, from one that was measured.
#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/framework_costs.hpp"
#include "hardware/profile.hpp"
#include "hardware/roofline_cost_model.hpp"

namespace infraplan::hw {
namespace {

/// The measured time with its non-launch part scaled by `ratio`.
double scale_time(double t, double launch, double ratio) {
  if (t <= launch) return t;
  return launch + (t - launch) * ratio;
}

double peak_or_throw(const GpuSpec& g, Dtype d) {
  auto p = g.peak(d);
  if (!p) throw Error(g.name + ": no datasheet peak for " + std::string(dtype_name(d)));
  return *p;
}

}  // namespace

Json derive_profile(const Json& measured, const GpuSpec& from, const GpuSpec& to) {
  Profile check = parse_profile(measured, "derive source");  // validates the input
  if (check.source != "measured")
    throw Error("derive_profile: the source profile must be measured, not " + check.source);
  if (check.gpu != from.name)
    throw Error("derive_profile: source profile is for '" + check.gpu + "', not '" + from.name + "'");
  const double launch = check.ceilings.launch_us * 1e-6;
  const double bw_ratio = from.hbm_GBps / to.hbm_GBps;  // time ratio for bandwidth-bound work
  const double bf16_ratio = peak_or_throw(from, Dtype::BF16) / peak_or_throw(to, Dtype::BF16);

  Json out = measured;
  // Measurements of the source GPU only (validation_error: how the model fared on its rows; where
  // the derived GPU's own steps were measured, their record is merged into the derived file
  // afterwards, see Profile.DerivedFilesAreUpToDate).
  for (const char* k :
       {"holdout", "kernels", "checks", "comm", "run_seconds", "quick", "seed", "validation_error"})
    out.erase(k);
  out["gpu"] = to.name;
  out["source"] = "derived";
  out["command"] = "derive_profile (hardware/profile_derive.cpp)";
  out["derived_from"] = {
      {"gpu", from.name},
      {"date", check.date},
      {"command", check.command},
      {"method",
       "each measured time keeps its efficiency against the datasheet roofline: GEMM "
       "cells, first referred to the measured profile's reference clock, scale by the ratio of "
       "max(FLOPs/peak, bytes/HBM bandwidth) on the two GPUs, attention prefill by the "
       "bf16 peak ratio, decode and "
       "memory-bound tables by the HBM bandwidth ratio (eager kernels on the same chip: only the "
       "share that does not follow the SM clock); the launch part "
       "(ceilings.launch_us) is kept as measured"}};
  Json& dev = out["device"];
  dev = {{"name", to.display_name},
         {"sms", to.sms},
         {"memory_bytes", to.hbm_bytes},
         {"l2_bytes", to.l2_bytes},
         {"compute_capability",
          std::to_string(to.compute_capability / 10) + "." + std::to_string(to.compute_capability % 10)}};

  Json& c = out["ceilings"];
  for (const char* k : {"copy_GBps", "read_GBps"})
    if (c.contains(k)) c[k] = c[k].get<double>() / bw_ratio;
  if (from.pcie_GBps > 0 && to.pcie_GBps > 0)
    for (const char* k : {"h2d_pinned_GBps", "d2h_pinned_GBps"})
      if (c.contains(k)) c[k] = c[k].get<double>() * to.pcie_GBps / from.pcie_GBps;

  Json& tables = out["tables"];
  if (tables.contains("gemm")) {
    Json gemm = Json::object(), ceil = Json::object();
    // The measured cells referred to one clock (the measured model's fit), so that the derived
    // tables carry no clock readings of the other GPU.
    const CalibratedCostModel referred(check, from);
    for (const auto& t : referred.profile().gemm) {
      std::string name(dtype_name(t.dtype));
      if (!to.supports(t.dtype)) continue;  // e.g. fp8 on an A100
      double pf = peak_or_throw(from, t.dtype), pt = peak_or_throw(to, t.dtype);
      Json secs = Json::array();
      for (std::size_t i = 0; i < t.m.size(); ++i) {
        Json plane = Json::array();
        for (std::size_t j = 0; j < t.n.size(); ++j) {
          Json row = Json::array();
          for (std::size_t l = 0; l < t.k.size(); ++l) {
            double v = t.at(i, j, l);
            if (!(v > 0)) {
              row.push_back(nullptr);
              continue;
            }
            GemmShape s;
            s.m = std::int64_t(t.m[i]);
            s.n = std::int64_t(t.n[j]);
            s.k = std::int64_t(t.k[l]);
            s.dtype = t.dtype;
            double bytes = gemm_min_bytes(s);
            double rf = std::max(s.flops() / pf, bytes / (from.hbm_GBps * 1e9));
            double rt = std::max(s.flops() / pt, bytes / (to.hbm_GBps * 1e9));
            row.push_back(scale_time(v, launch, rt / rf));
          }
          plane.push_back(row);
        }
        secs.push_back(plane);
      }
      Json tj = measured["tables"]["gemm"][name];
      tj["seconds"] = secs;
      tj.erase("clock_mhz_before");
      tj.erase("clock_mhz_after");
      tj.erase("rows_clock_exponent");  // the source's rows are not carried over
      if (tj.contains("fit_points"))
        for (std::size_t fi = 0; fi < tj["fit_points"].size(); ++fi) {
          Json& fpt = tj["fit_points"][fi];
          fpt.erase("clock_mhz");  // parsed, in order, into t.fit_points[fi][4]
          fpt["seconds"] = fpt["seconds"].get<double>() * referred.clock_factor(t.dtype, t.fit_points[fi][4]);
          GemmShape s;
          s.m = fpt["m"].get<std::int64_t>();
          s.n = fpt["n"].get<std::int64_t>();
          s.k = fpt["k"].get<std::int64_t>();
          s.dtype = t.dtype;
          double bytes = gemm_min_bytes(s);
          double rf = std::max(s.flops() / pf, bytes / (from.hbm_GBps * 1e9));
          double rt = std::max(s.flops() / pt, bytes / (to.hbm_GBps * 1e9));
          fpt["seconds"] = scale_time(fpt["seconds"].get<double>(), launch, rt / rf);
        }
      gemm[name] = tj;
      ceil[name] = check.ceilings.gemm_TFLOPs.at(t.dtype) * pt / pf;
    }
    tables["gemm"] = gemm;
    c["gemm_TFLOPs"] = ceil;
  }
  auto scale_nested = [&](Json& arr, double ratio, auto&& self) -> void {
    for (auto& v : arr) {
      if (v.is_array())
        self(v, ratio, self);
      else if (v.is_number())
        v = scale_time(v.get<double>(), launch, ratio);
    }
  };
  if (tables.contains("attention_prefill"))
    for (auto& t : tables["attention_prefill"]) {
      scale_nested(t["seconds"], bf16_ratio, scale_nested);
      if (t.contains("backward_seconds")) scale_nested(t["backward_seconds"], bf16_ratio, scale_nested);
    }
  if (tables.contains("attention_prefill_fit_points"))
    for (auto& f : tables["attention_prefill_fit_points"]) {
      f["seconds"] = scale_time(f["seconds"].get<double>(), launch, bf16_ratio);
      if (f.contains("backward_seconds") && f["backward_seconds"].is_number())
        f["backward_seconds"] = scale_time(f["backward_seconds"].get<double>(), launch, bf16_ratio);
    }
  // The FlashAttention-2 tables: on a GPU of the same architecture (H200 → H100) the kernels keep
  // their efficiency and scale like the default tables; on another they are not carried over. The
  // FlashAttention-2 kernels were written for Ampere and run on Hopper without its warpgroup MMA
  // (1.6-1.8x slower than cuDNN's there, docs/calibration.md "Attention kernels"): their Hopper
  // efficiency says nothing about an A100, where they are the native kernels that the derived
  // default tables stand for (the H200's cuDNN efficiency, within the published FlashAttention-2
  // A100 rates).
  if (tables.contains("attention_prefill_flash2")) {
    if (from.compute_capability != to.compute_capability)
      tables.erase("attention_prefill_flash2");
    else
      for (auto& t : tables["attention_prefill_flash2"]) {
        scale_nested(t["seconds"], bf16_ratio, scale_nested);
        if (t.contains("backward_seconds")) scale_nested(t["backward_seconds"], bf16_ratio, scale_nested);
      }
  }
  // Reference tables of other kernels than the one the model uses are not carried over. The
  // framework section (host-side costs) is kept as measured: it describes the host, not the GPU.
  tables.erase("attention_prefill_own_fa2");
  // Exact workload shapes are measurements on this GPU; a derived GPU interpolates its scaled
  // tables instead.
  tables.erase("gemm_shapes");
  tables.erase("gemm_rows");
  tables.erase("gemm_held_rows");
  if (tables.contains("attention_decode"))
    scale_nested(tables["attention_decode"]["seconds"], bw_ratio, scale_nested);
  // The framework's eager kernels (casts, norms, elementwise) are memory-bound GPU work: scaled like
  // the memory table; its host costs stay as measured.
  // Compiled rotary positions (compiled_rope_*) recompute their angles per element: fp32
  // arithmetic on the SMs, scaled by the fp32 peaks instead.
  // For a GPU of the same chip (the same multiprocessors and clocks) only the part of a kernel's time
  // that waits on HBM scales: the measured clock share φ (framework.clock_share, the part that
  // follows the SM clock) stays as measured, 1 − φ scales by the bandwidth ratio. Another chip's
  // multiprocessors differ, and there all of it scales by bandwidth. (Checked on an H100 against the
  // H200's kernels: docs/calibration.md, "Eager kernels of a derived profile".)
  const bool same_chip = from.compute_capability == to.compute_capability;
  auto eager_ratio = [&](const std::string& op) {
    const double phi = same_chip ? eager_op_clock_share(check, op) : 0.0;
    return phi + (1 - phi) * bw_ratio;
  };
  if (out.contains("framework") && out["framework"].contains("elementwise")) {
    const double fp32_ratio = peak_or_throw(from, Dtype::FP32) / peak_or_throw(to, Dtype::FP32);
    for (auto& [name, op] : out["framework"]["elementwise"]["ops"].items())
      scale_nested(op["seconds"], name.rfind("compiled_rope_", 0) == 0 ? fp32_ratio : eager_ratio(name),
                   scale_nested);
  }
  // cuBLAS's memsets follow its kernel choice on the traced chip (Hopper's nvjet kernels): kept for
  // a GPU of the same architecture, not carried to another.
  if (out.contains("framework") && out["framework"].contains("memsets") &&
      from.compute_capability != to.compute_capability)
    out["framework"].erase("memsets");
  // torch's fused AdamW streams parameters, gradients and states: memory-bound GPU work too, with
  // its clock share (fused_adamw_fp32 / _bf16) as above.
  if (out.contains("framework") && out["framework"].contains("fused_adamw"))
    for (auto& [dtype, pts] : out["framework"]["fused_adamw"].items())
      if (pts.is_array()) {
        const double ratio = eager_ratio("fused_adamw_" + dtype);
        for (auto& q : pts) q["seconds"] = q["seconds"].get<double>() * ratio;
      }
  // The serving engine's row kernels: their one-row time is latency (kept), what they add with
  // more rows streams HBM (scaled).
  if (out.contains("serving_kernels"))
    for (auto& [name, widths] : out["serving_kernels"]["kernels"].items())
      for (auto& w : widths) {
        Json& sec = w["seconds"];
        const double one = sec.at(0).get<double>();
        for (auto& v : sec) v = one + (v.get<double>() - one) * bw_ratio;
      }
  scale_nested(tables["memory_bound"]["seconds"], bw_ratio, scale_nested);
  // The engine's paged attention kernels walk their key tiles one CTA at a time, bound by latency
  // more than bandwidth: kept for a GPU of the same chip (the same multiprocessors and clocks), not
  // carried to another architecture.
  if (out.contains("serving_attention") && from.compute_capability != to.compute_capability)
    out.erase("serving_attention");
  // Decode streams the KV cache: per (heads, KV heads) the fastest point's time is latency (kept),
  // what a point takes beyond it streams HBM (scaled), as for the row kernels.
  if (out.contains("serving_attention") && out["serving_attention"].contains("decode")) {
    std::map<std::pair<std::int64_t, std::int64_t>, double> fastest;
    for (const auto& d : out["serving_attention"]["decode"]) {
      const auto key = std::make_pair(d["heads"].get<std::int64_t>(), d["kv_heads"].get<std::int64_t>());
      const double t = d["seconds"].get<double>();
      auto it = fastest.find(key);
      if (it == fastest.end() || t < it->second) fastest[key] = t;
    }
    for (auto& d : out["serving_attention"]["decode"]) {
      const double one = fastest[{d["heads"].get<std::int64_t>(), d["kv_heads"].get<std::int64_t>()}];
      d["seconds"] = one + (d["seconds"].get<double>() - one) * bw_ratio;
    }
  }
  // Sustained clock under the board's power limit: the power law carries over to a GPU of the same
  // chip and the same board limit only (an H100 SXM from an H200: GH100 at 700 W; the H100's HBM3
  // draws differently from the H200's HBM3e, which the law's memory term does not know). The
  // derived tables then say which clock they refer to, with the source's exponents.
  out.erase("power");
  out.erase("gemm_clock");
  if (measured.contains("power") && from.compute_capability == to.compute_capability && from.tdp_watts > 0 &&
      from.tdp_watts == to.tdp_watts) {
    const CalibratedCostModel referred(check, from);
    if (referred.reference_clock_mhz() > 0) {
      out["power"] = measured["power"];
      out["power"]["limit_w"] = to.tdp_watts;
      out["power"]["derived_from"] = from.name + " (same chip and board power limit)";
      Json ex = Json::object();
      for (const auto& t : referred.profile().gemm)
        if (to.supports(t.dtype)) ex[std::string(dtype_name(t.dtype))] = referred.clock_exponent(t.dtype);
      out["gemm_clock"] = {{"reference_mhz", referred.reference_clock_mhz()}, {"exponent", ex}};
    }
  }
  return out;
}

}  // namespace infraplan::hw
