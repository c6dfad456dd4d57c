#pragma once
// Timing GEMMs in the three layouts of a training step (forward TN, input gradient NN, weight
// gradient NT; calib_kernels/gemm_layout.hpp):
//  - layout_ratio_table: a sub-grid of a format's GEMM grid with each cell timed in the three
//    layouts back to back (the same GPU state for the three), cells in shuffled order; the cost
//    model scales its TN tables by the interpolated NN / TN and NT / TN ratios;
//  - time_layout_shapes: listed shapes (a workload's, in their layouts) through cuBLASLt and / or
//    cublasGemmEx, in passes of shuffled order;
//  - run_layouts: `infraplan-calibrate layouts`, both of the above into one run file, which
//    bench/calib/merge_layout_runs.py merges over several machine starts into a profile.
#include <cuda_runtime.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calib_kernels/calibrator.hpp"
#include "calib_kernels/gemm_timer.hpp"

namespace infraplan::calib {

/// Axes of the layout sub-grid for a full (or quick) calibration: grid values of the TN table
/// (m at powers of two 64 … 16384; n, k at powers of two 256 … 16384).
struct LayoutGridAxes {
  std::vector<std::int64_t> m, n, k;
};
LayoutGridAxes layout_grid_axes(bool quick);

/// {"m", "n", "k", "tn": {"seconds"}, "nn": {"seconds", "ratio"}, "nt": {"seconds", "ratio"},
/// "clock_mhz_before", "clock_mhz_after", "timing"}: seconds[m][n][k] (null: no algorithm), ratio =
/// layout / TN of the same cell; one pass, cells shuffled by `seed`, the three layouts of a cell
/// back to back with the timer's method. With `legacy_tn` each cell's TN is also timed with
/// TimingMethod::Legacy right after ("tn_legacy": {"seconds"}), for comparison with tables timed so.
nlohmann::ordered_json layout_ratio_table(GemmTimer& timer, const LtHandle& lt, GemmDtype d,
                                          const LayoutGridAxes& axes, std::uint64_t seed, bool legacy_tn = false);

/// Each shape through each of `apis` with each of `methods`, `passes` passes each in a shuffled
/// order (`listed`: in the listed order, as a benchmark that walks the shapes one after another):
/// entries {dtype, layout, api, timing, m, n, k, seconds (median of the passes), repeats,
/// clock_mhz [[before, after] per pass], algo}; a shape with no algorithm in a pass is left out
/// (counted on stderr).
nlohmann::ordered_json time_layout_shapes(GemmTimer& timer, const LtHandle& lt, const CublasHandle& cb,
                                          const std::vector<GemmShapeRequest>& shapes,
                                          const std::vector<GemmApi>& apis, int passes, std::uint64_t seed,
                                          const std::vector<TimingMethod>& methods = {TimingMethod::Graph},
                                          bool listed = false);

struct LayoutRunOptions {
  std::vector<GemmShapeRequest> shapes;  ///< listed shapes (may be empty)
  std::vector<GemmApi> apis{GemmApi::Lt, GemmApi::Cublas};
  int passes = 1;          ///< passes over the listed shapes
  bool listed_order = false;  ///< time the listed shapes in their order (default: shuffled per pass)
  bool grid = true;        ///< also the bf16 layout sub-grid (64 MiB cuBLASLt workspace, as the grid)
  bool quick = false;      ///< a small sub-grid
  /// Also time the sub-grid's TN cells and the listed shapes with TimingMethod::Legacy, interleaved
  /// with the graph timings: the method's effect on this machine, apart from the machine's.
  bool legacy_too = false;
  /// Operand values of the listed shapes and the sub-grid: uniform in ±1 (the calibration's) or
  /// normal (σ 1, as torch.randn), for how a GEMM's power and clock depend on its data.
  FillDistribution fill = FillDistribution::Uniform;
  /// > 0: hold each listed shape for this many ms of replays and keep the second half
  /// (GemmTimer::set_hold_ms), its clock read in the steady state; 0: ~1.5 ms of samples per shape.
  double hold_ms = 0;
  std::string command;     ///< echoed into the file
  std::uint64_t seed = 20261201;
};

/// Correctness of the three layouts through both entry points: a bf16 GEMM of odd sizes (m, n, k
/// = 37, 29, 23 and 64, 48, 80) on random operands against a CPU reference in double precision
/// that reads the operands as gemm_layout.hpp defines them. Entries {name, ok, max_rel_err,
/// tolerance}; `all_ok` false when any fails.
nlohmann::ordered_json check_gemm_layouts(bool* all_ok);

/// `infraplan-calibrate layouts`: device, date, the bf16 layout sub-grid and the listed shapes
/// (32 MiB workspaces, PyTorch's default on Hopper) — schema "infraplan-layout-run/1".
nlohmann::ordered_json run_layouts(const LayoutRunOptions& opt);

}  // namespace infraplan::calib
