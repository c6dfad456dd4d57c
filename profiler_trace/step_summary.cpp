#include "profiler_trace/step_summary.hpp"

#include <algorithm>
#include <cmath>

namespace infraplan::ptrace {

std::string detect_framework(const std::vector<ClassifiedWork>& work) {
  double triton = 0, total = 0;
  bool hf_norm = false;
  for (const auto& w : work) {
    total += w.seconds();
    if (w.triton) triton += w.seconds();
    hf_norm = hf_norm || w.composite_type.rfind("rms_norm_hf_", 0) == 0;
  }
  // Eager PyTorch launches no Triton kernels; a compiled step runs most of its non-GEMM time in them.
  if (total > 0 && triton >= 0.05 * total) return "torch-compile";
  // transformers' RMSNorm is its own module of ATen ops (to fp32, pow, mean, add, rsqrt, mul, to, mul).
  return hf_norm ? "transformers" : "pytorch-eager";
}

StepSummary summarize(const TraceStep& step, const std::vector<ClassifiedWork>& work,
                      const std::string& trace) {
  StepSummary s;
  s.trace = trace;
  s.step = step.name;
  s.steps_in_trace = step.steps_in_trace;
  s.wall_seconds = step.wall_seconds();
  s.framework = detect_framework(work);
  s.kernels = int(work.size());
  double first = INFINITY, last = -INFINITY;
  for (const auto& w : work) {
    const double sec = w.seconds();
    auto& c = s.by_category[std::size_t(w.category)];
    ++c.kernels;
    c.seconds += sec;
    s.gpu_kernel_seconds += sec;
    s.seconds_by_phase[std::size_t(w.phase)] += sec;
    s.triton_kernels += w.triton ? 1 : 0;
    s.unlinked += w.work->op < 0 ? 1 : 0;
    first = std::min(first, w.work->gpu->ts_us);
    last = std::max(last, w.work->gpu->end_us());
  }
  if (work.empty()) return s;
  s.gpu_span_seconds = (last - first) * 1e-6;
  // Busy intervals in GPU start order (work is sorted by start); an idle gap is charged to the host
  // when the launch call of the work that ends it began after the GPU went idle.
  double busy_end = -INFINITY;
  for (const auto& w : work) {
    const TraceEvent& g = *w.work->gpu;
    if (g.ts_us > busy_end && std::isfinite(busy_end)) {
      const double gap = (g.ts_us - busy_end) * 1e-6;
      const TraceEvent* call = w.work->launch;
      if (call && call->ts_us >= busy_end)
        s.host_wait_seconds += gap;
      else
        s.idle_other_seconds += gap;
      s.gpu_busy_seconds += g.dur_us * 1e-6;
      busy_end = g.end_us();
    } else if (!std::isfinite(busy_end)) {
      s.gpu_busy_seconds += g.dur_us * 1e-6;
      busy_end = g.end_us();
    } else if (g.end_us() > busy_end) {
      s.gpu_busy_seconds += (g.end_us() - busy_end) * 1e-6;
      busy_end = g.end_us();
    }
  }
  return s;
}

Json summary_json(const StepSummary& s) {
  Json cats = Json::object();
  for (int i = 0; i < kKernelCategories; ++i) {
    const auto& c = s.by_category[std::size_t(i)];
    cats[category_name(KernelCategory(i))] = {
        {"kernels", c.kernels},
        {"seconds", c.seconds},
        {"share_of_busy", s.gpu_busy_seconds > 0 ? c.seconds / s.gpu_busy_seconds : 0.0}};
  }
  Json phases = Json::object();
  for (int i = 0; i < 4; ++i) phases[phase_name(Phase(i))] = s.seconds_by_phase[std::size_t(i)];
  return {{"trace", s.trace},
          {"step", s.step},
          {"steps_in_trace", s.steps_in_trace},
          {"framework", s.framework},
          {"wall_seconds", s.wall_seconds},
          {"gpu_span_seconds", s.gpu_span_seconds},
          {"gpu_busy_seconds", s.gpu_busy_seconds},
          {"gpu_kernel_seconds", s.gpu_kernel_seconds},
          {"gpu_idle_host_wait_seconds", s.host_wait_seconds},
          {"gpu_idle_other_seconds", s.idle_other_seconds},
          {"kernels", s.kernels},
          {"triton_kernels", s.triton_kernels},
          {"unlinked_kernels", s.unlinked},
          {"categories", cats},
          {"seconds_by_phase", phases}};
}

}  // namespace infraplan::ptrace
