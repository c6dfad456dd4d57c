#include "hardware/reliability.hpp"

#include <cstdio>

#include "common/checked_number.hpp"
#include "common/error.hpp"

namespace infraplan::hw {

Json Reliability::to_json() const {
  return {{"gpu_mtbf_hours", gpu_mtbf_hours},
          {"node_mtbf_hours", node_mtbf_hours},
          {"network_mtbf_hours", network_mtbf_hours},
          {"restart_s", restart_s}};
}

Json Storage::to_json() const {
  return {{"checkpoint_write_GBps", checkpoint_write_GBps}, {"checkpoint_read_GBps", checkpoint_read_GBps}};
}

double job_failures_per_hour(const Reliability& r, int gpus, int nodes) {
  return double(gpus) / r.gpu_mtbf_hours + double(nodes) / r.node_mtbf_hours + double(nodes) / r.network_mtbf_hours;
}

namespace {
// A number in (0, max].
double positive(const JsonObject& o, const std::string& key, double fallback, double max) {
  const double v = o.get_number(key, fallback);
  if (!(v > 0)) throw Error(o.field(key) + "=" + number_text(v) + " is invalid: must be > 0");
  return o.get_number_min(key, fallback, 0, max);
}
}  // namespace

Reliability reliability_from_json(const Json& j, const std::string& path, Reliability r) {
  JsonObject o(j, path);
  o.reject_unknown({"gpu_mtbf_hours", "node_mtbf_hours", "network_mtbf_hours", "restart_s"});
  r.gpu_mtbf_hours = positive(o, "gpu_mtbf_hours", r.gpu_mtbf_hours, 1e12);
  r.node_mtbf_hours = positive(o, "node_mtbf_hours", r.node_mtbf_hours, 1e12);
  r.network_mtbf_hours = positive(o, "network_mtbf_hours", r.network_mtbf_hours, 1e12);
  r.restart_s = o.get_number_min("restart_s", r.restart_s, 0, 1e9);
  return r;
}

Storage storage_from_json(const Json& j, const std::string& path, Storage s) {
  JsonObject o(j, path);
  o.reject_unknown({"checkpoint_write_GBps", "checkpoint_read_GBps"});
  s.checkpoint_write_GBps = positive(o, "checkpoint_write_GBps", s.checkpoint_write_GBps, 1e9);
  s.checkpoint_read_GBps = positive(o, "checkpoint_read_GBps", s.checkpoint_read_GBps, 1e9);
  return s;
}

double default_price_per_gpu_hour(const std::string& gpu, std::string* source) {
  // Round on-demand list prices of GPU clouds in 2025 (per GPU of an 8-GPU instance; the large
  // clouds list 2-4× more, reserved capacity less). Indicative only.
  struct Row {
    const char* gpu;
    double usd;
  };
  static const Row kRows[] = {{"a100-sxm4-40gb", 1.30}, {"a100-sxm4-80gb", 1.80}, {"h100-sxm5-80gb", 2.50},
                              {"h100-pcie-80gb", 2.00}, {"h200-sxm-141gb", 3.50}, {"b200-sxm-180gb", 5.00},
                              {"l40s", 1.00}};
  for (const auto& r : kRows)
    if (gpu == r.gpu) {
      if (source) *source = "indicative on-demand rate for " + gpu + " (set cluster.price_per_gpu_hour)";
      return r.usd;
    }
  if (source) *source = "no default price for " + gpu + " (set cluster.price_per_gpu_hour)";
  return 0;
}

}  // namespace infraplan::hw
