// infraplan calibrate [comm] --out FILE.json [--quick] ...: runs the CUDA calibration tool
// (infraplan-calibrate, built when nvcc is found) beside this binary or on PATH; with --from-trace
// it reads a profiler trace in-process instead (cmd_calibrate_trace.cpp).
// `calibrate cluster` and `calibrate merge` run here (cmd_calibrate_cluster.cpp, cmd_calibrate_merge.cpp).
#include <unistd.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/find_tool.hpp"
#include "common/error.hpp"

namespace infraplan::cli {

int cmd_calibrate(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--from-trace" || a.rfind("--from-trace=", 0) == 0) {
      for (const auto& h : args)
        if (h == "--help" || h == "-h") return cmd_calibrate_from_trace({"--help"});
      return cmd_calibrate_from_trace(args);
    }
  if (!args.empty() && args.front() == "cluster")
    return cmd_calibrate_cluster(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args.front() == "merge")
    return cmd_calibrate_merge(std::vector<std::string>(args.begin() + 1, args.end()));
  std::string tool = find_tool("infraplan-calibrate");
  bool help = args.empty();
  for (const auto& a : args) help |= a == "--help" || a == "-h";
  if (tool.empty()) {
    if (help) {
      std::printf(
          "Usage: infraplan calibrate --out FILE.json [--quick] [--no-power] [--gpu NAME] [--comm]\n"
          "                           [--shapes SHAPES.json]\n"
          "       infraplan calibrate --out FILE.json --shapes SHAPES.json --add-to PROFILE.json\n"
          "       infraplan calibrate comm --out FILE.json [--quick]\n"
          "       infraplan calibrate --from-trace TRACE.json[.gz] --out PROFILE.json [--gpu NAME]\n"
          "       (no GPU needed; options: infraplan calibrate --from-trace --help)\n"
          "       infraplan calibrate cluster --launcher slurm|mpirun --out CLUSTER.json ...  (--help)\n"
          "       infraplan calibrate merge --out CLUSTER.json FILE...                        (--help)\n\n"
          "Runs CUDA kernels, cuBLAS/cuBLASLt sweeps and NCCL collectives on this machine's GPUs and\n"
          "writes a hardware profile (docs/calibration.md). Needs the infraplan-calibrate tool,\n"
          "built when nvcc is found at configure time. SHAPES.json: the exact GEMM shapes of a workload\n"
          "(infraplan simulate train|serve --gemm-shapes-out), timed with each distinct (n, k) over the\n"
          "m axis and stored in the profile (tables.gemm_shapes, tables.gemm_rows).\n");
      return 0;
    }
    throw Error(
        "infraplan-calibrate was not built (no CUDA toolkit found at configure time); install the CUDA "
        "toolkit, reconfigure with -DINFRAPLAN_WITH_CUDA=ON, or copy a built infraplan-calibrate onto PATH");
  }
  exec_tool(tool, args);
}

}  // namespace infraplan::cli
