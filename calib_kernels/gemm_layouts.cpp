#include "calib_kernels/gemm_layouts.hpp"

#include "calib_kernels/nvml_reader.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <numeric>
#include <string>

#include "calib_kernels/kernels.hpp"
#include "calib_kernels/rng.hpp"

namespace infraplan::calib {
namespace {

using json = nlohmann::ordered_json;

constexpr GemmLayout kLayouts[] = {GemmLayout::TN, GemmLayout::NN, GemmLayout::NT};

json seconds_or_null(double t) { return t > 0 ? json(t) : json(nullptr); }
json mhz_or_null(double f) { return f > 0 ? json(std::lround(f)) : json(nullptr); }

/// Bytes of the largest operand of a shape in any layout (rows padded to 16 elements).
std::size_t largest_operand(GemmDtype d, std::int64_t m, std::int64_t n, std::int64_t k) {
  auto up = [](std::int64_t x) { return std::size_t((x + 15) / 16 * 16); };
  const double ib = gemm_in_bytes(d), ob = gemm_out_bytes(d);
  return std::max({std::size_t(double(up(m) * up(k)) * ib), std::size_t(double(up(n) * up(k)) * ib),
                   std::size_t(double(up(m) * up(n)) * ob)});
}

/// bf16 bits → float.
float bf16_bits_to_float(std::uint16_t b) {
  std::uint32_t u = std::uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

json check_gemm_layouts(bool* all_ok) {
  json out = json::array();
  bool ok_all = true;
  Stream stream;
  CublasHandle cb(stream.get());
  LtHandle lt(std::size_t(32) << 20);
  struct Sz {
    std::int64_t m, n, k;
  };
  for (Sz sz : {Sz{37, 29, 23}, Sz{64, 48, 80}})
    for (GemmLayout l : kLayouts)
      for (GemmApi api : {GemmApi::Lt, GemmApi::Cublas}) {
        const std::int64_t m = sz.m, n = sz.n, k = sz.k;
        const LayoutLd ld = layout_ld(l, m, n, k, 1);
        const std::size_t ae = std::size_t(ld.a_elems(m, k, l)), be = std::size_t(ld.b_elems(n, k, l)),
                          ye = std::size_t(ld.y_elems(m));
        DeviceBuffer<std::uint16_t> A(ae), B(be), Y(ye);
        fill_random(A.get(), ae, Elem::BF16, 101 + std::uint64_t(m), 1.f, stream.get());
        fill_random(B.get(), be, Elem::BF16, 202 + std::uint64_t(n), 1.f, stream.get());
        CALIB_CUDA(cudaMemsetAsync(Y.get(), 0xff, ye * 2, stream.get()));  // NaN poison
        std::string name = std::string("gemm_layout_") + gemm_layout_name(l) + "_" + gemm_api_name(api) + "_" +
                           std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
        json entry = {{"name", name}, {"ok", false}, {"max_rel_err", nullptr}, {"tolerance", 1e-2}};
        try {
          if (api == GemmApi::Lt) {
            LtPlan p(lt, GemmDtype::BF16, m, n, k, l);
            if (!p.ok()) throw CudaError("no cuBLASLt algorithm");
            p.run(A.get(), B.get(), Y.get(), stream.get());
          } else {
            GemmExPlan p(cb, GemmDtype::BF16, m, n, k, l);
            p.run(A.get(), B.get(), Y.get());
          }
          CALIB_CUDA(cudaStreamSynchronize(stream.get()));
          std::vector<std::uint16_t> a(ae), b(be), y(ye);
          CALIB_CUDA(cudaMemcpy(a.data(), A.get(), ae * 2, cudaMemcpyDeviceToHost));
          CALIB_CUDA(cudaMemcpy(b.data(), B.get(), be * 2, cudaMemcpyDeviceToHost));
          CALIB_CUDA(cudaMemcpy(y.data(), Y.get(), ye * 2, cudaMemcpyDeviceToHost));
          // Row-major definitions of gemm_layout.hpp.
          auto xa = [&](std::int64_t i, std::int64_t p) {  // A as [m][k]
            return double(bf16_bits_to_float(l == GemmLayout::NT ? a[std::size_t(p * ld.a + i)]
                                                                 : a[std::size_t(i * ld.a + p)]));
          };
          auto wb = [&](std::int64_t p, std::int64_t j) {  // B as [k][n]
            return double(bf16_bits_to_float(l == GemmLayout::TN ? b[std::size_t(j * ld.b + p)]
                                                                 : b[std::size_t(p * ld.b + j)]));
          };
          double num = 0, den = 0;
          bool finite = true;
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
              double ref = 0;
              for (std::int64_t p = 0; p < k; ++p) ref += xa(i, p) * wb(p, j);
              double got = bf16_bits_to_float(y[std::size_t(i * ld.y + j)]);
              finite = finite && std::isfinite(got);
              num += (got - ref) * (got - ref);
              den += ref * ref;
            }
          double err = finite ? std::sqrt(num / std::max(den, 1e-30)) : INFINITY;
          entry["max_rel_err"] = std::isfinite(err) ? json(err) : json(nullptr);
          entry["ok"] = finite && err <= 1e-2;
        } catch (const std::exception& e) {
          entry["detail"] = e.what();
        }
        ok_all = ok_all && entry["ok"].get<bool>();
        std::fprintf(stderr, "  check %-40s %s\n", name.c_str(), entry["ok"].get<bool>() ? "PASS" : "FAIL");
        out.push_back(entry);
      }
  if (all_ok) *all_ok = ok_all;
  return out;
}

LayoutGridAxes layout_grid_axes(bool quick) {
  if (quick) return {{256, 4096}, {1024, 8192}, {1024, 8192}};
  LayoutGridAxes a;
  for (std::int64_t m = 64; m <= 16384; m *= 2) a.m.push_back(m);
  for (std::int64_t x = 256; x <= 16384; x *= 2) a.n.push_back(x), a.k.push_back(x);
  return a;
}

json layout_ratio_table(GemmTimer& timer, const LtHandle& lt, GemmDtype d, const LayoutGridAxes& axes,
                        std::uint64_t seed, bool legacy_tn) {
  const std::size_t nm = axes.m.size(), nn = axes.n.size(), nk = axes.k.size(), cells = nm * nn * nk;
  std::vector<double> secs(3 * cells, -1), clk0(cells, 0), clk1(cells, 0), legacy(cells, -1);
  const TimingMethod method = timer.method();
  std::vector<std::size_t> order(cells);
  std::iota(order.begin(), order.end(), std::size_t(0));
  Rng rng{seed};
  rng.shuffle(order);
  for (std::size_t c : order) {
    const std::int64_t m = axes.m[c / (nn * nk)], n = axes.n[c / nk % nn], k = axes.k[c % nk];
    for (int l = 0; l < 3; ++l) {
      GemmTiming g;
      try {
        g = timer.time_lt(lt, d, kLayouts[l], m, n, k);
      } catch (const CudaError& e) {
        std::fprintf(stderr, "    %s %lldx%lldx%lld: %s\n", gemm_layout_name(kLayouts[l]), (long long)m, (long long)n,
                     (long long)k, e.what());
        (void)cudaGetLastError();
      }
      secs[std::size_t(l) * cells + c] = g.seconds;
      if (l == 0) clk0[c] = g.clock_before_mhz;
      if (l == 2) clk1[c] = g.clock_after_mhz;
    }
    if (legacy_tn) {
      timer.set_method(TimingMethod::Legacy);
      try {
        legacy[c] = timer.time_lt(lt, d, GemmLayout::TN, m, n, k).seconds;
      } catch (const CudaError& e) {
        std::fprintf(stderr, "    legacy tn %lldx%lldx%lld: %s\n", (long long)m, (long long)n, (long long)k, e.what());
        (void)cudaGetLastError();
      }
      timer.set_method(method);
    }
  }
  auto grid = [&](auto&& value) {
    json out = json::array();
    for (std::size_t i = 0; i < nm; ++i) {
      json plane = json::array();
      for (std::size_t j = 0; j < nn; ++j) {
        json row = json::array();
        for (std::size_t l = 0; l < nk; ++l) row.push_back(value((i * nn + j) * nk + l));
        plane.push_back(row);
      }
      out.push_back(plane);
    }
    return out;
  };
  json t = {{"m", axes.m}, {"n", axes.n}, {"k", axes.k}};
  for (int l = 0; l < 3; ++l) {
    const std::size_t off = std::size_t(l) * cells;
    json entry = {{"seconds", grid([&](std::size_t c) { return seconds_or_null(secs[off + c]); })}};
    if (l > 0)
      entry["ratio"] = grid([&](std::size_t c) {
        return secs[off + c] > 0 && secs[c] > 0 ? json(secs[off + c] / secs[c]) : json(nullptr);
      });
    t[gemm_layout_name(kLayouts[l])] = entry;
  }
  if (legacy_tn) t["tn_legacy"] = {{"seconds", grid([&](std::size_t c) { return seconds_or_null(legacy[c]); })}};
  t["timing"] = timing_method_name(method);
  t["clock_mhz_before"] = grid([&](std::size_t c) { return mhz_or_null(clk0[c]); });
  t["clock_mhz_after"] = grid([&](std::size_t c) { return mhz_or_null(clk1[c]); });
  t["rule"] =
      "each cell timed in tn, nn, nt back to back (cuBLASLt first heuristic); ratio = layout / tn of the "
      "same cell; clock before the tn and after the nt timing";
  return t;
}

json time_layout_shapes(GemmTimer& timer, const LtHandle& lt, const CublasHandle& cb,
                        const std::vector<GemmShapeRequest>& shapes, const std::vector<GemmApi>& apis,
                        int passes, std::uint64_t seed, const std::vector<TimingMethod>& methods,
                        bool listed) {
  struct Item {
    GemmShapeRequest r;
    GemmApi api;
    TimingMethod method;
    std::vector<double> t;
    json clock = json::array();
    json nvml_clock = json::array(), nvml_synced = json::array();
    std::string algo;
  };
  std::vector<Item> items;
  const TimingMethod before = timer.method();
  for (TimingMethod tm : methods)
    for (GemmApi a : apis)
      for (const auto& r : shapes)
        items.push_back({r, a, tm, {}, json::array(), json::array(), json::array(), {}});
  // Grouped by format (one operand fill per format), shuffled inside a format unless `listed`.
  std::vector<GemmDtype> formats;
  for (const auto& r : shapes)
    if (std::find(formats.begin(), formats.end(), r.dtype) == formats.end()) formats.push_back(r.dtype);
  Rng rng{seed};
  int refused = 0;
  for (GemmDtype d : formats) {
    timer.fill(d, seed + std::uint64_t(d));
    std::vector<std::size_t> mine;
    for (std::size_t i = 0; i < items.size(); ++i)
      if (items[i].r.dtype == d) mine.push_back(i);
    for (int p = 0; p < passes; ++p) {
      std::vector<std::size_t> order = mine;
      if (!listed) rng.shuffle(order);
      for (std::size_t i : order) {
        Item& it = items[i];
        GemmTiming g;
        timer.set_method(it.method);
        try {
          g = it.api == GemmApi::Lt ? timer.time_lt(lt, d, it.r.layout, it.r.m, it.r.n, it.r.k)
                                    : timer.time_cublas(cb, d, it.r.layout, it.r.m, it.r.n, it.r.k);
        } catch (const CudaError& e) {  // a refused call: recorded as no time, the run goes on
          std::fprintf(stderr, "    %s %s %lldx%lldx%lld: %s\n", gemm_api_name(it.api), gemm_layout_name(it.r.layout),
                       (long long)it.r.m, (long long)it.r.n, (long long)it.r.k, e.what());
          (void)cudaGetLastError();
        }
        it.t.push_back(g.seconds);
        it.clock.push_back({std::lround(g.clock_before_mhz), std::lround(g.clock_after_mhz)});
        if (g.nvml_clock_mhz > 0) it.nvml_clock.push_back(std::lround(g.nvml_clock_mhz));
        if (g.nvml_synced_clock_mhz > 0) it.nvml_synced.push_back(std::lround(g.nvml_synced_clock_mhz));
        it.algo = g.algo;
      }
    }
  }
  timer.set_method(before);
  json out = json::array();
  for (const Item& it : items) {
    if (std::any_of(it.t.begin(), it.t.end(), [](double t) { return !(t > 0); })) {
      ++refused;
      continue;
    }
    std::vector<double> sorted = it.t;
    std::sort(sorted.begin(), sorted.end());
    out.push_back({{"dtype", gemm_dtype_name(it.r.dtype)},
                   {"layout", gemm_layout_name(it.r.layout)},
                   {"api", gemm_api_name(it.api)},
                   {"timing", timing_method_name(it.method)},
                   {"m", it.r.m},
                   {"n", it.r.n},
                   {"k", it.r.k},
                   {"seconds", sorted[sorted.size() / 2]},
                   {"repeats", it.t},
                   {"clock_mhz", it.clock},
                   {"algo", it.algo}});
    if (!it.nvml_clock.empty()) out.back()["nvml_clock_mhz"] = it.nvml_clock;
    if (!it.nvml_synced.empty()) out.back()["nvml_synced_clock_mhz"] = it.nvml_synced;
  }
  if (refused)
    std::fprintf(stderr, "    %d shape/api pairs with no algorithm left out\n", refused);
  return out;
}

json run_layouts(const LayoutRunOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  cudaDeviceProp prop{};
  CALIB_CUDA(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::string uuid;
  for (int i = 0; i < 16; ++i) {
    char b[4];
    std::snprintf(b, sizeof b, "%02x", unsigned(static_cast<unsigned char>(prop.uuid.bytes[i])));
    uuid += b;
  }
  json run = {{"schema", "infraplan-layout-run/1"},
              {"date", date},
              {"command", opt.command},
              {"seed", opt.seed},
              {"device",
               {{"name", prop.name},
                {"uuid", uuid},
                {"sms", prop.multiProcessorCount},
                {"l2_bytes", prop.l2CacheSize},
                {"driver_version", std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10)},
                {"cuda_runtime_version", std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10)},
                {"cublaslt_version", int(cublasLtGetVersion())}}}};
  bool checks_ok = false;
  run["checks"] = check_gemm_layouts(&checks_ok);
  if (!checks_ok) std::fprintf(stderr, "[layouts] a layout check FAILED: timings of that layout are suspect\n");
  Stream stream;
  std::size_t arena = std::size_t(16384) * 16384 * 4;
  for (const auto& r : opt.shapes) arena = std::max(arena, largest_operand(r.dtype, r.m, r.n, r.k));
  arena += std::size_t(64) << 20;
  GemmTimer timer(stream.get(), double(prop.l2CacheSize), arena);
  timer.set_fill(opt.fill);
  run["fill"] = fill_distribution_name(opt.fill);
  if (opt.grid) {
    std::fprintf(stderr, "[layouts %5.1fs] bf16 layout sub-grid (tn, nn, nt)\n", since());
    LtHandle lt64(std::size_t(64) << 20);
    timer.fill(GemmDtype::BF16, opt.seed);
    run["grid"] = {{"bf16", layout_ratio_table(timer, lt64, GemmDtype::BF16, layout_grid_axes(opt.quick),
                                               opt.seed ^ 0x1a70, opt.legacy_too)}};
  }
  if (!opt.shapes.empty()) {
    std::fprintf(stderr, "[layouts %5.1fs] %zu listed shapes × %zu APIs × %d passes\n", since(), opt.shapes.size(),
                 opt.apis.size(), opt.passes);
    LtHandle lt32(std::size_t(32) << 20);
    CublasHandle cb(stream.get(), std::size_t(32) << 20);
    NvmlReader nvml(0);
    if (opt.hold_ms > 0) {
      timer.set_hold_ms(opt.hold_ms, &nvml);
      run["hold_ms"] = opt.hold_ms;
      run["hold_rule"] =
          "each shape replayed for hold_ms of GPU time: the first half untimed, seconds the median of the "
          "second; clock_mhz read on the GPU between launches of the shape just before and after the second "
          "half, nvml_clock_mhz NVML's SM clock read while the GPU runs the shape after it, "
          "nvml_synced_clock_mhz the median of NVML's readings after each synchronised sample of it";
    }
    std::vector<TimingMethod> methods{TimingMethod::Graph};
    if (opt.legacy_too) methods.push_back(TimingMethod::Legacy);
    run["shapes"] = time_layout_shapes(timer, lt32, cb, opt.shapes, opt.apis, opt.passes, opt.seed ^ 0x5a9e,
                                       methods, opt.listed_order);
    run["order"] = opt.listed_order ? "listed" : "shuffled";
    timer.set_hold_ms(0, nullptr);
  }
  run["run_seconds"] = since();
  std::fprintf(stderr, "[layouts %5.1fs] done\n", since());
  return run;
}

}  // namespace infraplan::calib
