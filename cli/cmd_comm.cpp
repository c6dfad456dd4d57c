// infraplan comm --cluster C|--scenario F --op OP --bytes SIZE --group tp|cp|dp|ep|pp|world|N
//                [--profile F] [--algorithm A --protocol P] [--simulate] [--json]
// Predicted time, algbw and busbw (nccl-tests definitions), the algorithm and protocol chosen and
// the bottleneck link of one collective on a group of GPUs of the cluster.
#include <cstdio>

#include "cli/args.hpp"
#include "cli/table.hpp"
#include "collectives/comm_model.hpp"
#include "collectives/flow_sim.hpp"
#include "hardware/cluster_profile.hpp"
#include "common/error.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

int cmd_comm(const std::vector<std::string>& argv);

namespace {

const std::vector<OptionSpec> kSpec = {
    {"cluster", true, "cluster preset, PRESET:NODES or JSON file (e.g. dgx-h100:8)"},
    {"scenario", true, "scenario file: cluster, profile and the training tp/cp/pp/dp/ep groups"},
    {"op", true,
     "all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall|sendrecv (default all_reduce)"},
    {"bytes", true, "nccl-tests size, e.g. 1GiB, 256MB, 4096 (default 1GiB)"},
    {"group", true, "tp|cp|dp|ep|pp (the group holding rank 0, Megatron order), world, or N (ranks 0..N-1)"},
    {"profile", true, "profile JSON whose comm section (fits) replaces the default constants"},
    {"algorithm", true, "force ring|tree|nvls|hierarchical|direct (needs --protocol)"},
    {"protocol", true, "force LL|LL128|Simple (needs --algorithm)"},
    {"simulate", false, "also run the SimGrid flow simulation of the collective"},
    {"json", false, "machine-readable output"},
};

struct Parallel {
  int tp = 1, cp = 1, dp = 1, pp = 1, ep = 1;
};

/// Ranks of `kind` holding rank 0 in Megatron order: tp fastest, then cp, dp, pp.
std::vector<int> megatron_group(const std::string& kind, const Parallel& p) {
  std::vector<int> g;
  const int stride_cp = p.tp, stride_dp = p.tp * p.cp, stride_pp = p.tp * p.cp * p.dp;
  if (kind == "tp")
    for (int i = 0; i < p.tp; ++i) g.push_back(i);
  else if (kind == "cp")
    for (int i = 0; i < p.cp; ++i) g.push_back(i * stride_cp);
  else if (kind == "dp")
    for (int i = 0; i < p.dp; ++i) g.push_back(i * stride_dp);
  else if (kind == "ep")  // experts split over consecutive data-parallel ranks
    for (int i = 0; i < p.ep; ++i) g.push_back(i * stride_dp);
  else if (kind == "pp")
    for (int i = 0; i < p.pp; ++i) g.push_back(i * stride_pp);
  return g;
}

}  // namespace

int cmd_comm(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "usage: infraplan comm --cluster C|--scenario F [--op OP] [--bytes SIZE] [--group G] [--json]\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  a.expect_positional(0, 0, "infraplan comm --cluster C|--scenario F [--op OP] [--bytes SIZE] [--group G]");
  if (a.get("cluster").has_value() == a.get("scenario").has_value())
    throw Error("give exactly one of --cluster (e.g. dgx-h100:8) or --scenario FILE");
  hw::Cluster cluster;
  Parallel par;
  bool have_par = false;
  std::string profile_path = a.get("profile", "");
  if (auto s = a.get("scenario")) {
    strat::Scenario sc = strat::load_scenario(*s);
    cluster = sc.cluster;
    if (profile_path.empty()) profile_path = sc.profile;
    if (sc.training) {
      const auto& t = *sc.training;
      par.tp = t.tp;
      par.cp = t.cp;
      par.pp = t.pp;
      par.ep = t.ep;
      par.dp = t.dp > 0 ? t.dp : cluster.total_gpus() / std::max(1, t.tp * t.cp * t.pp);
      have_par = true;
    }
  } else {
    cluster = hw::resolve_cluster_arg(*a.get("cluster"));
    // A measured cluster (cluster profile) brings its refitted collective model.
    if (profile_path.empty() && hw::is_cluster_profile_file(*a.get("cluster"))) profile_path = *a.get("cluster");
  }
  coll::CommProfile profile;
  if (!profile_path.empty())
    profile = coll::CommProfile::from_json(read_json_file(profile_path), profile_path);

  const coll::CollectiveOp op = coll::parse_op(a.get("op", "all_reduce"), "--op");
  const double bytes = parse_bytes_string(a.get("bytes", "1GiB"), "--bytes");
  const std::string group = a.get("group", "world");
  std::vector<int> ranks;
  if (group == "world") {
    for (int i = 0; i < cluster.total_gpus(); ++i) ranks.push_back(i);
  } else if (group == "tp" || group == "cp" || group == "dp" || group == "ep" || group == "pp") {
    if (!have_par)
      throw Error("--group " + group + " needs --scenario with a training section; or give --group N");
    ranks = megatron_group(group, par);
  } else {
    if (group.empty() || group.find_first_not_of("-0123456789") != std::string::npos)
      throw Error("--group '" + group.substr(0, 64) +
                  "' is invalid: use tp, cp, dp, ep, pp, world or a number of ranks");
    const int n = int(parse_integer(group, "--group", 1, cluster.total_gpus()));
    for (int i = 0; i < n; ++i) ranks.push_back(i);
  }
  if (ranks.back() >= cluster.total_gpus())
    throw Error("--group " + group + " needs rank " + std::to_string(ranks.back()) + " but the cluster has " +
                std::to_string(cluster.total_gpus()) + " GPUs");

  coll::CommModel model(cluster, profile);
  std::optional<coll::Algorithm> algo;
  std::optional<coll::Protocol> proto;
  if (auto s = a.get("algorithm")) algo = coll::parse_algorithm(*s, "--algorithm");
  if (auto s = a.get("protocol")) proto = coll::parse_protocol(*s, "--protocol");
  if (algo.has_value() != proto.has_value()) throw Error("--algorithm and --protocol go together");
  const coll::CollectiveEstimate e =
      algo ? model.estimate(op, bytes, ranks, *algo, *proto) : model.estimate(op, bytes, ranks);
  std::optional<double> simulated;
  if (a.flag("simulate")) {
    coll::FlowSim sim(cluster, profile);
    const coll::TaskId t = sim.add_collective(op, bytes, ranks, {}, "comm", algo, proto);
    const auto r = sim.run();
    simulated = r.tasks[std::size_t(t)].end_s - r.tasks[std::size_t(t)].start_s;
  }

  if (a.flag("json")) {
    Json j = {{"cluster", cluster.name},
              {"op", coll::op_name(op)},
              {"group", group},
              {"ranks", ranks},
              {"nodes", e.nodes},
              {"bytes", bytes},
              {"seconds", e.seconds},
              {"algbw_GBps", e.algbw_GBps},
              {"busbw_GBps", e.busbw_GBps},
              {"algorithm", coll::algorithm_name(e.algorithm)},
              {"protocol", coll::protocol_name(e.protocol)},
              {"bottleneck", e.bottleneck},
              {"bytes_per_rank", e.bytes_per_rank}};
    if (simulated) j["simulated_seconds"] = *simulated;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s of %s on %s group (%d ranks over %d node%s of %s)\n", coll::op_name(op),
              fmt_gib(bytes).c_str(), group.c_str(), e.ranks, e.nodes, e.nodes == 1 ? "" : "s",
              cluster.name.c_str());
  Table t({"quantity", "value"});
  t.add({"time", fmt_seconds(e.seconds)});
  t.add({"algbw", fmt(e.algbw_GBps) + " GB/s"});
  t.add({"busbw", fmt(e.busbw_GBps) + " GB/s"});
  t.add({"algorithm",
         std::string(coll::algorithm_name(e.algorithm)) + " / " + coll::protocol_name(e.protocol)});
  t.add({"bottleneck", e.bottleneck});
  t.add({"sent per rank", fmt_gib(e.bytes_per_rank)});
  if (simulated) t.add({"simulated (SimGrid)", fmt_seconds(*simulated)});
  std::printf("%s", t.str().c_str());
  return 0;
}

}  // namespace infraplan::cli
