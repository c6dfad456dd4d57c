#include "hardware/profile.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <utility>

#include "hardware/cluster_profile.hpp"
#include "hardware/profile_embedded.hpp"
#include "common/checked_number.hpp"
#include "common/error.hpp"

namespace infraplan::hw {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void fail(const std::string& origin, const std::string& field, const std::string& what) {
  throw Error("profile " + origin + ": " + field + ": " + what);
}

const Json& need(const Json& j, const std::string& key, const std::string& path, const std::string& origin) {
  if (!j.is_object()) fail(origin, path.empty() ? "top level" : path, "expected a JSON object");
  if (!j.contains(key) || j.at(key).is_null())
    fail(origin, path.empty() ? key : path + "." + key, "missing (required)");
  return j.at(key);
}

std::string shown(const Json& v) {
  std::string s = v.dump();
  return s.size() > 64 ? s.substr(0, 64) + "..." : s;
}

double number(const Json& v, const std::string& field, const std::string& origin, double min = -1e300) {
  if (!v.is_number()) fail(origin, field, "expected a number, got " + shown(v));
  double d = v.get<double>();
  if (!std::isfinite(d) || d < min)
    fail(origin, field, "expected a finite number >= " + number_text(min) + ", got " + shown(v));
  return d;
}

/// A whole number in [min, max], checked before any cast.
std::int64_t integer(const Json& v, const std::string& field, const std::string& origin, std::int64_t min,
                     std::int64_t max) {
  if (!v.is_number()) fail(origin, field, "expected an integer in " + range_text(min, max) + ", got " + shown(v));
  try {
    return integer_from_real(v.get<double>(), field, min, max);
  } catch (const Error& e) {
    fail(origin, field, e.what());
  }
}

/// An optional whole number: `fallback` when the key is absent or not a number.
std::int64_t int_or(const Json& j, const std::string& key, std::int64_t fallback, const std::string& field,
                    const std::string& origin, std::int64_t min, std::int64_t max) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return fallback;
  return integer(j.at(key), field + "." + key, origin, min, max);
}

bool bool_or(const Json& j, const std::string& key, bool fallback, const std::string& field,
             const std::string& origin) {
  if (!j.is_object() || !j.contains(key)) return fallback;
  if (!j.at(key).is_boolean()) fail(origin, field + "." + key, "expected true or false, got " + shown(j.at(key)));
  return j.at(key).get<bool>();
}

// Largest sizes a profile may describe: heads and head widths, SMs, and token/GEMM dimensions.
constexpr std::int64_t kMaxHeadsOrDim = 1 << 16;
constexpr std::int64_t kMaxSms = 1 << 16;
constexpr std::int64_t kMaxDim = std::int64_t(1) << 40;

/// An ascending axis of positive numbers.
std::vector<double> axis(const Json& v, const std::string& field, const std::string& origin) {
  if (!v.is_array() || v.empty()) fail(origin, field, "expected a non-empty array of numbers");
  std::vector<double> a;
  for (std::size_t i = 0; i < v.size(); ++i) {
    double d = number(v[i], field + "[" + std::to_string(i) + "]", origin, 0);
    if (d <= 0) fail(origin, field + "[" + std::to_string(i) + "]", "must be > 0");
    if (!a.empty() && d <= a.back()) fail(origin, field, "must be strictly ascending");
    a.push_back(d);
  }
  return a;
}

/// Flattens nested arrays of seconds (null → NaN) and checks the count.
void flatten(const Json& v, const std::string& field, const std::string& origin, std::vector<double>& out) {
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i)
      flatten(v[i], field + "[" + std::to_string(i) + "]", origin, out);
  } else if (v.is_null()) {
    out.push_back(kNaN);
  } else {
    double d = number(v, field, origin, 0);
    if (d <= 0) fail(origin, field, "a time must be > 0 seconds");
    out.push_back(d);
  }
}

std::vector<double> seconds_grid(const Json& v, const std::string& field, const std::string& origin,
                                 std::size_t expected, const std::string& dims) {
  std::vector<double> out;
  if (!v.is_array()) fail(origin, field, "expected a nested array of seconds");
  flatten(v, field, origin, out);
  if (out.size() != expected)
    fail(origin, field,
         "expected " + std::to_string(expected) + " entries (" + dims + "), got " +
             std::to_string(out.size()));
  return out;
}

std::string str(const Json& j, const std::string& key, const std::string& fallback) {
  if (j.is_object() && j.contains(key) && j.at(key).is_string()) return j.at(key).get<std::string>();
  return fallback;
}

double num_or(const Json& j, const std::string& key, double fallback) {
  if (j.is_object() && j.contains(key) && j.at(key).is_number()) return j.at(key).get<double>();
  return fallback;
}

Dtype gemm_dtype(const std::string& name, const std::string& field, const std::string& origin) {
  try {
    return parse_dtype(name, field);
  } catch (const Error& e) {
    fail(origin, field, e.what());
  }
}

std::string fmt_num(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

/// The mean of an optional `clock_mhz` pair [before, after] (MHz); 0 when absent.
double clock_pair_mean(const Json& j, const std::string& field, const std::string& origin) {
  if (!j.is_object() || !j.contains("clock_mhz")) return 0;
  const Json& c = j["clock_mhz"];
  const std::string f = field + ".clock_mhz";
  if (!c.is_array() || c.size() != 2) fail(origin, f, "expected [MHz before, MHz after]");
  double a = number(c[0], f, origin, 0), b = number(c[1], f, origin, 0);
  if (a < 100 || b < 100 || a > 10000 || b > 10000)
    fail(origin, f, "expected MHz between 100 and 10000, got " + c.dump());
  return 0.5 * (a + b);
}

/// The optional "layout" of a GEMM entry ("tn" when absent).
GemmLayout layout_of(const Json& r, const std::string& f, const std::string& origin) {
  if (!r.is_object() || !r.contains("layout")) return GemmLayout::TN;
  const Json& v = r["layout"];
  auto l = v.is_string() ? parse_gemm_layout(v.get<std::string>()) : std::nullopt;
  if (!l) fail(origin, f + ".layout", "expected \"tn\", \"nn\" or \"nt\", got " + v.dump());
  return *l;
}

/// One timed GEMM shape {dtype, m, n, k, seconds, repeats?, clock_mhz? [[before, after] per
/// repeat]} (held-out shapes and exact workload shapes). `strict`: sizes and seconds must be > 0.
HoldoutGemm gemm_measurement(const Json& r, const std::string& f, const std::string& origin, bool strict) {
  if (!r.is_object()) fail(origin, f, "expected an object {dtype, m, n, k, seconds}");
  HoldoutGemm g;
  g.dtype = gemm_dtype(str(r, "dtype", ""), f + ".dtype", origin);
  g.layout = layout_of(r, f, origin);
  std::int64_t* dims[] = {&g.m, &g.n, &g.k};
  const char* names[] = {"m", "n", "k"};
  for (int d = 0; d < 3; ++d) {
    *dims[d] = int_or(r, names[d], 0, f, origin, 0, kMaxDim);
    if (strict && *dims[d] <= 0) fail(origin, f + "." + names[d], "expected a positive integer");
  }
  g.seconds =
      strict ? number(need(r, "seconds", f, origin), f + ".seconds", origin, 1e-12) : num_or(r, "seconds", 0);
  if (r.contains("repeats")) {
    if (!r["repeats"].is_array()) fail(origin, f + ".repeats", "expected an array of seconds");
    for (std::size_t q = 0; q < r["repeats"].size(); ++q)
      g.repeats.push_back(number(r["repeats"][q], f + ".repeats", origin, 1e-12));
  }
  if (r.contains("clock_mhz")) {
    const Json& cm = r["clock_mhz"];
    if (!cm.is_array() || cm.size() != g.repeats.size())
      fail(origin, f + ".clock_mhz", "expected one [before, after] pair per entry of repeats");
    for (std::size_t q = 0; q < cm.size(); ++q) {
      Json one = {{"clock_mhz", cm[q]}};
      g.repeat_clock_mhz.push_back(clock_pair_mean(one, f, origin));
    }
  }
  return g;
}

}  // namespace

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
  if (tables.contains("gemm_rows")) {
    const Json& g = tables["gemm_rows"];
    if (!g.is_array()) fail(origin, "tables.gemm_rows", "expected an array of {dtype, n, k, points}");
    for (std::size_t i = 0; i < g.size(); ++i) {
      const std::string f = "tables.gemm_rows[" + std::to_string(i) + "]";
      const Json& r = g[i];
      if (!r.is_object()) fail(origin, f, "expected an object {dtype, n, k, points}");
      Profile::GemmRow row;
      row.dtype = gemm_dtype(str(r, "dtype", ""), f + ".dtype", origin);
      row.layout = layout_of(r, f, origin);
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
      p.gemm_rows.push_back(std::move(row));
    }
  }
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
    for (const char* kind : {"training_step", "gemm", "serving_ttft", "serving_tpot"}) {
      if (!ve.contains(kind)) continue;
      const std::string f = std::string("validation_error.") + kind;
      ValidationError v;
      v.p10 = number(need(ve[kind], "p10", f, origin), f + ".p10", origin, 1e-3);
      v.p50 = number(need(ve[kind], "p50", f, origin), f + ".p50", origin, 1e-3);
      v.p90 = number(need(ve[kind], "p90", f, origin), f + ".p90", origin, 1e-3);
      if (!(v.p10 <= v.p50 && v.p50 <= v.p90))
        fail(origin, f,
             "expected p10 <= p50 <= p90, got " + fmt_num(v.p10) + ", " + fmt_num(v.p50) + ", " +
                 fmt_num(v.p90));
      if (v.p90 > 100) fail(origin, f + ".p90", "expected a ratio <= 100, got " + fmt_num(v.p90));
      v.rows = int(integer(need(ve[kind], "rows", f, origin), f + ".rows", origin, 1, kIntMax));
      v.what = str(ve[kind], "what", kind);
      v.held_out_rows = int(int_or(ve[kind], "held_out_rows", 0, f, origin, 0, kIntMax));
      v.held_out_coverage = num_or(ve[kind], "held_out_coverage", 0);
      if (!(v.held_out_coverage >= 0 && v.held_out_coverage <= 1))
        fail(origin, f + ".held_out_coverage",
             "expected a share in [0, 1], got " + fmt_num(v.held_out_coverage));
      p.validation_error[kind] = v;
    }
  }
  if (j.contains("comm")) p.comm = j["comm"];
  if (j.contains("framework")) {
    const Json& f = j["framework"];
    const std::string fp = "framework";
    if (!f.is_object()) fail(origin, fp, "expected a JSON object");
    FrameworkProfile fw;
    fw.name = str(f, "name", "");
    if (fw.name.empty()) fail(origin, fp + ".name", "missing (required), e.g. \"pytorch-eager\"");
    fw.torch_version = str(f, "torch_version", "");
    fw.cuda_version = str(f, "cuda_version", "");
    fw.date = str(f, "date", "");
    fw.command = str(f, "command", "");
    auto us = [&](const char* key, bool required) {
      if (!f.contains(key)) {
        if (required) fail(origin, fp + "." + key, "missing (required), microseconds >= 0");
        return 0.0;
      }
      return number(f[key], fp + "." + key, origin, 0);
    };
    fw.op_dispatch_us_forward = us("op_dispatch_us_forward", true);
    fw.op_dispatch_us_backward = us("op_dispatch_us_backward", true);
    fw.optimizer_us_per_tensor = us("optimizer_us_per_tensor", true);
    fw.optimizer_us_fixed = us("optimizer_us_fixed", false);
    fw.aten_op_us_nograd = us("aten_op_us_nograd", false);
    fw.checkpoint_us_forward_per_block = us("checkpoint_us_forward_per_block", false);
    fw.checkpoint_us_backward_per_block = us("checkpoint_us_backward_per_block", false);
    fw.aten_op_us_forward = us("aten_op_us_autograd_forward", false);
    fw.aten_op_us_backward = us("aten_op_us_autograd_backward", false);
    // {key: {forward_us, backward_us}} objects; `admit` may refuse a key (returns the reason), and
    // a value above `max_us` is refused.
    auto fwd_bwd_map = [&](const char* name, std::map<std::string, std::pair<double, double>>& out,
                           double max_us, const std::function<std::string(const std::string&)>& admit) {
      if (!f.contains(name)) return;
      const Json& o = f[name];
      const std::string fo = fp + "." + name;
      if (!o.is_object()) fail(origin, fo, "expected an object of {forward_us, backward_us}");
      for (auto it = o.begin(); it != o.end(); ++it) {
        const std::string fk = fo + "." + it.key();
        if (admit) {
          const std::string why = admit(it.key());
          if (!why.empty()) fail(origin, fk, why);
        }
        auto us_of = [&](const char* d) {
          const double v = number(need(*it, d, fk, origin), fk + "." + d, origin, 0);
          if (v > max_us)
            fail(origin, fk + "." + d,
                 "expected at most " + number_text(max_us) + " µs, got " + shown((*it)[d]));
          return v;
        };
        out[it.key()] = {us_of("forward_us"), us_of("backward_us")};
      }
    };
    constexpr double kUnbounded = 1e300;
    fwd_bwd_map("per_module_us", fw.module_us, kUnbounded, {});
    if (f.contains("fused_adamw")) {
      const Json& fa = f["fused_adamw"];
      const std::string fk = fp + ".fused_adamw";
      if (!fa.is_object()) fail(origin, fk, "expected an object {fp32|bf16: [{params, seconds}, ...]}");
      for (auto it = fa.begin(); it != fa.end(); ++it) {
        if (it.key() == "command" || it.key() == "date") continue;
        if (it.key() != "fp32" && it.key() != "bf16")
          fail(origin, fk + "." + it.key(), "unknown state dtype; valid: fp32, bf16");
        if (!it->is_array() || it->empty()) fail(origin, fk + "." + it.key(), "expected a non-empty array");
        std::vector<std::pair<double, double>> pts;
        for (std::size_t i = 0; i < it->size(); ++i) {
          const std::string pk = fk + "." + it.key() + "[" + std::to_string(i) + "]";
          const double n = number(need((*it)[i], "params", pk, origin), pk + ".params", origin, 1);
          const double s = number(need((*it)[i], "seconds", pk, origin), pk + ".seconds", origin, 0);
          if (!pts.empty() && n <= pts.back().first) fail(origin, pk + ".params", "must ascend");
          pts.emplace_back(n, s);
        }
        fw.fused_adamw[it.key()] = std::move(pts);
      }
    }
    fwd_bwd_map("block_host_us", fw.block_us, kUnbounded, {});
    // torch.compile's per-call host cost: at most 1 s per call (measured: up to 4.6 ms).
    fwd_bwd_map("block_host_pass_us", fw.pass_us, 1e6, [](const std::string& key) {
      return key.rfind("torch-compile/", 0) == 0 ? std::string()
                                                 : std::string(
                                                       "only torch-compile entries have a per-call host cost "
                                                       "(eager frameworks price it per op)");
    });
    if (f.contains("block_host_runs")) {
      const Json& pr = f["block_host_runs"];
      const std::string fr = fp + ".block_host_runs";
      if (!pr.is_object()) fail(origin, fr, "expected an object of {forward_us: [...], backward_us: [...]}");
      for (auto it = pr.begin(); it != pr.end(); ++it) {
        const std::string fk = fr + "." + it.key();
        const Json& fw_runs = need(*it, "forward_us", fk, origin);
        const Json& bw_runs = need(*it, "backward_us", fk, origin);
        if (!fw_runs.is_array() || !bw_runs.is_array() || fw_runs.empty() || fw_runs.size() != bw_runs.size() ||
            fw_runs.size() > 1000)
          fail(origin, fk, "expected forward_us and backward_us arrays of the same length (1 … 1000 runs)");
        auto& runs = fw.block_runs[it.key()];
        for (std::size_t i = 0; i < fw_runs.size(); ++i)
          runs.emplace_back(number(fw_runs[i], fk + ".forward_us[" + std::to_string(i) + "]", origin, 0),
                            number(bw_runs[i], fk + ".backward_us[" + std::to_string(i) + "]", origin, 0));
      }
    }
    if (f.contains("elementwise")) {
      const Json& e = f["elementwise"];
      const std::string fe = fp + ".elementwise";
      fw.elementwise_elements = axis(need(e, "elements", fe, origin), fe + ".elements", origin);
      const Json& ops = need(e, "ops", fe, origin);
      if (!ops.is_object()) fail(origin, fe + ".ops", "expected an object of {width, seconds}");
      for (auto it = ops.begin(); it != ops.end(); ++it) {
        const std::string fo = fe + ".ops." + it.key();
        fw.elementwise_seconds[it.key()] =
            seconds_grid(need(*it, "seconds", fo, origin), fo + ".seconds", origin,
                         fw.elementwise_elements.size(), "one per element count");
      }
    }
    if (f.contains("clock_share")) {
      const std::string fc = fp + ".clock_share";
      const Json& ops = need(f["clock_share"], "ops", fc, origin);
      if (!ops.is_object()) fail(origin, fc + ".ops", "expected an object {op: share in [0, 1]}");
      for (auto it = ops.begin(); it != ops.end(); ++it) {
        const std::string fo = fc + ".ops." + it.key();
        const bool adamw = it.key() == "fused_adamw_fp32" || it.key() == "fused_adamw_bf16";
        if (!adamw && !fw.elementwise_seconds.count(it.key()))
          fail(origin, fo,
               "no such op in framework.elementwise.ops (nor fused_adamw_fp32 / fused_adamw_bf16)");
        const double share = number(*it, fo, origin, 0);
        if (share > 1) fail(origin, fo, "expected a share in [0, 1], got " + fmt_num(share));
        fw.clock_share[it.key()] = share;
      }
    }
    if (f.contains("memsets")) {
      const std::string fm = fp + ".memsets";
      const Json& m = f["memsets"];
      FrameworkProfile::Memsets ms;
      ms.per_gemm = number(need(m, "per_gemm", fm, origin), fm + ".per_gemm", origin, 0);
      ms.seconds = number(need(m, "seconds", fm, origin), fm + ".seconds", origin, 0);
      if (ms.per_gemm > 4) fail(origin, fm + ".per_gemm", "expected at most 4 memsets per GEMM call");
      if (ms.seconds > 1e-3) fail(origin, fm + ".seconds", "expected at most 1 ms per memset");
      fw.memsets = ms;
    }
    p.framework = std::move(fw);
  }
  if (j.contains("serving_kernels")) {
    const Json& sk = j["serving_kernels"];
    const std::string sp = "serving_kernels";
    Profile::RowKernelTable t;
    t.rows = axis(need(sk, "rows", sp, origin), sp + ".rows", origin);
    if (sk.contains("source") && sk["source"].is_string()) t.source = sk["source"].get<std::string>();
    const Json& ks = need(sk, "kernels", sp, origin);
    if (!ks.is_object()) fail(origin, sp + ".kernels", "expected an object of kernel name -> [{width, seconds}]");
    for (auto it = ks.begin(); it != ks.end(); ++it) {
      const std::string kp = sp + ".kernels." + it.key();
      if (!it->is_array() || it->empty()) fail(origin, kp, "expected a non-empty array of {width, seconds}");
      auto& widths = t.kernels[it.key()];
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string wp = kp + "[" + std::to_string(i) + "]";
        const double w = number(need((*it)[i], "width", wp, origin), wp + ".width", origin, 1);
        if (!widths.empty() && w <= widths.back().first) fail(origin, wp + ".width", "widths must ascend");
        widths.emplace_back(w, seconds_grid(need((*it)[i], "seconds", wp, origin), wp + ".seconds", origin,
                                            t.rows.size(), "one per row count"));
      }
    }
    p.serving_kernels = std::move(t);
  }
  if (j.contains("serving_attention")) {
    const Json& sa = j["serving_attention"];
    const std::string sp = "serving_attention";
    if (!sa.is_object()) fail(origin, sp, "expected an object {prefill: [...], decode: [...]}");
    Profile::ServingAttention t;
    if (sa.contains("source") && sa["source"].is_string()) t.source = sa["source"].get<std::string>();
    if (sa.contains("decode_tile_tokens"))
      t.decode_tile_tokens = int(integer(sa["decode_tile_tokens"], sp + ".decode_tile_tokens", origin, 1, 4096));
    if (sa.contains("prefill_key_tile"))
      t.prefill_key_tile = int(integer(sa["prefill_key_tile"], sp + ".prefill_key_tile", origin, 16, 1024));
    if (sa.contains("prefill_ctas_per_sm"))
      t.prefill_ctas_per_sm =
          int(integer(sa["prefill_ctas_per_sm"], sp + ".prefill_ctas_per_sm", origin, 1, 32));
    if (sa.contains("prefill_row_groups")) {
      t.prefill_row_groups =
          int(integer(sa["prefill_row_groups"], sp + ".prefill_row_groups", origin, 1, 128));
      if (128 % t.prefill_row_groups != 0)
        fail(origin, sp + ".prefill_row_groups",
             "expected a divisor of 128 (the query rows of a CTA): 1, 2, 4, …");
    }
    constexpr std::int64_t kMaxTokens = std::int64_t(1) << 24;
    // Every point: the head shape it was timed with and its kernel time.
    auto heads_and_seconds = [&](const Json& q, const std::string& f, int& heads, int& kv_heads, double& seconds) {
      heads = int(integer(need(q, "heads", f, origin), f + ".heads", origin, 1, kMaxHeadsOrDim));
      kv_heads = int(integer(need(q, "kv_heads", f, origin), f + ".kv_heads", origin, 1, heads));
      seconds = number(need(q, "seconds", f, origin), f + ".seconds", origin, 1e-9);
      if (seconds > 10) fail(origin, f + ".seconds", "expected a kernel time below 10 s");
    };
    const Json& pre = need(sa, "prefill", sp, origin);
    if (!pre.is_array()) fail(origin, sp + ".prefill", "expected an array of {heads, kv_heads, chunks, seconds}");
    for (std::size_t i = 0; i < pre.size(); ++i) {
      const std::string f = sp + ".prefill[" + std::to_string(i) + "]";
      Profile::ServingAttention::Prefill pt;
      heads_and_seconds(pre[i], f, pt.heads, pt.kv_heads, pt.seconds);
      const Json& ch = need(pre[i], "chunks", f, origin);
      if (!ch.is_array() || ch.empty() || ch.size() > 4096)
        fail(origin, f + ".chunks", "expected 1 to 4096 [new tokens, cached tokens] pairs");
      for (std::size_t ci = 0; ci < ch.size(); ++ci) {
        const std::string cf = f + ".chunks[" + std::to_string(ci) + "]";
        if (!ch[ci].is_array() || ch[ci].size() != 2) fail(origin, cf, "expected [new tokens, cached tokens]");
        pt.chunks.push_back({integer(ch[ci][0], cf + "[0]", origin, 1, kMaxTokens),
                             integer(ch[ci][1], cf + "[1]", origin, 0, kMaxTokens)});
      }
      t.prefill.push_back(std::move(pt));
    }
    const Json& dec = need(sa, "decode", sp, origin);
    if (!dec.is_array()) fail(origin, sp + ".decode", "expected an array of decode batches");
    for (std::size_t i = 0; i < dec.size(); ++i) {
      const std::string f = sp + ".decode[" + std::to_string(i) + "]";
      Profile::ServingAttention::Decode pt;
      heads_and_seconds(dec[i], f, pt.heads, pt.kv_heads, pt.seconds);
      pt.batch = integer(need(dec[i], "batch", f, origin), f + ".batch", origin, 1, 1 << 20);
      pt.context = integer(need(dec[i], "context", f, origin), f + ".context", origin, 1, kMaxTokens);
      pt.shared_prefix = integer(need(dec[i], "shared_prefix", f, origin), f + ".shared_prefix", origin, 0, pt.context);
      pt.groups = integer(need(dec[i], "groups", f, origin), f + ".groups", origin, 1, pt.batch);
      const std::int64_t all = pt.batch * ((pt.context + 15) / 16);
      pt.unique_blocks = integer(need(dec[i], "unique_blocks", f, origin), f + ".unique_blocks", origin, 1, all);
      t.decode.push_back(pt);
    }
    p.serving_attention = std::move(t);
  }
  if (j.contains("power")) {
    const Json& pj = j["power"];
    const std::string pp = "power";
    Profile::PowerSection ps;
    ps.limit_w = number(need(pj, "limit_w", pp, origin), pp + ".limit_w", origin, 1);
    ps.max_clock_mhz = number(need(pj, "max_clock_mhz", pp, origin), pp + ".max_clock_mhz", origin, 1);
    if (ps.limit_w > 1e5) fail(origin, pp + ".limit_w", "expected a board power below 100 kW");
    if (ps.max_clock_mhz > 1e5) fail(origin, pp + ".max_clock_mhz", "expected a clock below 100 GHz");
    if (pj.contains("idle_w") && pj["idle_w"].is_number()) ps.idle_w = number(pj["idle_w"], pp + ".idle_w", origin, 0);
    const Json& pts = need(pj, "points", pp, origin);
    if (!pts.is_array()) fail(origin, pp + ".points", "expected an array of measured workloads");
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const Json& q = pts[i];
      const std::string f = pp + ".points[" + std::to_string(i) + "]";
      Profile::PowerPoint pt;
      const Json& kind = need(q, "kind", f, origin);
      if (!kind.is_string())
        fail(origin, f + ".kind", "expected \"gemm\", \"copy\", \"elementwise\", \"attention\", \"decode\" or \"mixed\"");
      pt.label = kind.get<std::string>();
      const std::string kind_name = pt.label;
      if (pt.label != "gemm" && pt.label != "copy" && pt.label != "mixed" && pt.label != "elementwise" &&
          pt.label != "attention" && pt.label != "decode")
        fail(origin, f + ".kind",
             "expected \"gemm\", \"copy\", \"elementwise\", \"attention\", \"decode\" or \"mixed\", got " +
                 shown(kind));
      if (q.contains("dtype")) {
        const Json& dt = q["dtype"];
        if (!dt.is_string()) fail(origin, f + ".dtype", "expected a format name");
        const Dtype d = parse_dtype(dt.get<std::string>(), f + ".dtype");
        pt.eight_bit = d == Dtype::FP8 || d == Dtype::INT8;
        pt.label += " " + dt.get<std::string>();
      }
      if (q.contains("m") && q.contains("n") && q.contains("k"))
        pt.label += " " + std::to_string(integer(q["m"], f + ".m", origin, 1, kMaxDim)) + "x" +
                    std::to_string(integer(q["n"], f + ".n", origin, 1, kMaxDim)) + "x" +
                    std::to_string(integer(q["k"], f + ".k", origin, 1, kMaxDim));
      if (q.contains("layout") && q["layout"].is_string()) pt.label += " " + q["layout"].get<std::string>();
      pt.attention = kind_name == "attention";
      // Attention points of a framework's kernel (bench/pytorch/attention_power.py): pass and shape.
      if (pt.attention && q.contains("pass") && q["pass"].is_string() && q.contains("batch") &&
          q.contains("heads") && q.contains("seq_len") && q.contains("head_dim"))
        pt.label += " " + q["pass"].get<std::string>() + " " +
                    std::to_string(integer(q["batch"], f + ".batch", origin, 1, kMaxDim)) + "x" +
                    std::to_string(integer(q["heads"], f + ".heads", origin, 1, kMaxDim)) + "x" +
                    std::to_string(integer(q["seq_len"], f + ".seq_len", origin, 1, kMaxDim)) + "x" +
                    std::to_string(integer(q["head_dim"], f + ".head_dim", origin, 1, kMaxDim));
      if (pt.attention && q.contains("kernel") && q["kernel"].is_string())
        pt.label += " (" + q["kernel"].get<std::string>() + ")";
      if (kind_name == "mixed") pt.gemm_label = "gemm" + pt.label.substr(kind_name.size());
      if (q.contains("mix_with") && q["mix_with"].is_string()) {
        pt.mix_with = q["mix_with"].get<std::string>();
        if (pt.mix_with != "idle" && pt.mix_with != "copy" && pt.mix_with != "elementwise")
          fail(origin, f + ".mix_with", "expected \"idle\", \"copy\" or \"elementwise\", got " + shown(q["mix_with"]));
        pt.label += " + " + pt.mix_with;
      }
      const Json& role = need(q, "role", f, origin);
      if (!role.is_string() || (role.get<std::string>() != "fit" && role.get<std::string>() != "holdout"))
        fail(origin, f + ".role", "expected \"fit\" or \"holdout\", got " + shown(role));
      pt.role = role.get<std::string>();
      pt.flops = number(need(q, "flops", f, origin), f + ".flops", origin, 0);
      pt.bytes = number(need(q, "bytes", f, origin), f + ".bytes", origin, 0);
      if (q.contains("elementwise_bytes"))
        pt.elementwise_bytes = number(q["elementwise_bytes"], f + ".elementwise_bytes", origin, 0);
      else if (pt.label == "elementwise")
        pt.elementwise_bytes = std::exchange(pt.bytes, 0.0);
      // Paged decode attention's FLOPs run on CUDA cores, not tensor cores: the law prices its bytes.
      if (kind_name == "decode") pt.flops = 0;
      const Json& b = need(q, "burst", f, origin);
      const Json& su = need(q, "sustained", f, origin);
      pt.burst_seconds = number(need(b, "seconds", f + ".burst", origin), f + ".burst.seconds", origin, 1e-9);
      pt.sustained_seconds =
          number(need(su, "seconds", f + ".sustained", origin), f + ".sustained.seconds", origin, 1e-9);
      pt.clock_mhz = number(need(su, "clock_mhz", f + ".sustained", origin), f + ".sustained.clock_mhz", origin, 1);
      pt.power_w = number(need(su, "power_w", f + ".sustained", origin), f + ".sustained.power_w", origin, 1);
      // A mixture's clock changes within its period: the clock sampled every 100 ms by NVML averages
      // over it, where the GPU-side reading falls at one phase.
      if (pt.label.rfind("mixed", 0) == 0 && su.contains("nvml_clock_mhz") && su["nvml_clock_mhz"].is_number())
        pt.clock_mhz = number(su["nvml_clock_mhz"], f + ".sustained.nvml_clock_mhz", origin, 1);
      if (q.contains("period_s")) pt.period_s = number(q["period_s"], f + ".period_s", origin, 0);
      if (q.contains("gemm_share")) pt.gemm_share = number(q["gemm_share"], f + ".gemm_share", origin, 0);
      if (pt.gemm_share > 1) fail(origin, f + ".gemm_share", "expected a share of time in [0, 1]");
      if (pt.period_s > 0) pt.label += " @ " + std::to_string(std::lround(pt.period_s * 1e3)) + " ms";
      if (q.contains("gemm_burst_seconds") && q.contains("gemms_per_period") && q.contains("other_burst_seconds")) {
        const double g = number(q["gemm_burst_seconds"], f + ".gemm_burst_seconds", origin, 0);
        const double n = double(integer(q["gemms_per_period"], f + ".gemms_per_period", origin, 1, 1 << 20));
        pt.other_phase_seconds = number(q["other_burst_seconds"], f + ".other_burst_seconds", origin, 0);
        pt.gemm_phase_seconds = g * n;
        if (pt.gemm_phase_seconds > 1e3 || pt.other_phase_seconds > 1e3)
          fail(origin, f, "a mixture's phases above 1000 s: not a kernel measurement");
      }
      if (pt.burst_seconds > 1e3 || pt.sustained_seconds > 1e3)
        fail(origin, f, "seconds per unit above 1000: not a kernel measurement");
      ps.points.push_back(std::move(pt));
    }
    if (pj.contains("engine_steps")) {
      const Json& es = pj["engine_steps"];
      if (!es.is_array()) fail(origin, pp + ".engine_steps", "expected an array of held decode steps");
      if (es.size() > 1024) fail(origin, pp + ".engine_steps", "at most 1024 held steps");
      for (std::size_t i = 0; i < es.size(); ++i) {
        const Json& q = es[i];
        const std::string f = pp + ".engine_steps[" + std::to_string(i) + "]";
        if (!q.is_object()) fail(origin, f, "expected an object");
        Profile::EngineStepPoint e;
        e.model = need(q, "model", f, origin);
        if (!e.model.is_string() && !e.model.is_object())
          fail(origin, f + ".model", "expected a model preset name or a model object");
        if (q.contains("name")) {
          if (!q["name"].is_string()) fail(origin, f + ".name", "expected a string");
          e.name = q["name"].get<std::string>();
        }
        e.batch = integer(need(q, "batch", f, origin), f + ".batch", origin, 1, 65536);
        e.context = integer(need(q, "context", f, origin), f + ".context", origin, 1, std::int64_t(1) << 24);
        const Json& role = need(q, "role", f, origin);
        if (!role.is_string() || (role.get<std::string>() != "fit" && role.get<std::string>() != "holdout"))
          fail(origin, f + ".role", "expected \"fit\" or \"holdout\", got " + shown(role));
        e.role = role.get<std::string>();
        const Json& h = need(q, "held", f, origin);
        const std::string fh = f + ".held";
        e.gpu_seconds = number(need(h, "gpu_seconds", fh, origin), fh + ".gpu_seconds", origin, 1e-7);
        e.wall_seconds = number(need(h, "wall_seconds", fh, origin), fh + ".wall_seconds", origin, 1e-7);
        e.clock_mhz = number(need(h, "clock_mhz", fh, origin), fh + ".clock_mhz", origin, 1);
        e.power_w = number(need(h, "power_w", fh, origin), fh + ".power_w", origin, 1);
        if (e.gpu_seconds > 60 || e.wall_seconds > 60) fail(origin, fh, "a decode step above 60 s: not a measurement");
        if (e.clock_mhz > ps.max_clock_mhz * 1.01)
          fail(origin, fh + ".clock_mhz", "above the section's max_clock_mhz " + std::to_string(ps.max_clock_mhz));
        if (e.power_w > ps.limit_w * 1.2)
          fail(origin, fh + ".power_w", "more than 1.2 x the section's limit_w " + std::to_string(ps.limit_w));
        ps.engine_steps.push_back(std::move(e));
      }
    }
    p.power = std::move(ps);
  }
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
