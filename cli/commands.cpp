#include "cli/commands.hpp"

#include <cstdio>

#include "common/output_files.hpp"
#include "common/error.hpp"

namespace infraplan::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> c = {
      {"models", "list model presets; 'models show NAME|FILE' for parameters, FLOPs, KV bytes", cmd_models},
      {"hardware", "list GPUs and clusters; 'hardware show GPU|CLUSTER' for details and topology",
       cmd_hardware},
      {"memory", "'memory train|serve --scenario F': per-GPU memory ledger, fits or not", cmd_memory},
      {"comm", "one collective on a cluster: predicted time, algbw/busbw, algorithm, bottleneck link",
       cmd_comm},
      {"plan", "'plan train|serve': search layouts, recommend the best, explain why", cmd_plan},
      {"cost", "one op through the cost model: predicted seconds, achieved vs ceiling, measured or roofline",
       cmd_cost},
      {"calibrate", "run CUDA/cuBLAS/NCCL calibration on this machine's GPUs, write a profile",
       cmd_calibrate},
      {"simulate", "'simulate train --scenario F': iteration time, MFU, memory, time breakdown, trace",
       cmd_simulate},
      {"report", "'report --scenario F' or '--from result.json': one self-contained HTML page (or Markdown)",
       cmd_report},
      {"bench", "'bench serve --scenario F': the serving mini-engine on this machine's GPU, real time",
       cmd_bench},
      {"validate", "'validate serve --scenario F': simulated vs measured serving metrics, with errors",
       cmd_validate},
  };
  return c;
}

void write_file_atomic(const std::string& path, const std::string& content) { write_output_file(path, content); }

}  // namespace infraplan::cli
