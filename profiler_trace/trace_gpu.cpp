#include "profiler_trace/trace_gpu.hpp"

#include <cmath>
#include <cstdio>
#include <map>

#include "hardware/gpu_spec.hpp"
#include "common/error.hpp"

namespace infraplan::ptrace {

std::string describe_device(const DeviceProperties& d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %d SMs, %.1f GiB)",
                d.name.empty() ? "unnamed GPU" : d.name.c_str(), d.compute_major, d.compute_minor, d.sms,
                d.total_memory_bytes / double(1 << 30));
  return buf;
}

namespace {

/// Catalog GPUs with the device's compute capability and SM count and its memory within 5%
/// (the driver reports slightly less than the datasheet's marketing size on some boards); with
/// `same_board`, only those whose board the device's name does not contradict (an H200 NVL has the
/// H200 SXM's chip, SMs and memory, not its power limit or clocks: hw::device_name_fits).
std::vector<std::string> catalog_matches(const DeviceProperties& d, bool same_board) {
  std::vector<std::string> out;
  for (const auto& g : hw::gpu_catalog()) {
    if (g.compute_capability != d.compute_major * 10 + d.compute_minor) continue;
    if (g.sms > 0 && d.sms > 0 && g.sms != d.sms) continue;
    if (g.hbm_bytes > 0 && d.total_memory_bytes > 0 &&
        std::abs(d.total_memory_bytes - g.hbm_bytes) > 0.05 * g.hbm_bytes)
      continue;
    if (same_board && !hw::device_name_fits(g, d.name)) continue;
    out.push_back(g.name);
  }
  return out;
}

}  // namespace

std::string trace_gpu(const KinetoTrace& t, const TraceStep& step, const std::string& wanted) {
  if (!wanted.empty()) hw::find_gpu(wanted);  // unknown names are refused with suggestions
  // The device that ran the step's work (kernels carry the device id as pid).
  std::map<std::int64_t, int> count;
  for (const auto& w : step.work) ++count[w.gpu->pid];
  std::int64_t dev = -1;
  int most = 0;
  for (const auto& [id, n] : count)
    if (n > most) dev = id, most = n;
  const DeviceProperties* props = nullptr;
  for (const auto& d : t.devices)
    if (d.id == dev || (!props && t.devices.size() == 1)) props = &d;
  if (!props) {
    if (wanted.empty())
      throw Error("--from-trace: '" + t.origin +
                  "' does not describe its GPU (no deviceProperties); name it with --gpu (infraplan hardware "
                  "lists the catalog)");
    return wanted;
  }
  const auto matches = catalog_matches(*props, true), same_chip = catalog_matches(*props, false);
  if (!wanted.empty()) {
    // Named on purpose: a board of the same chip is accepted (its owner's --base profile, measured
    // on the board, carries its speed); another chip is not.
    for (const auto& m : same_chip)
      if (m == wanted && matches.empty()) return wanted;
    bool ok = false;
    for (const auto& m : matches) ok = ok || m == wanted;
    if (!ok)
      throw Error("--gpu " + wanted + ": the trace '" + t.origin + "' ran on " + describe_device(*props) +
                  (matches.empty() ? std::string(", which is not that GPU")
                                   : ", which is " + join(matches) + ", not " + wanted) +
                  "; calibrate from a trace taken on " + wanted + ", or name the GPU the trace ran on");
    return wanted;
  }
  if (matches.empty() && !same_chip.empty())
    throw Error("--from-trace: the trace ran on " + describe_device(*props) +
                ", a board the catalog does not have (" + join(same_chip) +
                " has its chip, not its power limit or clocks); to calibrate on it anyway, name --gpu " +
                same_chip.front() +
                " with --base a profile measured on this board (infraplan-calibrate --gpu " +
                same_chip.front() + ")");
  if (matches.empty())
    throw Error("--from-trace: the trace ran on " + describe_device(*props) +
                ", which matches no GPU of the catalog (infraplan hardware lists them)");
  if (matches.size() > 1)
    throw Error("--from-trace: the trace's GPU " + describe_device(*props) + " could be any of " +
                join(matches) + "; name it with --gpu");
  return matches.front();
}

}  // namespace infraplan::ptrace
