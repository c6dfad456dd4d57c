#include "hardware/profile.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <utility>

#include "common/checked_number.hpp"
#include "common/error.hpp"
#include "hardware/cluster_profile.hpp"
#include "hardware/profile_embedded.hpp"
#include "hardware/profile_json.hpp"
#include "hardware/profile_sections.hpp"

namespace infraplan::hw {

using namespace profile_json;

const GemmTable* Profile::gemm_table(Dtype d) const {
  for (const auto& t : gemm)
    if (t.dtype == d) return &t;
  return nullptr;
}

const PrefillTable* Profile::prefill_table(int head_dim, AttentionKernel kernel) const {
  const PrefillTable* best = nullptr;
  for (const auto& t :
       has_prefill_kernel(kernel) && kernel == AttentionKernel::Flash2 ? prefill_flash2 : prefill)
    if (!best || std::abs(std::log(double(t.head_dim) / head_dim)) <
                     std::abs(std::log(double(best->head_dim) / head_dim)))
      best = &t;
  return best;
}

bool Profile::has_prefill_kernel(AttentionKernel kernel) const {
  return kernel == AttentionKernel::Flash2 ? !prefill_flash2.empty() : !prefill.empty();
}

Profile parse_profile(const Json& j, const std::string& origin) {
  Profile p;
  p.origin = origin;
  if (!j.is_object()) fail(origin, "top level", "expected a JSON object");
  std::string schema = str(j, "schema", "");
  if (schema != "infraplan-profile/1")
    fail(origin, "schema",
         "expected \"infraplan-profile/1\", got " + (j.contains("schema") ? j["schema"].dump() : "nothing"));
  const Json& gpu = need(j, "gpu", "", origin);
  if (!gpu.is_string() || gpu.get<std::string>().empty()) fail(origin, "gpu", "expected a catalog GPU name");
  p.gpu = gpu.get<std::string>();
  p.source = str(j, "source", "");
  if (p.source != "measured" && p.source != "derived")
    fail(origin, "source",
         "expected \"measured\" or \"derived\", got " +
             (j.contains("source") ? j["source"].dump() : "nothing"));
  if (p.source == "derived") {
    const Json& d = need(j, "derived_from", "", origin);
    p.derived_from = str(d, "gpu", "");
    p.derivation = str(d, "method", "");
    if (p.derived_from.empty())
      fail(origin, "derived_from.gpu", "missing (a derived profile names its measured source)");
  }
  p.date = str(j, "date", "");
  p.command = str(j, "command", "");
  const Json& dev = need(j, "device", "", origin);
  p.device_name = str(dev, "name", "");
  p.sms = int(integer(need(dev, "sms", "device", origin), "device.sms", origin, 1, kMaxSms));
  p.memory_bytes = number(need(dev, "memory_bytes", "device", origin), "device.memory_bytes", origin, 1);
  p.l2_bytes = num_or(dev, "l2_bytes", 0);
  p.driver_version = str(dev, "driver_version", "");
  p.cuda_version = str(dev, "cuda_runtime_version", "");

  const Json& c = need(j, "ceilings", "", origin);
  p.ceilings.copy_GBps = number(need(c, "copy_GBps", "ceilings", origin), "ceilings.copy_GBps", origin, 1e-9);
  p.ceilings.launch_us = number(need(c, "launch_us", "ceilings", origin), "ceilings.launch_us", origin, 0);
  p.ceilings.read_GBps = num_or(c, "read_GBps", p.ceilings.copy_GBps);
  p.ceilings.h2d_pinned_GBps = num_or(c, "h2d_pinned_GBps", 0);
  p.ceilings.d2h_pinned_GBps = num_or(c, "d2h_pinned_GBps", 0);
  p.ceilings.launch_sync_us = num_or(c, "launch_sync_us", 0);
  p.ceilings.graph_kernel_us = num_or(c, "graph_kernel_us", 0);
  if (c.contains("eager_kernel_gap_us")) {
    p.ceilings.eager_kernel_gap_us = number(c["eager_kernel_gap_us"], "ceilings.eager_kernel_gap_us", origin, 0);
    if (p.ceilings.eager_kernel_gap_us > 1000)
      fail(origin, "ceilings.eager_kernel_gap_us", "expected at most 1000 µs per kernel");
  }
  if (c.contains("gemm_TFLOPs")) {
    const Json& g = c["gemm_TFLOPs"];
    if (!g.is_object()) fail(origin, "ceilings.gemm_TFLOPs", "expected an object {format: TFLOP/s}");
    for (auto it = g.begin(); it != g.end(); ++it) {
      std::string f = "ceilings.gemm_TFLOPs." + it.key();
      p.ceilings.gemm_TFLOPs[gemm_dtype(it.key(), f, origin)] = number(it.value(), f, origin, 1e-9);
    }
  }

  const Json& tables = need(j, "tables", "", origin);
  {
    const Json& m = need(tables, "memory_bound", "tables", origin);
    p.memory.bytes =
        axis(need(m, "bytes", "tables.memory_bound", origin), "tables.memory_bound.bytes", origin);
    p.memory.seconds =
        seconds_grid(need(m, "seconds", "tables.memory_bound", origin), "tables.memory_bound.seconds", origin,
                     p.memory.bytes.size(), "one per bytes entry");
    for (double s : p.memory.seconds)
      if (std::isnan(s)) fail(origin, "tables.memory_bound.seconds", "null entries are not allowed");
  }
  if (tables.contains("gemm")) {
    const Json& g = tables["gemm"];
    if (!g.is_object()) fail(origin, "tables.gemm", "expected an object {format: table}");
    for (auto it = g.begin(); it != g.end(); ++it) {
      std::string f = "tables.gemm." + it.key();
      GemmTable t;
      t.dtype = gemm_dtype(it.key(), f, origin);
      t.m = axis(need(it.value(), "m", f, origin), f + ".m", origin);
      t.n = axis(need(it.value(), "n", f, origin), f + ".n", origin);
      t.k = axis(need(it.value(), "k", f, origin), f + ".k", origin);
      std::size_t want = t.m.size() * t.n.size() * t.k.size();
      t.seconds = seconds_grid(
          need(it.value(), "seconds", f, origin), f + ".seconds", origin, want,
          std::to_string(t.m.size()) + "×" + std::to_string(t.n.size()) + "×" + std::to_string(t.k.size()));
      if (it.value().contains("misaligned")) {
        const Json& mj = it.value()["misaligned"];
        std::string mf = f + ".misaligned";
        t.mis_m = axis(need(mj, "m", mf, origin), mf + ".m", origin);
        t.mis_nk = axis(need(mj, "nk", mf, origin), mf + ".nk", origin);
        t.mis_elements = axis(need(mj, "elements", mf, origin), mf + ".elements", origin);
        t.mis_ratio =
            seconds_grid(need(mj, "ratio", mf, origin), mf + ".ratio", origin,
                         t.mis_elements.size() * t.mis_m.size() * t.mis_nk.size(), "elements × m × nk");
        for (const char* key : {"ratio_n", "ratio_k"})
          if (mj.contains(key))
            (key[6] == 'n' ? t.mis_ratio_n : t.mis_ratio_k) =
                seconds_grid(mj[key], mf + "." + key, origin,
                             t.mis_elements.size() * t.mis_m.size() * t.mis_nk.size(), "elements × m × nk");
      }
      if (it.value().contains("clock_mhz_before") && it.value().contains("clock_mhz_after")) {
        std::string dims =
            std::to_string(t.m.size()) + "×" + std::to_string(t.n.size()) + "×" + std::to_string(t.k.size());
        std::vector<double> before =
            seconds_grid(it.value()["clock_mhz_before"], f + ".clock_mhz_before", origin, want, dims);
        std::vector<double> after =
            seconds_grid(it.value()["clock_mhz_after"], f + ".clock_mhz_after", origin, want, dims);
        t.clock_mhz.resize(want);
        for (std::size_t cell = 0; cell < want; ++cell) {
          for (double v : {before[cell], after[cell]})
            if (!std::isnan(v) && !(v >= 100 && v <= 10000))
              fail(origin, f + ".clock_mhz_before/after",
                   "expected MHz between 100 and 10000, got " + fmt_num(v));
          t.clock_mhz[cell] = 0.5 * (before[cell] + after[cell]);
        }
      }
      if (it.value().contains("fit_points")) {
        const Json& fp = it.value()["fit_points"];
        if (!fp.is_array()) fail(origin, f + ".fit_points", "expected an array of {m, n, k, seconds}");
        for (std::size_t i = 0; i < fp.size(); ++i) {
          std::string ff = f + ".fit_points[" + std::to_string(i) + "]";
          std::array<double, 5> r{};
          const char* keys[] = {"m", "n", "k", "seconds"};
          for (int q = 0; q < 4; ++q)
            r[q] = number(need(fp[i], keys[q], ff, origin), ff + "." + keys[q], origin, 1e-12);
          r[4] = clock_pair_mean(fp[i], ff, origin);
          t.fit_points.push_back(r);
        }
      }
      if (it.value().contains("rows_clock_exponent")) {
        const Json& cj = it.value()["rows_clock_exponent"];
        const std::string cf = f + ".rows_clock_exponent";
        if (!cj.is_object()) fail(origin, cf, "expected an object {value, pairs, method}");
        const double v = number(need(cj, "value", cf, origin), cf + ".value", origin, 0.0);
        if (!(v <= 2.0))
          fail(origin, cf + ".value", "expected an exponent between 0 and 2, got " + fmt_num(v));
        t.rows_clock_exponent = v;
      }
      if (it.value().contains("layouts")) {
        const Json& lj = it.value()["layouts"];
        const std::string lf = f + ".layouts";
        LayoutRatioTable lt;
        lt.m = axis(need(lj, "m", lf, origin), lf + ".m", origin);
        lt.n = axis(need(lj, "n", lf, origin), lf + ".n", origin);
        lt.k = axis(need(lj, "k", lf, origin), lf + ".k", origin);
        const std::size_t cells = lt.m.size() * lt.n.size() * lt.k.size();
        const std::string dims =
            std::to_string(lt.m.size()) + "×" + std::to_string(lt.n.size()) + "×" + std::to_string(lt.k.size());
        lt.nn = seconds_grid(need(need(lj, "nn", lf, origin), "ratio", lf + ".nn", origin), lf + ".nn.ratio", origin,
                             cells, dims);
        lt.nt = seconds_grid(need(need(lj, "nt", lf, origin), "ratio", lf + ".nt", origin), lf + ".nt.ratio", origin,
                             cells, dims);
        lt.runs = int(int_or(lj, "runs", 1, lf, origin, 0, kIntMax));
        t.layouts = std::move(lt);
      }
      if (!p.ceilings.gemm_TFLOPs.count(t.dtype))
        fail(origin, "ceilings.gemm_TFLOPs." + it.key(), "missing for a tabled format");
      p.gemm.push_back(std::move(t));
    }
  }
  if (tables.contains("gemm_shapes")) {
    const Json& g = tables["gemm_shapes"];
    if (!g.is_array()) fail(origin, "tables.gemm_shapes", "expected an array of {dtype, m, n, k, seconds}");
    for (std::size_t i = 0; i < g.size(); ++i)
      p.gemm_exact.push_back(
          gemm_measurement(g[i], "tables.gemm_shapes[" + std::to_string(i) + "]", origin, true));
  }
  // Workload rows ("gemm_rows") and rows timed held ("gemm_held_rows", each with its "hold_ms"): one
  // schema.
  auto gemm_rows = [&](const std::string& key, bool held) {
    std::vector<Profile::GemmRow> out;
    if (!tables.contains(key)) return out;
    const Json& g = tables[key];
    if (!g.is_array()) fail(origin, "tables." + key, "expected an array of {dtype, n, k, points}");
    for (std::size_t i = 0; i < g.size(); ++i) {
      const std::string f = "tables." + key + "[" + std::to_string(i) + "]";
      const Json& r = g[i];
      if (!r.is_object()) fail(origin, f, "expected an object {dtype, n, k, points}");
      Profile::GemmRow row;
      row.dtype = gemm_dtype(str(r, "dtype", ""), f + ".dtype", origin);
      row.layout = layout_of(r, f, origin);
      const std::string timing = str(r, "timing", "legacy");
      if (timing != "graph" && timing != "legacy")
        fail(origin, f + ".timing", "expected \"graph\" or \"legacy\", got \"" + timing + "\"");
      row.graph_timed = timing == "graph";
      if (held) {
        row.hold_ms = number(need(r, "hold_ms", f, origin), f + ".hold_ms", origin, 0);
        if (!(row.hold_ms > 0 && row.hold_ms <= 1000))
          fail(origin, f + ".hold_ms", "expected the ms each shape was held, in (0, 1000]");
      }
      // The token axis: m for TN and NN (fixed n, k), k for NT (fixed m, n).
      const bool along_k = row.layout == GemmLayout::NT;
      const char* fixed[2] = {along_k ? "m" : "n", along_k ? "n" : "k"};
      const char* axis_key = along_k ? "k" : "m";
      std::int64_t* fixed_dst[2] = {along_k ? &row.m : &row.n, along_k ? &row.n : &row.k};
      for (int q = 0; q < 2; ++q) {
        *fixed_dst[q] = int_or(r, fixed[q], 0, f, origin, 0, kMaxDim);
        if (*fixed_dst[q] <= 0) fail(origin, f + "." + fixed[q], "expected a positive integer");
      }
      const Json& pts = need(r, "points", f, origin);
      if (!pts.is_array() || pts.size() < 2)
        fail(origin, f + ".points", std::string("expected an array of at least 2 {") + axis_key + ", seconds}");
      for (std::size_t q = 0; q < pts.size(); ++q) {
        Json one = pts[q];
        if (one.is_object()) {
          one["dtype"] = r["dtype"];
          one["layout"] = gemm_layout_name(row.layout);
          for (int q2 = 0; q2 < 2; ++q2) one[fixed[q2]] = *fixed_dst[q2];
        }
        HoldoutGemm h = gemm_measurement(one, f + ".points[" + std::to_string(q) + "]", origin, true);
        auto tok = [&](const HoldoutGemm& x) { return along_k ? x.k : x.m; };
        if (!row.points.empty() && tok(h) <= tok(row.points.back()))
          fail(origin, f + ".points[" + std::to_string(q) + "]." + axis_key, std::string("expected ascending ") + axis_key);
        row.points.push_back(std::move(h));
      }
      out.push_back(std::move(row));
    }
    return out;
  };
  p.gemm_rows = gemm_rows("gemm_rows", false);
  p.gemm_held_rows = gemm_rows("gemm_held_rows", true);
  // Prefill tables of one attention implementation: "attention_prefill" (the default kernel) and
  // "attention_prefill_flash2" share the schema.
  auto prefill_tables = [&](const std::string& key) {
    std::vector<PrefillTable> out;
    if (!tables.contains(key)) return out;
    const Json& a = tables[key];
    if (!a.is_array()) fail(origin, "tables." + key, "expected an array of tables");
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::string f = "tables." + key + "[" + std::to_string(i) + "]";
      PrefillTable t;
      t.head_dim = int(integer(need(a[i], "head_dim", f, origin), f + ".head_dim", origin, 1, kMaxHeadsOrDim));
      t.heads = int(integer(need(a[i], "heads", f, origin), f + ".heads", origin, 1, kMaxHeadsOrDim));
      t.kv_heads = int(integer(need(a[i], "kv_heads", f, origin), f + ".kv_heads", origin, 1, kMaxHeadsOrDim));
      t.causal = bool_or(a[i], "causal", true, f, origin);
      t.seq_len = axis(need(a[i], "seq_len", f, origin), f + ".seq_len", origin);
      t.batch = axis(need(a[i], "batch", f, origin), f + ".batch", origin);
      t.seconds = seconds_grid(need(a[i], "seconds", f, origin), f + ".seconds", origin,
                               t.seq_len.size() * t.batch.size(), "seq_len × batch");
      for (std::size_t s = 0; s < t.seq_len.size(); ++s)
        if (std::isnan(t.at(s, 0)))
          fail(origin, f + ".seconds[" + std::to_string(s) + "][0]",
               "the first batch column must be measured");
      t.kernel = str(a[i], "kernel", "");
      if (a[i].contains("backward_seconds")) {
        t.backward_seconds = seconds_grid(a[i]["backward_seconds"], f + ".backward_seconds", origin,
                                          t.seq_len.size() * t.batch.size(), "seq_len × batch");
        for (std::size_t e = 0; e < t.seconds.size(); ++e)
          if (std::isnan(t.seconds[e]) != std::isnan(t.backward_seconds[e]))
            fail(origin, f + ".backward_seconds",
                 "must be measured exactly where seconds is (entry " + std::to_string(e) + " differs)");
      }
      out.push_back(std::move(t));
    }
    return out;
  };
  p.prefill = prefill_tables("attention_prefill");
  p.prefill_flash2 = prefill_tables("attention_prefill_flash2");
  if (tables.contains("attention_prefill_fit_points")) {
    const Json& a = tables["attention_prefill_fit_points"];
    const std::string f = "tables.attention_prefill_fit_points";
    if (!a.is_array()) fail(origin, f, "expected an array of shapes");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string fi = f + "[" + std::to_string(i) + "]";
      HoldoutPrefill r;
      r.head_dim = int(integer(need(a[i], "head_dim", fi, origin), fi + ".head_dim", origin, 1, kMaxHeadsOrDim));
      r.heads = int(integer(need(a[i], "heads", fi, origin), fi + ".heads", origin, 1, kMaxHeadsOrDim));
      r.kv_heads = int(integer(need(a[i], "kv_heads", fi, origin), fi + ".kv_heads", origin, 1, kMaxHeadsOrDim));
      r.batch = integer(need(a[i], "batch", fi, origin), fi + ".batch", origin, 1, kMaxDim);
      r.seq_len = integer(need(a[i], "seq_len", fi, origin), fi + ".seq_len", origin, 1, kMaxDim);
      r.causal = bool_or(a[i], "causal", true, fi, origin);
      r.seconds = number(need(a[i], "seconds", fi, origin), fi + ".seconds", origin, 1e-12);
      p.prefill_fit_points.push_back(r);
    }
  }
  if (tables.contains("attention_decode")) {
    const Json& d = tables["attention_decode"];
    std::string f = "tables.attention_decode";
    DecodeTable t;
    t.heads = int(integer(need(d, "heads", f, origin), f + ".heads", origin, 1, kMaxHeadsOrDim));
    t.kv_heads = int(integer(need(d, "kv_heads", f, origin), f + ".kv_heads", origin, 1, kMaxHeadsOrDim));
    t.head_dim = int(integer(need(d, "head_dim", f, origin), f + ".head_dim", origin, 1, kMaxHeadsOrDim));
    t.block_size = int(int_or(d, "block_size", 16, f, origin, 1, kMaxHeadsOrDim));
    t.kv_dtype = gemm_dtype(str(d, "kv_dtype", "bf16"), f + ".kv_dtype", origin);
    t.batch = axis(need(d, "batch", f, origin), f + ".batch", origin);
    t.context = axis(need(d, "context", f, origin), f + ".context", origin);
    t.seconds = seconds_grid(need(d, "seconds", f, origin), f + ".seconds", origin,
                             t.batch.size() * t.context.size(), "batch × context");
    for (double s : t.seconds)
      if (std::isnan(s)) fail(origin, f + ".seconds", "null entries are not allowed");
    p.decode = std::move(t);
  }

  if (j.contains("holdout") && j["holdout"].is_object()) {
    const Json& h = j["holdout"];
    auto rows = [&](const char* key) -> const Json& {
      static const Json empty = Json::array();
      if (!h.contains(key)) return empty;
      if (!h[key].is_array()) fail(origin, std::string("holdout.") + key, "expected an array");
      return h[key];
    };
    for (std::size_t i = 0; i < rows("gemm").size(); ++i)
      p.holdout_gemm.push_back(
          gemm_measurement(rows("gemm")[i], "holdout.gemm[" + std::to_string(i) + "]", origin, false));
    for (std::size_t i = 0; i < rows("gemm_workload").size(); ++i)
      p.holdout_workload.push_back(gemm_measurement(
          rows("gemm_workload")[i], "holdout.gemm_workload[" + std::to_string(i) + "]", origin, true));
    const std::string hd = "holdout.attention_decode";
    auto prefill_rows = [&](const std::string& key, std::vector<HoldoutPrefill>& into) {
      const std::string hp = "holdout." + key;
      for (const auto& r : rows(key.c_str()))
        into.push_back({int(int_or(r, "head_dim", 128, hp, origin, 1, kMaxHeadsOrDim)),
                        int(int_or(r, "heads", 32, hp, origin, 1, kMaxHeadsOrDim)),
                        int(int_or(r, "kv_heads", 8, hp, origin, 1, kMaxHeadsOrDim)),
                        int_or(r, "batch", 1, hp, origin, 1, kMaxDim),
                        int_or(r, "seq_len", 0, hp, origin, 0, kMaxDim),
                        bool_or(r, "causal", true, hp, origin), num_or(r, "seconds", 0),
                        num_or(r, "backward_seconds", 0)});
    };
    prefill_rows("attention_prefill", p.holdout_prefill);
    prefill_rows("attention_prefill_flash2", p.holdout_prefill_flash2);
    for (const auto& r : rows("attention_decode"))
      p.holdout_decode.push_back({int(int_or(r, "heads", 32, hd, origin, 1, kMaxHeadsOrDim)),
                                  int(int_or(r, "kv_heads", 8, hd, origin, 1, kMaxHeadsOrDim)),
                                  int(int_or(r, "head_dim", 128, hd, origin, 1, kMaxHeadsOrDim)),
                                  int_or(r, "batch", 1, hd, origin, 1, kMaxDim),
                                  int_or(r, "context", 0, hd, origin, 0, kMaxDim), num_or(r, "seconds", 0)});
    for (const auto& r : rows("memory_bound"))
      p.holdout_memory.push_back({num_or(r, "bytes", 0), num_or(r, "seconds", 0)});
  }
  if (j.contains("kernels") && j["kernels"].is_array())
    for (const auto& r : j["kernels"])
      p.kernels.push_back({str(r, "name", ""), str(r, "group", ""), str(r, "shape", ""), str(r, "unit", ""),
                           str(r, "ceiling_name", ""), num_or(r, "seconds", 0), num_or(r, "achieved", 0),
                           num_or(r, "ceiling", 0)});
  if (j.contains("fleet") && j["fleet"].contains("gemm")) {
    const Json& fg = j["fleet"]["gemm"];
    const Json& sc = need(fg, "scale", "fleet.gemm", origin);
    if (!sc.is_object()) fail(origin, "fleet.gemm.scale", "expected an object {format: factor}");
    for (auto it = sc.begin(); it != sc.end(); ++it) {
      const std::string f = "fleet.gemm.scale." + it.key();
      const Dtype d = gemm_dtype(it.key(), f, origin);
      const double x = number(it.value(), f, origin, 0);
      if (!(x > 0.5 && x < 2)) fail(origin, f, "expected a factor between 0.5 and 2, got " + fmt_num(x));
      for (auto& t : p.gemm)
        if (t.dtype == d) t.fleet_scale = x;
    }
    if (fg.contains("timing")) {
      const Json& tj = fg["timing"];
      GemmTimingCorrection tc;
      tc.seconds = axis(need(tj, "seconds", "fleet.gemm.timing", origin), "fleet.gemm.timing.seconds", origin);
      const Json& r = need(tj, "ratio", "fleet.gemm.timing", origin);
      if (!r.is_array() || r.size() != tc.seconds.size())
        fail(origin, "fleet.gemm.timing.ratio", "expected one ratio per entry of seconds");
      for (std::size_t i = 0; i < r.size(); ++i) {
        const double x = number(r[i], "fleet.gemm.timing.ratio[" + std::to_string(i) + "]", origin, 0);
        if (!(x > 0.5 && x < 2))
          fail(origin, "fleet.gemm.timing.ratio[" + std::to_string(i) + "]",
               "expected a ratio between 0.5 and 2, got " + fmt_num(x));
        tc.ratio.push_back(x);
      }
      p.gemm_timing = std::move(tc);
    }
  }
  if (j.contains("spread")) {
    const Json& sp = j["spread"];
    if (!sp.is_object()) fail(origin, "spread", "expected an object {kind: {low, high}}");
    p.spread_method = str(sp, "method", "");
    for (const char* kind : {"gemm", "attention", "memory"}) {
      if (!sp.contains(kind)) continue;
      const std::string f = std::string("spread.") + kind;
      Profile::SpreadBand b;
      b.low = number(need(sp[kind], "low", f, origin), f + ".low", origin, -0.9);
      b.high = number(need(sp[kind], "high", f, origin), f + ".high", origin, 0);
      if (b.low > 0) fail(origin, f + ".low", "expected a relative deviation <= 0, got " + fmt_num(b.low));
      if (b.high > 10) fail(origin, f + ".high", "expected a relative deviation <= 10, got " + fmt_num(b.high));
      b.samples = int(int_or(sp[kind], "samples", 0, f, origin, 0, kIntMax));
      p.spread[kind] = b;
    }
  }
  if (j.contains("validation_error")) {
    const Json& ve = j["validation_error"];
    if (!ve.is_object()) fail(origin, "validation_error", "expected an object {kind: {p10, p50, p90, rows}}");
    // p10 <= p50 <= p90 in [0.001, 100], rows >= 1, held_out_coverage in [0, 1]: of a record or a band.
    auto read_quantiles = [&](const Json& r, const std::string& f, ValidationQuantiles& q) {
      q.p10 = number(need(r, "p10", f, origin), f + ".p10", origin, 1e-3);
      q.p50 = number(need(r, "p50", f, origin), f + ".p50", origin, 1e-3);
      q.p90 = number(need(r, "p90", f, origin), f + ".p90", origin, 1e-3);
      if (!(q.p10 <= q.p50 && q.p50 <= q.p90))
        fail(origin, f,
             "expected p10 <= p50 <= p90, got " + fmt_num(q.p10) + ", " + fmt_num(q.p50) + ", " +
                 fmt_num(q.p90));
      if (q.p90 > 100) fail(origin, f + ".p90", "expected a ratio <= 100, got " + fmt_num(q.p90));
      q.rows = int(integer(need(r, "rows", f, origin), f + ".rows", origin, 1, kIntMax));
      q.held_out_rows = int(int_or(r, "held_out_rows", 0, f, origin, 0, kIntMax));
      q.held_out_coverage = num_or(r, "held_out_coverage", 0);
      if (!(q.held_out_coverage >= 0 && q.held_out_coverage <= 1))
        fail(origin, f + ".held_out_coverage",
             "expected a share in [0, 1], got " + fmt_num(q.held_out_coverage));
    };
    for (const char* kind : {"training_step", "gemm", "serving_ttft", "serving_tpot"}) {
      if (!ve.contains(kind)) continue;
      const std::string f = std::string("validation_error.") + kind;
      ValidationError v;
      read_quantiles(ve[kind], f, v);
      v.what = str(ve[kind], "what", kind);
      if (ve[kind].contains("bands")) {
        // Bands of predicted time: from 0, each starting where the one before ended, the last open.
        const Json& bands = ve[kind]["bands"];
        if (!bands.is_array() || bands.empty())
          fail(origin, f + ".bands", "expected a non-empty array of {from_s, to_s, p10, p50, p90, rows}");
        for (std::size_t i = 0; i < bands.size(); ++i) {
          const std::string bf = f + ".bands[" + std::to_string(i) + "]";
          ValidationBand b;
          read_quantiles(bands[i], bf, b);
          b.from_s = number(need(bands[i], "from_s", bf, origin), bf + ".from_s", origin, 0);
          const double expected_from = i == 0 ? 0.0 : v.bands.back().to_s;
          if (b.from_s != expected_from)
            fail(
                origin, bf + ".from_s",
                "expected " + fmt_num(expected_from) + " (bands start at 0, each where the one before ends)");
          const bool last = i + 1 == bands.size();
          if (last != !bands[i].contains("to_s"))
            fail(origin, bf + ".to_s", last ? "the last band is open: no to_s" : "missing (required)");
          b.to_s = last ? std::numeric_limits<double>::infinity()
                        : number(bands[i]["to_s"], bf + ".to_s", origin, 0);
          if (!(b.to_s > b.from_s))
            fail(origin, bf + ".to_s", "expected more than from_s (" + fmt_num(b.from_s) + ")");
          v.bands.push_back(b);
        }
      }
      p.validation_error[kind] = v;
    }
  }
  if (j.contains("comm")) p.comm = j["comm"];
  if (j.contains("framework")) parse_framework_section(j, origin, p);
  parse_serving_sections(j, origin, p);
  if (j.contains("power")) parse_power_section(j, origin, p);
  if (j.contains("gemm_clock")) {
    const Json& gc = j["gemm_clock"];
    const std::string gp = "gemm_clock";
    Profile::GemmClock g;
    g.reference_mhz = number(need(gc, "reference_mhz", gp, origin), gp + ".reference_mhz", origin, 1);
    if (g.reference_mhz > 1e5) fail(origin, gp + ".reference_mhz", "expected a clock below 100 GHz");
    const Json& ex = need(gc, "exponent", gp, origin);
    if (!ex.is_object()) fail(origin, gp + ".exponent", "expected an object of format -> exponent");
    for (auto it = ex.begin(); it != ex.end(); ++it) {
      const std::string f = gp + ".exponent." + it.key();
      const double b = number(*it, f, origin, 0);
      if (b > 2) fail(origin, f, "expected an exponent in [0, 2]");
      g.exponent[parse_dtype(it.key(), f)] = b;
    }
    p.gemm_clock = std::move(g);
  }
  if (j.contains("contention")) {
    const Json& cj = j["contention"];
    p.gemm_slowdown_under_comm =
        number(need(cj, "gemm_slowdown_under_comm", "contention", origin), "contention.gemm_slowdown_under_comm",
               origin, 1);
    if (p.gemm_slowdown_under_comm > 4)
      fail(origin, "contention.gemm_slowdown_under_comm", "expected a slowdown between 1 and 4");
  }
  return p;
}

Profile load_profile_file(const std::string& path) {
  Json j = read_json_file(path);
  if (is_cluster_profile(j)) {
    const auto gpus = cluster_profile_gpus(j);
    if (gpus.size() != 1)
      throw Error(path + " is a cluster profile with " + std::to_string(gpus.size()) + " GPU profiles (" + join(gpus) +
                  "): say which GPU it is loaded for");
    return parse_profile(*gpu_profile_from_cluster_profile(j, gpus.front()), path);
  }
  return parse_profile(j, path);
}

void check_profile_gpu(const Profile& p, const std::string& gpu_name, bool force) {
  if (p.gpu == gpu_name || force) return;
  throw Error("profile " + p.origin + " describes gpu '" + p.gpu + "', not '" + gpu_name +
              "'; use a profile calibrated on " + gpu_name + " (infraplan calibrate), or force it");
}

Profile load_profile_for(const std::string& path, const std::string& gpu_name, bool force) {
  Json j = read_json_file(path);
  if (is_cluster_profile(j)) {
    auto g = gpu_profile_from_cluster_profile(j, gpu_name);
    if (!g)
      throw Error(path + " is a cluster profile without a GPU profile of " + gpu_name + " (it has: " +
                  (cluster_profile_gpus(j).empty() ? std::string("none") : join(cluster_profile_gpus(j))) +
                  "); merge one in (infraplan calibrate merge) or name a profile of that GPU");
    j = std::move(*g);
  }
  Profile p = parse_profile(j, path);
  check_profile_gpu(p, gpu_name, force);
  return p;
}

std::vector<std::string> default_profile_gpus() {
  std::vector<std::string> v;
  for (int i = 0; i < embedded::kProfileCount; ++i) v.emplace_back(embedded::kProfiles[i].gpu);
  std::sort(v.begin(), v.end());
  return v;
}

std::string default_profile_json(const std::string& gpu_name) {
  for (int i = 0; i < embedded::kProfileCount; ++i) {
    const auto& e = embedded::kProfiles[i];
    if (gpu_name == e.gpu) {
      std::string s;
      for (int k = 0; k < e.piece_count; ++k) s += e.pieces[k];
      return s;
    }
  }
  return {};
}

bool has_default_profile(const std::string& gpu_name) { return !default_profile_json(gpu_name).empty(); }

Profile default_profile(const std::string& gpu_name) {
  std::string text = default_profile_json(gpu_name);
  if (text.empty())
    throw Error("no built-in profile for gpu '" + gpu_name + "'; built-in profiles: " +
                join(default_profile_gpus()) + "; run infraplan calibrate on that GPU and pass the file");
  std::string origin = "embedded:" + gpu_name;
  Profile p = parse_profile(parse_json_text(text, origin), origin);
  check_profile_gpu(p, gpu_name, false);
  return p;
}

}  // namespace infraplan::hw
