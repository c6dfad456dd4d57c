// infraplan calibrate merge --out CLUSTER.json FILE...: single-GPU profiles and a communication
// calibration merged into one cluster profile (calib_cluster/cluster_profile_build.hpp), and a
// summary of what it holds: the measured cluster, the refitted collective model, measured vs
// modelled per op and size class.
#include <cstdio>

#include "calib_cluster/cluster_profile_build.hpp"
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "collectives/comm_profile.hpp"
#include "hardware/cluster_profile.hpp"
#include "common/error.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"out", true, "cluster profile to write (JSON)"},
    {"json", false, "print the summary as JSON"},
};

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
  return b;
}

}  // namespace

void print_cluster_profile_summary(const Json& p, const std::string& path) {
  std::printf("cluster profile %s\n", path.c_str());
  if (p.contains("cluster")) {
    const hw::Cluster c = hw::cluster_from_cluster_profile(p, path);
    std::printf("  cluster: %d node(s) x %d %s, intra %s %.0f GB/s per GPU, inter %d x %.0f Gb/s %s\n",
                c.nodes, c.gpus_per_node, c.gpu.name.c_str(), hw::intra_kind_name(c.intra.kind),
                c.intra.GBps_per_gpu, c.inter.nics_per_node, c.inter.nic_Gbps,
                hw::inter_kind_name(c.inter.kind));
  }
  if (p.contains("topology") && p["topology"].contains("derivation"))
    for (const auto& [k, v] : p["topology"]["derivation"].items())
      if (v.is_string()) std::printf("    %s: %s\n", k.c_str(), v.get<std::string>().c_str());
  const auto gpus = hw::cluster_profile_gpus(p);
  std::printf("  GPU profiles: %s\n", gpus.empty() ? "none" : join(gpus).c_str());
  if (!p.contains("comm")) return;
  const Json& comm = p["comm"];
  std::string library = comm.value("library", std::string());
  if (library.empty() && comm.contains("nccl_version") && comm["nccl_version"].is_number_integer()) {
    const int v = comm["nccl_version"].get<int>();  // NCCL's code: major * 10000 + minor * 100 + patch
    library = "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
              std::to_string(v % 100);
  }
  std::printf("  comm: %zu measured rows, transport %s, %s\n", comm.value("rows", Json::array()).size(),
              comm.value("transport", std::string("single-process nccl")).c_str(), library.c_str());
  const coll::CommProfile cp = coll::CommProfile::from_json(p, path);
  if (!cp.link_efficiency.empty()) {
    Table t({"op", "scope", "eff LL", "eff LL128", "eff Simple", "latency (measured)", "ranks"});
    for (const auto& l : cp.latency_fits) {
      double e[3] = {0, 0, 0};
      for (const auto& x : cp.link_efficiency)
        if (x.op == l.op && x.inter == l.inter) e[int(x.protocol)] = x.efficiency;
      char lat[48];
      std::snprintf(lat, sizeof lat, "%.1f us (%+.1f)", l.latency_us, l.extra_us);
      t.add({coll::op_name(l.op), l.inter ? "inter" : "intra", fmt(e[0], 3), fmt(e[1], 3), fmt(e[2], 3), lat,
             std::to_string(l.ranks)});
    }
    std::printf(
        "\nrefitted collective model (fraction of nominal link bandwidth; latency of calls <= 4 KiB):\n");
    std::printf("%s", t.str().c_str());
  }
  if (comm.contains("report")) {
    Table t({"op", "phase", "sizes", "points", "default |err|", "refit |err|"});
    for (const auto& s : comm["report"]["summary"])
      t.add({s["op"].get<std::string>(), s["phase"].get<std::string>(), s["sizes"].get<std::string>(),
             std::to_string(s["points"].get<int>()), pct(s["default_median_abs_error"].get<double>()),
             pct(s["refit_median_abs_error"].get<double>())});
    std::printf("\nmeasured vs modelled (median |error|; the refit is in-sample on these calls):\n");
    std::printf("%s", t.str().c_str());
  }
}

int cmd_calibrate_merge(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan calibrate merge --out CLUSTER.json FILE [FILE...]\n\n"
        "Merges single-GPU profiles (infraplan calibrate --out gpu.json, one per GPU model) and one\n"
        "communication calibration (a cluster profile from `mpirun|srun ... infraplan calibrate comm`, or a\n"
        "single-machine comm file) into one cluster profile that scenarios name under \"cluster\".\n"
        "Refuses two profiles of one GPU model, two comm runs, or a comm run whose GPU has no profile.\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  const std::string out = a.require("out");
  if (a.positional().empty()) throw Error("calibrate merge: name the profiles to merge (FILE...)");
  std::vector<std::pair<std::string, Json>> inputs;
  std::string command = "infraplan calibrate merge --out " + out;
  for (const auto& f : a.positional()) {
    inputs.emplace_back(f, read_json_file(f));
    command += " " + f;
  }
  const Json merged = ccal::merge_cluster_profiles(inputs, command);
  write_file_atomic(out, merged.dump(1) + "\n");
  if (a.flag("json")) {
    Json s = {{"out", out}, {"gpu_profiles", hw::cluster_profile_gpus(merged)}};
    if (merged.contains("cluster")) s["cluster"] = merged["cluster"];
    if (merged.contains("comm") && merged["comm"].contains("model")) s["model"] = merged["comm"]["model"];
    std::printf("%s\n", s.dump(1).c_str());
  } else {
    print_cluster_profile_summary(merged, out);
  }
  return 0;
}

}  // namespace infraplan::cli
