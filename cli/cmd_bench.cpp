// infraplan bench serve|step|attention ...: runs the serving mini-engine on this machine's GPU through the
// infraplan-bench tool (engine/, built when nvcc is found), so that infraplan itself links no CUDA.
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/find_tool.hpp"

namespace infraplan::cli {

int cmd_bench(const std::vector<std::string>& args) {
  const std::string tool = find_tool("infraplan-bench");
  bool help = args.empty();
  for (const auto& a : args) help |= a == "--help" || a == "-h";
  if (tool.empty()) {
    std::fprintf(
        help ? stdout : stderr,
        "Usage: infraplan bench serve --scenario F [--json] [--json-out F] [--trace out.json] [--requests "
        "out.csv]\n"
        "                             [--seed N] [--weights DIR] [--weights-seed N] [--no-graphs]\n"
        "       infraplan bench step --model NAME [--batches 1,8,64] [--context N] [--prefill N] [--json-out "
        "F]\n"
        "       infraplan bench attention --model NAME [--prefill-kernel auto|mma|wgmma] [--json-out F]\n\n"
        "Runs a scenario's workload in real time on this machine's GPU with the mini-engine's CUDA\n"
        "backend (the simulator's scheduler, block manager and prefix cache driving a LLaMA-architecture\n"
        "model on the project's kernels) and writes the same metrics JSON, per-request CSV and trace as\n"
        "simulate serve (docs/serving.md). Needs the infraplan-bench tool, built when nvcc is found.\n");
    if (help) return 0;
    std::fprintf(
        stderr,
        "infraplan bench: infraplan-bench was not built (no CUDA toolkit found at configure time), so "
        "nothing can run on a GPU here; install the CUDA toolkit and reconfigure with "
        "-DINFRAPLAN_WITH_CUDA=ON, or put a built infraplan-bench on PATH\n");
    return kExitNoGpu;
  }
  exec_tool(tool, args);
}

}  // namespace infraplan::cli
