// infraplan-bench: the serving mini-engine on this machine's GPU (engine/). `serve` runs a
// scenario in real time, `step` times engine steps. `infraplan bench` and `infraplan validate`
// run this tool, so that infraplan itself links no CUDA. Exit codes: 0 ok, 2 bad input,
// 3 internal or CUDA error, 4 no CUDA GPU.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/find_tool.hpp"
#include "engine/bench_serve.hpp"
#include "engine/gpu_info.hpp"
#include "engine/kernel_bench.hpp"
#include "engine/attention_bench.hpp"
#include "engine/step_bench.hpp"
#include "common/error.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf(
        "Usage: infraplan-bench serve --scenario F [--json] [--json-out F] [--trace F] [--requests F] [--steps F]\n"
        "       infraplan-bench step --model NAME [--batches 1,8,64] [--context N] [--prefill N]\n"
        "                            [--weights bf16|fp8] [--kernels]\n"
        "       infraplan-bench kernels --model NAME [--json-out F]\n"
        "       infraplan-bench attention --model NAME [--json-out F]\n\n"
        "The serving mini-engine's CUDA backend on this machine's GPU (docs/serving.md).\n");
    return args.empty() ? 2 : 0;
  }
  const std::string cmd = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (cmd == "serve") return infraplan::engine::bench_serve_main(rest);
    if (cmd == "step") return infraplan::engine::step_bench_main(rest);
    if (cmd == "kernels") return infraplan::engine::kernel_bench_main(rest);
    if (cmd == "attention") return infraplan::engine::attention_bench_main(rest);
    std::fprintf(stderr, "infraplan-bench: %s\n",
                 infraplan::unknown_name_message("command", cmd, {"serve", "step", "kernels", "attention"}).c_str());
    return 2;
  } catch (const infraplan::engine::NoGpu& e) {
    std::fprintf(stderr, "infraplan-bench %s: %s\n", cmd.c_str(), e.what());
    return infraplan::cli::kExitNoGpu;
  } catch (const infraplan::Error& e) {
    std::fprintf(stderr, "infraplan-bench %s: error: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infraplan-bench %s: internal error: %s\n", cmd.c_str(), e.what());
    return 3;
  }
}
