// The calibrator's GEMM tables: the (m, n, k) grid per format, held-out shapes, misalignment
// classes and the ceilings, as the profile records them.
#include "calib_kernels/calibrator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <tuple>

#include "calib_kernels/calibrator_detail.hpp"
#include "calib_kernels/gemm_layouts.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/rng.hpp"
#include "calib_kernels/timing.hpp"

namespace infraplan::calib {

using namespace calibrator_detail;

void Calibrator::gemm_sweeps() {
  cudaStream_t s = stream_.get();
  double l2 = prop_.l2CacheSize;
  std::vector<GemmDtype> dtypes = {GemmDtype::BF16, GemmDtype::FP16, GemmDtype::TF32, GemmDtype::FP8,
                                   GemmDtype::INT8};
  // m (tokens) at powers of two; n and k at powers of √2 rounded to multiples of 64 (aligned rows).
  auto root2 = [](std::int64_t lo, std::int64_t hi) {
    std::vector<std::int64_t> v;
    for (double x = double(lo); x <= double(hi) * 1.0001; x *= std::sqrt(2.0)) {
      std::int64_t r = std::int64_t(std::llround(x / 64)) * 64;
      if (v.empty() || r > v.back()) v.push_back(r);
    }
    return v;
  };
  // m at half octaves (2^j and 3·2^(j-1)): tokens between powers of two are common (e.g. 3 × 1024) and
  // the step from 2^j to 2^(j+1) is where interpolation in m erred most.
  std::vector<std::int64_t> ms, ns = root2(256, 32768), ks = root2(256, 32768);
  for (std::int64_t x : pow2(1, 32768)) {
    if (x >= 4) ms.push_back(x / 4 * 3);
    ms.push_back(x);
  }
  if (opt_.quick) {
    dtypes = {GemmDtype::BF16, GemmDtype::FP8};
    ms = {1, 16, 256, 4096, 16384};
    ns = {1024, 4096, 16384};
    ks = {1024, 4096, 16384};
  }
  if (opt_.shapes_only) {
    dtypes.clear();
    for (const auto& r : opt_.shapes)
      if (std::find(dtypes.begin(), dtypes.end(), r.dtype) == dtypes.end()) dtypes.push_back(r.dtype);
  }
  // Arenas hold the largest operands (32768² × 4 bytes, or the largest exact shape); small shapes
  // rotate through them.
  std::size_t largest =
      opt_.shapes_only ? 0 : std::size_t(ms.back()) * std::size_t(gemm_ld(GemmDtype::TF32, ks.back())) * 4;
  for (const auto& r : opt_.shapes) {  // the shape itself and its row over the token axis (m; k for NT)
    const bool nt = r.layout == GemmLayout::NT;
    const std::int64_t m = nt ? r.m : std::max(r.m, ms.back()), k = nt ? std::max(r.k, ms.back()) : r.k;
    const LayoutLd ld = layout_ld(r.layout, m, r.n, k, 16);
    largest = std::max({largest, std::size_t(ld.a_elems(m, k, r.layout)) * 4,
                        std::size_t(ld.b_elems(r.n, k, r.layout)) * 4, std::size_t(ld.y_elems(m)) * 4});
  }
  std::size_t arena = largest + (64u << 20);
  DeviceBuffer<unsigned char> X(arena), W(arena), Y(arena);
  DeviceBuffer<unsigned long long> clk(6);
  json tables = json::object(), ceil_t = json::object(), holdout = json::array(), exact = json::array(),
       rows = json::array();
  Rng rng{opt_.seed ^ 0x6e33};
  for (GemmDtype d : dtypes) {
    std::string dn = gemm_dtype_name(d);
    double ib = gemm_in_bytes(d), ob = gemm_out_bytes(d);
    fill_gemm_operand(X.get(), std::size_t(arena / ib), d, opt_.seed + 11, s);
    fill_gemm_operand(W.get(), std::size_t(arena / ib), d, opt_.seed + 12, s);
    double best = 0;
    // The multiprocessor clock just before and just after each measurement (MHz): under a power
    // cap the clock of a heavy GEMM depends on what ran before it, and the table keeps both readings
    // so that the cost model can refer every cell to one clock.
    double clk_before = 0, clk_after = 0;
    std::string algo;         // the last measurement's cuBLASLt algorithm (LtPlan::algo_signature)
    int eager_fallbacks = 0;  // launches that could not be captured into a graph (timed eagerly)
    auto measure = [&](std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout lay = GemmLayout::TN) -> double {
      LtPlan plan(*lt_, d, m, n, k, lay);
      clk_before = clk_after = 0;
      algo = plan.algo_signature();
      if (!plan.ok()) return -1;
      const LayoutLd ld = layout_ld(lay, m, n, k, gemm_ld(d, 1));
      std::size_t xb = std::size_t(double(ld.a_elems(m, k, lay)) * ib),
                  wb = std::size_t(double(ld.b_elems(n, k, lay)) * ib), yb = std::size_t(m * plan.ldy() * ob);
      auto al = [](std::size_t b) { return (b + 255) / 256 * 256; };
      int copies = rotation_copies(double(xb + wb + yb), l2, 64);
      copies = int(std::max<std::size_t>(
          1, std::min<std::size_t>(copies, arena / std::max({al(xb), al(wb), al(yb)}))));
      TimingOptions topt;
      topt.warmup = 1;
      topt.min_iters = 3;
      topt.max_iters = 30;
      topt.budget_ms = 1.5;
      // Every sample a graph replay after a 30 µs spin (no host enqueue time inside a sample; the
      // grid before 2026-12-01 timed kernels of >= 0.1 ms eagerly: TimingMethod::Legacy).
      topt.graph_long_kernels = true;
      topt.lead_in = [&] { clock_meter(clk.get() + 4, 30000, s); };
      clock_meter(clk.get(), kClockWindowNs, s);
      bool captured = true;
      double t = time_graph_median_seconds(
          [&](int i) {
            std::size_t c = std::size_t(i % copies);
            plan.run(X.get() + c * al(xb), W.get() + c * al(wb), Y.get() + c * al(yb), s);
          },
          s, topt, copies, &captured);
      if (!captured) ++eager_fallbacks;
      clock_meter(clk.get() + 2, kClockWindowNs, s);
      unsigned long long h[4] = {};
      CALIB_CUDA(cudaMemcpyAsync(h, clk.get(), sizeof h, cudaMemcpyDeviceToHost, s));
      CALIB_CUDA(cudaStreamSynchronize(s));
      clk_before = h[1] ? 1e3 * double(h[0]) / double(h[1]) : 0;
      clk_after = h[3] ? 1e3 * double(h[2]) / double(h[3]) : 0;
      best = std::max(best, 2.0 * m * n * k / t);
      return t;
    };
    // Shapes timed in separate passes (each pass in a shuffled order), the median kept, so that an
    // error reported against them is not one sample's noise; the passes, their clock readings and
    // the algorithm are kept. Held-out shapes and a workload's exact shapes.
    struct Timed {
      std::int64_t m, n, k;
      std::vector<double> t;
      json clock_mhz = json::array();
      std::string algo;
      GemmLayout layout = GemmLayout::TN;
    };
    auto time_in_passes = [&](std::vector<Timed>& list, int passes, Rng& order_rng) {
      for (int r = 0; r < passes; ++r) {
        std::vector<std::size_t> order(list.size());
        std::iota(order.begin(), order.end(), std::size_t(0));
        order_rng.shuffle(order);
        for (std::size_t i : order) {
          list[i].t.push_back(measure(list[i].m, list[i].n, list[i].k, list[i].layout));
          list[i].clock_mhz.push_back({std::lround(clk_before), std::lround(clk_after)});
          list[i].algo = algo;
        }
      }
    };
    // The profile entry of a timed shape; null when a pass found no cuBLASLt algorithm.
    auto timed_json = [&](const Timed& o) -> json {
      if (std::any_of(o.t.begin(), o.t.end(), [](double t) { return t <= 0; })) return nullptr;
      std::vector<double> sorted = o.t;
      std::sort(sorted.begin(), sorted.end());
      json timed = {{"dtype", dn},
                    {"m", o.m},
                    {"n", o.n},
                    {"k", o.k},
                    {"seconds", sorted[sorted.size() / 2]},
                    {"repeats", o.t},
                    {"clock_mhz", o.clock_mhz},
                    {"algo", o.algo}};
      if (o.layout != GemmLayout::TN) timed["layout"] = gemm_layout_name(o.layout);
      return timed;
    };
    // Exact shapes of a workload, three passes.
    auto time_shapes = [&]() {
      std::vector<Timed> todo;
      for (const auto& r : opt_.shapes)
        if (r.dtype == d) todo.push_back({r.m, r.n, r.k, {}, json::array(), {}, r.layout});
      Rng srng{opt_.seed ^ 0x5a9e ^ std::uint64_t(d)};
      time_in_passes(todo, 3, srng);
      int refused = 0;
      for (const auto& o : todo) {
        json entry = timed_json(o);
        if (entry.is_null())
          ++refused;
        else
          exact.push_back(entry);
      }
      std::fprintf(stderr, "    %s: %zu exact shapes timed%s\n", dn.c_str(),
                   todo.size() - std::size_t(refused),
                   refused ? cat(" (", refused, " with no cuBLASLt algorithm, left out)").c_str() : "");
      // Each distinct (layout, n, k) of those shapes over the grid's m axis (for NT, the weight
      // gradient, each (m, n) over the same values of k: its token axis): a workload's layers run
      // their weights at every token count, and cuBLASLt's kernel choice at its exact sizes is what
      // the grid's neighbours cannot show.
      struct RowKey {
        GemmLayout layout;
        std::int64_t a, b;  // n, k (TN / NN) or m, n (NT)
        bool operator==(const RowKey& o) const { return layout == o.layout && a == o.a && b == o.b; }
      };
      std::vector<RowKey> nks;
      for (const auto& o : todo) {
        RowKey key = o.layout == GemmLayout::NT ? RowKey{o.layout, o.m, o.n} : RowKey{o.layout, o.n, o.k};
        if (std::find(nks.begin(), nks.end(), key) == nks.end()) nks.push_back(key);
      }
      std::vector<Timed> pts;
      for (const RowKey& r : nks)
        for (auto x : ms)
          pts.push_back(r.layout == GemmLayout::NT ? Timed{r.a, r.b, x, {}, json::array(), {}, r.layout}
                                                   : Timed{x, r.a, r.b, {}, json::array(), {}, r.layout});
      time_in_passes(pts, 3, srng);
      for (const RowKey& r : nks) {
        const bool nt = r.layout == GemmLayout::NT;
        json points = json::array();
        for (const auto& o : pts) {
          const RowKey key = nt ? RowKey{o.layout, o.m, o.n} : RowKey{o.layout, o.n, o.k};
          if (!(key == r)) continue;
          json entry = timed_json(o);
          if (entry.is_null()) continue;
          for (const char* f : {"dtype", "layout", nt ? "m" : "n", nt ? "n" : "k"}) entry.erase(f);
          points.push_back(entry);
        }
        if (points.empty()) continue;
        json row = {{"dtype", dn}};
        if (nt)
          row["layout"] = "nt", row["m"] = r.a, row["n"] = r.b;
        else {
          if (r.layout != GemmLayout::TN) row["layout"] = gemm_layout_name(r.layout);
          row["n"] = r.a, row["k"] = r.b;
        }
        row["points"] = points;
        rows.push_back(row);
      }
      std::fprintf(stderr, "    %s: %zu rows over %zu token counts timed\n", dn.c_str(), nks.size(),
                   ms.size());
    };
    if (opt_.shapes_only) {
      time_shapes();
      continue;
    }
    // Cells in a shuffled order: measured m-plane by m-plane, the large-m planes ran minutes of
    // back-to-back heavy GEMMs and timed ~10-15% slower (clocks under sustained power; the
    // gemm-probe saw −11% right after 3 s of 8192³ GEMMs) than the same shapes among mixed work.
    // Shuffled, every cell and every held-out shape sees the same average state.
    std::vector<double> cell(ms.size() * ns.size() * ks.size(), -1);
    std::vector<double> cell_clk0(cell.size(), 0), cell_clk1(cell.size(), 0);
    std::vector<std::string> cell_algo(cell.size());
    {
      std::vector<std::size_t> order(cell.size());
      std::iota(order.begin(), order.end(), std::size_t(0));
      Rng srng{opt_.seed ^ 0x5eed ^ std::uint64_t(d)};
      srng.shuffle(order);
      for (std::size_t c : order) {
        const std::size_t mi = c / (ns.size() * ks.size()), ni = c / ks.size() % ns.size(),
                          ki = c % ks.size();
        cell[c] = measure(ms[mi], ns[ni], ks[ki]);
        cell_clk0[c] = clk_before;
        cell_clk1[c] = clk_after;
        cell_algo[c] = algo;
      }
    }
    // A [m][n][k] JSON array of cell(c) for every grid cell c.
    auto grid = [&](auto&& cell_json) {
      json out = json::array();
      for (std::size_t mi = 0; mi < ms.size(); ++mi) {
        json plane = json::array();
        for (std::size_t ni = 0; ni < ns.size(); ++ni) {
          json row = json::array();
          for (std::size_t ki = 0; ki < ks.size(); ++ki)
            row.push_back(cell_json((mi * ns.size() + ni) * ks.size() + ki));
          plane.push_back(row);
        }
        out.push_back(plane);
      }
      return out;
    };
    auto seconds_of = [](double t) { return t > 0 ? json(t) : json(nullptr); };
    auto mhz_of = [](double f) { return f > 0 ? json(std::lround(f)) : json(nullptr); };
    // The algorithm cuBLASLt chose for each cell, as an index into the table's list of distinct ones.
    std::vector<std::string> algos;
    std::vector<int> cell_algo_index(cell.size(), -1);
    for (std::size_t c = 0; c < cell.size(); ++c) {
      if (cell_algo[c].empty()) continue;
      auto it = std::find(algos.begin(), algos.end(), cell_algo[c]);
      if (it == algos.end()) it = algos.insert(algos.end(), cell_algo[c]);
      cell_algo_index[c] = int(it - algos.begin());
    }
    tables[dn] = {{"m", ms},
                  {"n", ns},
                  {"k", ks},
                  {"seconds", grid([&](std::size_t c) { return seconds_of(cell[c]); })},
                  {"clock_mhz_before", grid([&](std::size_t c) { return mhz_of(cell_clk0[c]); })},
                  {"clock_mhz_after", grid([&](std::size_t c) { return mhz_of(cell_clk1[c]); })},
                  {"algos", algos},
                  {"algo", grid([&](std::size_t c) {
                     return cell_algo_index[c] >= 0 ? json(cell_algo_index[c]) : json(nullptr);
                   })},
                  {"layout", "Y[m,n] = X[m,k] W[n,k]^T (cuBLASLt TN)"}};
    // Alignment classes: k and n that are multiples of only e elements (e < 16 bytes / element)
    // run other, slower kernels. Measure t(m, x+e, x+e) / t(m, x, x) next to grid points.
    {
      int emax = int(16 / ib);
      std::vector<std::int64_t> am =
          opt_.quick ? std::vector<std::int64_t>{1, 1024} : std::vector<std::int64_t>{1, 32, 1024, 8192};
      std::vector<std::int64_t> ank =
          opt_.quick ? std::vector<std::int64_t>{4096} : std::vector<std::int64_t>{1024, 4096, 16384};
      // Three classes per alignment: n and k both misaligned, only n (the output's rows), only k
      // (both inputs' rows).
      json elems = json::array(), ratios = json::array(), ratios_n = json::array(), ratios_k = json::array();
      auto ratio = [](double base, double t) { return base > 0 && t > 0 ? json(t / base) : json(nullptr); };
      for (int el = 1; el < emax; el *= 2) {
        json plane = json::array(), plane_n = json::array(), plane_k = json::array();
        for (auto m : am) {
          json row = json::array(), row_n = json::array(), row_k = json::array();
          for (auto x : ank) {
            double base = measure(m, x, x);
            row.push_back(ratio(base, measure(m, x + el, x + el)));
            row_n.push_back(ratio(base, measure(m, x + el, x)));
            row_k.push_back(ratio(base, measure(m, x, x + el)));
          }
          plane.push_back(row);
          plane_n.push_back(row_n);
          plane_k.push_back(row_k);
        }
        elems.push_back(el);
        ratios.push_back(plane);
        ratios_n.push_back(plane_n);
        ratios_k.push_back(plane_k);
      }
      if (!elems.empty())
        tables[dn]["misaligned"] = {{"m", am},
                                    {"nk", ank},
                                    {"elements", elems},
                                    {"ratio", ratios},
                                    {"ratio_n", ratios_n},
                                    {"ratio_k", ratios_k},
                                    {"rule",
                                     "ratio: n and k both multiples of `elements` only; ratio_n: only n "
                                     "(k = nk); ratio_k: only k (n = nk); null: no cuBLASLt algorithm"}};
    }
    // Fit points: off-grid, aligned shapes (a separate random stream from the held-out ones)
    // from which the cost model fits its tile quanta, off-grid factor and clock exponent; like the
    // held-out shapes, every other one has n and k rounded to multiples of 128 (model dimensions).
    {
      Rng frng{opt_.seed ^ 0xf17 ^ std::uint64_t(d)};
      json fit = json::array();
      int nf = opt_.quick ? 8 : 120;
      for (int i = 0; i < nf; ++i) {
        std::int64_t al = i % 2 ? std::max<std::int64_t>(16 / std::int64_t(ib), 8) : 128;
        std::int64_t m = frng.log_int(1, double(ms.back()) * 0.9);
        std::int64_t n = (frng.log_int(double(ns.front()), double(ns.back()) * 0.9) + al - 1) / al * al;
        std::int64_t k = (frng.log_int(double(ks.front()), double(ks.back()) * 0.9) + al - 1) / al * al;
        double t = measure(m, n, k);
        if (t > 0)
          fit.push_back({{"m", m},
                         {"n", n},
                         {"k", k},
                         {"seconds", t},
                         {"clock_mhz", {std::lround(clk_before), std::lround(clk_after)}},
                         {"algo", algo}});
      }
      tables[dn]["fit_points"] = fit;
    }
    // Held-out shapes: half of them transformer-like (n, k multiples of 128), the rest arbitrary;
    // timed in `repeats` passes after the sweep.
    std::vector<Timed> held;
    int nh = opt_.quick ? 8 : 96, repeats = opt_.quick ? 2 : 3;
    for (int i = 0; i < nh; ++i) {
      std::int64_t m = rng.log_int(1, double(ms.back()) * 0.9);
      std::int64_t n = rng.log_int(double(ns.front()) * 1.1, double(ns.back()) * 0.9);
      std::int64_t k = rng.log_int(double(ks.front()) * 1.1, double(ks.back()) * 0.9);
      if (d == GemmDtype::FP8) {  // fp8 needs n and k multiples of 16
        n = (n + 15) / 16 * 16;
        k = (k + 15) / 16 * 16;
      }
      if (i % 2 == 0) {  // transformer-like multiples of 128
        n = (n + 127) / 128 * 128;
        k = (k + 127) / 128 * 128;
      }
      held.push_back({m, n, k, {}, json::array(), {}});
    }
    time_in_passes(held, repeats, rng);
    for (const auto& h : held) {
      json entry = timed_json(h);
      if (!entry.is_null()) holdout.push_back(entry);
    }
    time_shapes();
    double f8 = 2.0 * 8192 * 8192 * 8192;
    double t8 = measure(8192, 8192, 8192);
    add({cat("cublaslt_", dn), "gemm", "8192x8192x8192", t8, f8 / t8 / 1e12, "TFLOP/s", best / 1e12,
         "best in sweep"});
    ceil_t[dn] = best / 1e12;
    if (eager_fallbacks > 0)
      std::fprintf(stderr, "    %s: %d measurements timed eagerly (graph capture failed)\n", dn.c_str(),
                   eager_fallbacks);
    std::fprintf(stderr, "    %s: best %.0f TFLOP/s (%.1fs into stage)\n", dn.c_str(), best / 1e12,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - stage_t0_).count());
  }
  if (!opt_.shapes.empty()) {
    profile_["tables"]["gemm_shapes"] = exact;
    profile_["tables"]["gemm_rows"] = rows;
  }
  if (opt_.shapes_only) return;
  // The backward layouts against the forward one, on a sub-grid of the bf16 table (about 7 s; the
  // model uses bf16's ratios for the other 16-bit and tf32 tables, fp8 and int8 run TN only).
  if (tables.contains("bf16")) {
    GemmTimer timer(s, l2, std::size_t(16384) * 16384 * 2 + (64u << 20));
    timer.fill(GemmDtype::BF16, opt_.seed + 21);
    tables["bf16"]["layouts"] = layout_ratio_table(timer, *lt_, GemmDtype::BF16, layout_grid_axes(opt_.quick),
                                                   opt_.seed ^ 0x1a70);
    tables["bf16"]["layouts"]["runs"] = 1;
  }
  profile_["tables"]["gemm"] = tables;
  profile_["ceilings"]["gemm_TFLOPs"] = ceil_t;
  profile_["holdout"]["gemm"] = holdout;
}

}  // namespace infraplan::calib
