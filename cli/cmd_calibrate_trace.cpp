// infraplan calibrate --from-trace TRACE.json[.gz] --out PROFILE.json [--gpu NAME] ...: a profile
// whose framework costs come from a torch.profiler trace of the user's own training step. Runs
// without a GPU: it only reads the trace (profiler_trace/trace_profile.hpp).
#include <cstdio>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "common/output_files.hpp"
#include "common/error.hpp"
#include "profiler_trace/trace_profile.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"from-trace", true, "torch.profiler Chrome trace of one training step (JSON, or gzip'd .json.gz)"},
    {"out", true, "profile JSON to write"},
    {"gpu", true, "GPU catalog name; default: the GPU the trace's deviceProperties describe (must agree)"},
    {"framework", true,
     "pytorch-eager | transformers | torch-compile | megatron (default: detected from the kernels)"},
    {"step", true, "use ProfilerStep#N (default: the last step that launched GPU work)"},
    {"base", true, "profile to start from (default: the GPU's embedded profile)"},
    {"json", false, "print the summary as JSON"},
};

std::string ms(double s) { return fmt(s * 1e3, 3); }

void print_summary(const ptrace::TraceCalibration& r, const std::string& out) {
  const auto& s = r.summary;
  std::printf("Trace %s, %s (%d step annotation%s), GPU %s, framework %s%s\n", s.trace.c_str(),
              s.step.c_str(), s.steps_in_trace, s.steps_in_trace == 1 ? "" : "s", r.gpu.c_str(),
              r.framework.c_str(),
              r.framework == s.framework ? " (detected)" : (" (detected " + s.framework + ")").c_str());
  Table t({"category", "kernels", "GPU ms", "share of busy"});
  for (int i = 0; i < ptrace::kKernelCategories; ++i) {
    const auto& c = s.by_category[std::size_t(i)];
    if (c.kernels == 0) continue;
    t.add({ptrace::category_name(ptrace::KernelCategory(i)), std::to_string(c.kernels), ms(c.seconds),
           fmt(s.gpu_busy_seconds > 0 ? 100 * c.seconds / s.gpu_busy_seconds : 0, 1) + "%"});
  }
  t.add({"total", std::to_string(s.kernels), ms(s.gpu_kernel_seconds), ""});
  std::printf("%s", t.str().c_str());
  std::printf(
      "step wall %s ms, GPU busy %s ms (%s%%), GPU idle waiting on the host %s ms, other idle %s ms\n",
      ms(s.wall_seconds).c_str(), ms(s.gpu_busy_seconds).c_str(),
      fmt(s.wall_seconds > 0 ? 100 * s.gpu_busy_seconds / s.wall_seconds : 0, 1).c_str(),
      ms(s.host_wait_seconds).c_str(), ms(s.idle_other_seconds).c_str());
  std::printf("phases: forward %s ms, backward %s ms, recompute %s ms, optimizer %s ms\n",
              ms(s.seconds_by_phase[0]).c_str(), ms(s.seconds_by_phase[1]).c_str(),
              ms(s.seconds_by_phase[2]).c_str(), ms(s.seconds_by_phase[3]).c_str());
  std::printf("wrote %s: %zu GEMM shapes, %zu attention shapes, %zu eager kernel types from the trace%s\n",
              out.c_str(), r.gemms.size(), r.attention.size(), r.eager_types,
              r.optimizer_params > 0 ? (", optimizer " + ms(r.optimizer_seconds) + " ms over " +
                                        fmt_count(r.optimizer_params) + " parameters")
                                           .c_str()
                                     : "");
}

}  // namespace

int cmd_calibrate_from_trace(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan calibrate --from-trace TRACE.json[.gz] --out PROFILE.json [--gpu NAME]\n"
        "                           [--framework NAME] [--step N] [--base PROFILE.json] [--json]\n\n"
        "Reads a torch.profiler trace (activities CPU + CUDA, record_shapes=True) of one training step,\n"
        "classifies its GPU kernels (GEMMs with shapes and layouts, attention, norms, elementwise,\n"
        "optimizer, copies, communication) and writes a profile: the GPU's profile overlaid with the\n"
        "traced eager-kernel table, GEMM shapes, attention times and optimizer time. Use it in a\n"
        "scenario with \"profile\": \"PROFILE.json\". No GPU needed (docs/calibration.md).\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  ptrace::TraceCalibrationOptions o;
  o.trace_path = a.require("from-trace");
  const std::string out = a.require("out");
  o.gpu = a.get("gpu", "");
  o.framework = a.get("framework", "");
  if (auto n = a.get_int("step", 0, 1 << 20)) o.step = int(*n);
  o.base_profile = a.get("base", "");
  o.command = "infraplan calibrate";
  for (const auto& w : argv) o.command += " " + w;
  OutputFiles outputs;  // checked before the work: never the trace or the base profile itself
  outputs.add_input(o.trace_path);
  if (!o.base_profile.empty()) outputs.add_input(o.base_profile);
  outputs.add("--out", out);
  const auto r = ptrace::calibrate_from_trace(o);
  outputs.set(out, r.profile.dump(1) + "\n");
  outputs.commit();
  if (a.flag("json")) {
    Json j = r.profile["trace_calibration"];
    j["out"] = out;
    j["gemm_shapes"] = r.gemms.size();
    j["attention_shapes"] = r.attention.size();
    j["eager_types"] = r.eager_types;
    std::printf("%s\n", j.dump(1).c_str());
  } else {
    print_summary(r, out);
  }
  return 0;
}

}  // namespace infraplan::cli
