#include "calib_cluster/cluster_profile_build.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "calib_cluster/cluster_description.hpp"
#include "collectives/comm_refit.hpp"
#include "common/error.hpp"

namespace infraplan::ccal {

namespace {

constexpr const char* kSchema = "infraplan-cluster-profile/1";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The measured calls of a comm section with the cluster ranks of their groups: a phase's
/// `cluster_ranks`, or ranks 0..n-1 for a single-process sweep (one node).
std::vector<coll::MeasuredCollective> measured_calls(const Json& comm,
                                                     std::vector<std::string>* phase_of = nullptr) {
  std::map<std::string, std::vector<int>> phase_ranks;
  for (const auto& ph : comm.value("phases", Json::array()))
    phase_ranks[ph.at("name").get<std::string>()] = ph.at("cluster_ranks").get<std::vector<int>>();
  std::vector<coll::MeasuredCollective> out;
  for (const auto& r : comm.value("rows", Json::array())) {
    const int n = r.value("ranks", 0);
    if (n < 2) continue;
    coll::MeasuredCollective m;
    m.op = coll::parse_op(r.at("op").get<std::string>(), "comm.rows[].op");
    m.bytes = r.at("bytes").get<double>();
    m.seconds = r.at("time_us").get<double>() * 1e-6;
    if (r.contains("phase")) {
      m.ranks = phase_ranks.at(r.at("phase").get<std::string>());
    } else {
      m.ranks.resize(std::size_t(n));
      std::iota(m.ranks.begin(), m.ranks.end(), 0);
    }
    if (!(m.bytes > 0) || !(m.seconds > 0)) continue;
    out.push_back(m);
    if (phase_of) phase_of->push_back(r.value("phase", "intra-" + std::to_string(n)));
  }
  return out;
}

/// Refits the model on a comm section's calls and adds "model" and "report" to it.
void refit_into(const hw::Cluster& cluster, Json& comm) {
  const auto calls = measured_calls(comm);
  if (calls.empty()) return;
  const coll::RefitResult fit = coll::refit_comm_profile(cluster, coll::CommProfile{}, calls);
  Json model = fit.profile.refit_json();
  coll::RefitOptions o;
  model["method"] = "collectives/comm_refit.hpp: per op and scope, latency per group size from calls <= " +
                    std::to_string(int(o.latency_bound_max_bytes)) + " B, Simple efficiency from calls >= " +
                    std::to_string(int(o.bandwidth_bound_min_bytes)) +
                    " B, LL128 and LL from the calls between; L1 in log time";
  model["fitted_from"] = std::to_string(calls.size()) + " measured calls of this run";
  comm["model"] = model;
  comm["report"] = comm_report(cluster, comm, model);
}

const char* size_class(double bytes) {
  return bytes < 1048576 ? "< 1 MiB" : bytes < 67108864 ? "1-64 MiB" : ">= 64 MiB";
}

}  // namespace

Json comm_report(const hw::Cluster& cluster, const Json& comm, const Json& refit_model) {
  std::vector<std::string> phase_of;
  const auto calls = measured_calls(comm, &phase_of);
  const auto def = coll::model_seconds(cluster, coll::CommProfile{}, calls);
  const auto fit = coll::model_seconds(
      cluster, coll::CommProfile::from_json(Json{{"comm", {{"model", refit_model}}}}, "comm"), calls);
  Json rows = Json::array();
  std::map<std::tuple<std::string, std::string, std::string>,
           std::pair<std::vector<double>, std::vector<double>>>
      cls;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const auto& c = calls[i];
    const double e0 = def[i] / c.seconds - 1, e1 = fit[i] / c.seconds - 1;
    rows.push_back({{"phase", phase_of[i]},
                    {"op", coll::op_name(c.op)},
                    {"bytes", c.bytes},
                    {"measured_us", c.seconds * 1e6},
                    {"default_us", def[i] * 1e6},
                    {"default_error", e0},
                    {"refit_us", fit[i] * 1e6},
                    {"refit_error", e1}});
    auto& v = cls[{coll::op_name(c.op), phase_of[i], size_class(c.bytes)}];
    v.first.push_back(std::fabs(e0));
    v.second.push_back(std::fabs(e1));
  }
  Json summary = Json::array();
  for (const auto& [k, v] : cls)
    summary.push_back({{"op", std::get<0>(k)},
                       {"phase", std::get<1>(k)},
                       {"sizes", std::get<2>(k)},
                       {"points", v.first.size()},
                       {"default_median_abs_error", median(v.first)},
                       {"refit_median_abs_error", median(v.second)}});
  return {{"what",
           "measured vs modelled per call: the default constants, and the model refitted on these same "
           "calls (in-sample: calibration, not validation)"},
          {"rows", rows},
          {"summary", summary}};
}

Json build_cluster_profile(const CommRun& run) {
  Json p;
  p["schema"] = kSchema;
  p["date"] = run.date;
  p["command"] = run.command;
  Json comm;
  comm["transport"] = run.transport;
  comm["launcher"] = run.launcher;
  comm["library"] = run.library;
  comm["date"] = run.date;
  comm["command"] = run.command;
  comm["run_seconds"] = run.run_seconds;
  comm["sizes"] = run.sizes;
  Json phases = Json::array();
  for (const auto& ph : run.phases) {
    std::vector<int> cluster_ranks;
    for (int r : ph.groups.front())
      cluster_ranks.push_back(run.layout.node_of(r) * run.layout.ranks_per_node + run.layout.local_of(r));
    Json ops = Json::array();
    for (auto op : ph.ops) ops.push_back(coll::op_name(op));
    phases.push_back({{"name", ph.name},
                      {"scope", ph.scope},
                      {"placement", ph.placement},
                      {"ranks", ph.group_size},
                      {"nodes", ph.nodes_per_group},
                      {"groups", ph.groups},
                      {"cluster_ranks", cluster_ranks},
                      {"ops", ops}});
  }
  comm["phases"] = phases;
  comm["rows"] = rows_json(run.rows, run.phases);
  comm["fits"] = group_fits_json(run.rows, run.phases);
  if (!run.library_memory.empty()) comm["library_memory"] = library_memory_json(run.library_memory, run.phases);
  Json notes = Json::array();
  Json topo;
  topo["layout"] = run.layout.to_json();
  Json ranks = Json::array(), nodes = Json::array();
  for (const auto& r : run.ranks) ranks.push_back(r.to_json());
  for (const auto& n : run.nodes) nodes.push_back(n.to_json());
  topo["ranks"] = ranks;
  topo["nodes"] = nodes;
  if (run.transport == "host-mpi") {
    p["name"] =
        "host-mpi-" + std::to_string(run.layout.nodes()) + "x" + std::to_string(run.layout.ranks_per_node);
    notes.push_back(
        "host transport: MPI on host memory, no GPU: the rows describe MPI, not NCCL; no cluster "
        "description and no refitted model");
  } else {
    ClusterDescription d = describe_cluster(run.layout, run.ranks, run.nodes);
    d.cluster.nccl_buffer_bytes = nccl_buffer_bytes(run.library_memory, run.phases);
    d.derivation["nccl_buffer_bytes"] =
        d.cluster.nccl_buffer_bytes > 0
            ? "measured: the most device memory NCCL held on one rank at the end of a phase of 2+ ranks "
              "(comm.library_memory)"
            : "not measured (no phase of 2+ ranks): the ledger's default reserve applies";
    p["name"] = d.cluster.name + "-" + std::to_string(d.cluster.nodes) + "x" +
                std::to_string(d.cluster.gpus_per_node);
    p["cluster"] = d.cluster.to_json();
    topo["derivation"] = d.derivation;
    refit_into(d.cluster, comm);
  }
  comm["notes"] = notes;
  p["topology"] = topo;
  p["comm"] = comm;
  p["gpu_profiles"] = Json::array();
  return p;
}

Json merge_cluster_profiles(const std::vector<std::pair<std::string, Json>>& inputs,
                            const std::string& command) {
  Json out;
  out["schema"] = kSchema;
  out["command"] = command;
  Json gpu_profiles = Json::array(), sources = Json::array();
  std::map<std::string, std::string> gpu_from;  // gpu -> file
  std::string comm_file;
  Json comm, cluster, topology;
  std::string comm_gpu;  // catalog GPU the comm run measured ("" unknown)
  auto add_gpu_profile = [&](const std::string& file, const Json& prof) {
    const std::string gpu = prof.value("gpu", std::string());
    if (gpu.empty()) throw Error(file + ": a GPU profile without \"gpu\"");
    if (gpu_from.count(gpu))
      throw Error(file + " and " + gpu_from[gpu] + " are both profiles of " + gpu +
                  ": give one per GPU model");
    gpu_from[gpu] = file;
    gpu_profiles.push_back(prof);
    sources.push_back({{"file", file}, {"kind", "gpu profile"}, {"gpu", gpu}});
  };
  auto take_comm = [&](const std::string& file, const Json& c) {
    if (!comm_file.empty())
      throw Error(file + " and " + comm_file +
                  " both hold a communication calibration: give one (one cluster)");
    comm_file = file;
    comm = c;
  };
  for (const auto& [file, j] : inputs) {
    if (!j.is_object()) throw Error(file + ": not a JSON object");
    if (j.value("schema", std::string()) == kSchema) {
      for (const auto& g : j.value("gpu_profiles", Json::array())) add_gpu_profile(file, g);
      if (j.contains("comm")) {
        take_comm(file, j.at("comm"));
        if (j.contains("cluster")) {
          cluster = j.at("cluster");
          comm_gpu = cluster.value("gpu", std::string());
        }
        if (j.contains("topology")) topology = j.at("topology");
        sources.push_back({{"file", file}, {"kind", "cluster comm"}, {"gpu", comm_gpu}});
      }
    } else if (j.contains("tables")) {
      add_gpu_profile(file, j);
    } else if (j.contains("comm")) {
      take_comm(file, j.at("comm"));
      sources.push_back({{"file", file}, {"kind", "single-process comm"}});
    } else {
      throw Error(file + ": neither a GPU profile (\"tables\"), a cluster profile (\"schema\": \"" +
                  std::string(kSchema) + "\") nor a comm file (\"comm\")");
    }
  }
  if (!comm.is_null() && comm.value("transport", std::string()) == "host-mpi" && !gpu_profiles.empty())
    throw Error(comm_file +
                " is a host-transport run (MPI on host memory, no GPU): it does not describe the GPUs "
                "of " +
                gpu_profiles.front().value("gpu", std::string("the GPU profile")) +
                "; calibrate with --transport nccl on the GPUs");
  if (!comm_file.empty() && cluster.is_null() && comm.value("transport", std::string()) != "host-mpi") {
    // A single-process sweep on one machine: its GPU is the one GPU profile given.
    if (gpu_profiles.size() != 1)
      throw Error(comm_file +
                  " does not say which GPU it measured: merge it with exactly one GPU profile (got " +
                  std::to_string(gpu_profiles.size()) + ")");
    comm_gpu = gpu_profiles.front().at("gpu").get<std::string>();
    if (comm.contains("device") && comm.at("device").is_string()) {
      const hw::GpuSpec* g = hw::find_gpu_by_device_name(comm.at("device").get<std::string>());
      if (!g || g->name != comm_gpu)
        throw Error(comm_file + " measured '" + comm.at("device").get<std::string>() + "', not " + comm_gpu +
                    " (" + gpu_from[comm_gpu] + "): merge it with the GPU profile of the GPU it measured");
    }
    int n = comm.value("gpus", 0);
    for (const auto& r : comm.value("rows", Json::array())) n = std::max(n, r.value("ranks", 0));
    if (n < 1) throw Error(comm_file + ": comm.rows name no group size");
    hw::Cluster c = hw::resolve_cluster(Json{{"gpu", comm_gpu}, {"name", "measured-" + comm_gpu}});
    for (const auto& name : hw::cluster_preset_names())
      if (hw::cluster_preset(name).gpu.name == comm_gpu) c = hw::cluster_preset(name);
    c.name = "measured-" + comm_gpu;
    c.nodes = 1;
    c.gpus_per_node = n;
    cluster = c.to_json();
    topology = {{"derivation",
                 {{"nodes", "measured: one machine, " + std::to_string(n) + " GPU(s) (single-process sweep)"},
                  {"intra", "not measured: " + std::string(hw::intra_kind_name(c.intra.kind)) +
                                " from the catalog"}}}};
    refit_into(c, comm);
  }
  if (!comm_gpu.empty() && !gpu_profiles.empty() && !gpu_from.count(comm_gpu)) {
    std::vector<std::string> have;
    for (const auto& [g, f] : gpu_from) have.push_back(g + " (" + f + ")");
    throw Error(
        comm_file + " measured " + comm_gpu + " but no GPU profile of it was given (have: " + join(have) +
        "): calibrate one GPU of that model (infraplan calibrate --out gpu.json on it) and merge again");
  }
  out["name"] =
      cluster.is_null() ? std::string("gpu-profiles") : cluster.value("name", std::string("cluster"));
  if (!cluster.is_null()) out["cluster"] = cluster;
  if (!topology.is_null()) out["topology"] = topology;
  if (!comm.is_null()) out["comm"] = comm;
  out["gpu_profiles"] = gpu_profiles;
  out["sources"] = sources;
  return out;
}

}  // namespace infraplan::ccal
