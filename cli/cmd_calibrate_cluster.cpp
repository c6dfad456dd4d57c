// infraplan calibrate cluster: the one command a user runs on a login node. It starts, through
// Slurm (srun) or plain mpirun,
//   1. the single-GPU calibration once per GPU model (one GPU of each partition given; skipped for
//      the models --gpu-profile already covers),
//   2. the communication calibration across the nodes, one process per GPU,
//   3. the merge of both into one cluster profile (cmd_calibrate_merge.cpp),
// and writes --out only when every step succeeded. --dry-run prints the commands instead.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "calib_cluster/cluster_profile_build.hpp"
#include "calib_cluster/sweep_plan.hpp"
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/find_tool.hpp"
#include "hardware/cluster_profile.hpp"
#include "common/error.hpp"

namespace infraplan::cli {

namespace {

namespace fs = std::filesystem;

const std::vector<OptionSpec> kSpec = {
    {"out", true, "cluster profile to write (JSON)"},
    {"launcher", true, "slurm (srun inside or outside an allocation) or mpirun"},
    {"nodes", true, "nodes to calibrate across (default 1)"},
    {"gpus-per-node", true, "GPUs (ranks) per node (default 8)"},
    {"partition", true,
     "Slurm partition(s), comma-separated: one GPU model each; the comm sweep runs on the first"},
    {"hosts", true, "mpirun: host names, comma-separated (one per node)"},
    {"hostfile", true, "mpirun: a hostfile instead of --hosts"},
    {"gpu-profile", true, "existing single-GPU profile(s), comma-separated: skip calibrating those models"},
    {"transport", true, "nccl (default) or host (MPI on host memory: the launcher path without GPUs)"},
    {"quick", false, "fewer sizes and shapes (minutes instead of tens of minutes)"},
    {"work-dir", true, "where the steps write their files (default OUT.parts/)"},
    {"srun-mpi", true, "srun --mpi plugin (default pmix; `srun --mpi=list` shows the choices)"},
    {"launcher-args", true, "extra launcher arguments, space-separated (e.g. \"--account=x --time=30\")"},
    {"ops", true,
     "comm: collectives to sweep (default all_reduce,all_gather,reduce_scatter,alltoall,sendrecv)"},
    {"max-bytes", true, "comm: largest size (default 4GiB; --quick 1GiB)"},
    {"max-nodes", true, "comm: largest number of nodes in one group (default all)"},
    {"dry-run", false, "print the commands and the expected run time, run nothing"},
    {"gpu", true, "GPU the --dry-run estimate assumes (catalog name, default h200-sxm-141gb)"},
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, sep))
    if (!t.empty()) out.push_back(t);
  return out;
}

std::string shell_line(const std::vector<std::string>& cmd) {
  std::string s;
  for (const auto& w : cmd) {
    const bool quote = w.find_first_of(" \t\"'$") != std::string::npos || w.empty();
    s += (s.empty() ? "" : " ") + (quote ? "'" + w + "'" : w);
  }
  return s;
}

/// Runs `cmd` (its output goes to this terminal); returns its exit code.
int run(const std::vector<std::string>& cmd) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw Error("cannot start " + cmd.front());
  if (pid == 0) {
    std::vector<char*> argv;
    for (const auto& w : cmd) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "cannot run %s\n", cmd.front().c_str());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string tool(const char* name, bool dry) {
  std::string t = find_tool(name);
  if (t.empty() && !dry)
    throw Error(std::string(name) +
                " was not found beside infraplan or on PATH: build it (infraplan-calibrate needs "
                "the CUDA toolkit, infraplan-calibrate-mpi MPI) on a file system the nodes share");
  return t.empty() ? name : fs::absolute(t).string();
}

}  // namespace

int cmd_calibrate_cluster(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan calibrate cluster --launcher slurm|mpirun --out CLUSTER.json [--nodes N]\n"
        "         [--gpus-per-node G] [--partition P[,P2]] [--hosts h1,h2 | --hostfile F] [--gpu-profile "
        "F,...]\n"
        "         [--quick] [--transport nccl|host] [--dry-run] ...\n\n"
        "Calibrates a cluster from its login node: the single-GPU calibration once per GPU model, the NCCL\n"
        "sweeps across N nodes x G GPUs (one process per GPU), then one merged cluster profile for\n"
        "scenarios' \"cluster\". The tools must sit on a file system the nodes share. docs/calibration.md,\n"
        "\"On your cluster\", walks through it with run times.\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  const std::string out = a.require("out");
  const std::string launcher = a.require("launcher");
  if (launcher != "slurm" && launcher != "mpirun")
    throw Error("--launcher=" + launcher + " is invalid; valid: slurm, mpirun");
  const int nodes = int(a.get_int("nodes", 1).value_or(1));
  const int gpn = int(a.get_int("gpus-per-node", 1).value_or(8));
  const std::string transport = a.get("transport", "nccl");
  if (transport != "nccl" && transport != "host")
    throw Error("--transport=" + transport + " is invalid; valid: nccl, host");
  const bool dry = a.flag("dry-run"), quick = a.flag("quick");
  const auto partitions = split(a.get("partition", ""), ',');
  const auto hosts = split(a.get("hosts", ""), ',');
  const auto extra = split(a.get("launcher-args", ""), ' ');
  if (launcher == "mpirun" && !partitions.empty()) throw Error("--partition is for --launcher slurm");
  if (launcher == "slurm" && (!hosts.empty() || a.get("hostfile")))
    throw Error("--hosts/--hostfile are for --launcher mpirun (Slurm places the tasks)");
  if (launcher == "mpirun" && nodes > 1 && hosts.empty() && !a.get("hostfile"))
    throw Error("--launcher mpirun with --nodes " + std::to_string(nodes) + " needs --hosts or --hostfile");
  if (!hosts.empty() && int(hosts.size()) != nodes)
    throw Error("--hosts names " + std::to_string(hosts.size()) + " host(s) but --nodes is " +
                std::to_string(nodes));
  const fs::path work = a.get("work-dir", out + ".parts");

  // 1. Single-GPU calibration, once per GPU model not covered by --gpu-profile.
  std::vector<std::pair<std::string, Json>> inputs;
  std::vector<std::string> given = split(a.get("gpu-profile", ""), ',');
  for (const auto& f : given) inputs.emplace_back(f, read_json_file(f));
  std::vector<std::vector<std::string>> single;
  std::vector<std::string> single_out;
  if (transport == "nccl" && given.empty()) {
    const std::string cal = tool("infraplan-calibrate", dry);
    const std::vector<std::string> where = partitions.empty() ? std::vector<std::string>{""} : partitions;
    for (const auto& p : where) {
      const std::string f = (work / ("gpu" + (p.empty() ? std::string() : "-" + p) + ".json")).string();
      std::vector<std::string> c;
      if (launcher == "slurm") {
        c = {"srun", "-N", "1", "-n", "1", "--gpus-per-task=1"};
        if (!p.empty()) c.push_back("--partition=" + p);
      } else {
        c = {"mpirun", "-np", "1"};
        if (!hosts.empty()) c.insert(c.end(), {"--host", hosts.front()});
        if (auto hf = a.get("hostfile")) c.insert(c.end(), {"--hostfile", *hf});
      }
      c.insert(c.end(), extra.begin(), extra.end());
      c.insert(c.end(), {cal, "--out", f});
      if (quick) c.push_back("--quick");
      single.push_back(c);
      single_out.push_back(f);
    }
  }
  // 2. Communication calibration across the nodes.
  const std::string comm_out = (work / "comm.json").string();
  std::vector<std::string> comm;
  if (launcher == "slurm") {
    comm = {"srun", "--mpi=" + a.get("srun-mpi", "pmix"), "-N", std::to_string(nodes),
            "--ntasks-per-node=" + std::to_string(gpn)};
    if (transport == "nccl") comm.push_back("--gpus-per-task=1");
    if (!partitions.empty()) comm.push_back("--partition=" + partitions.front());
  } else {
    comm = {"mpirun", "-np", std::to_string(nodes * gpn), "--map-by", "ppr:" + std::to_string(gpn) + ":node"};
    if (!hosts.empty()) {
      std::string h;
      for (const auto& x : hosts) h += (h.empty() ? "" : ",") + x + ":" + std::to_string(gpn);
      comm.insert(comm.end(), {"--host", h});
    }
    if (auto hf = a.get("hostfile")) comm.insert(comm.end(), {"--hostfile", *hf});
    for (const char* v : {"PATH", "LD_LIBRARY_PATH", "NCCL_NVLS_ENABLE"})
      if (std::getenv(v))
        comm.insert(comm.end(), {"-x", v});  // the ranks see this shell's tools and libraries
  }
  comm.insert(comm.end(), extra.begin(), extra.end());
  comm.insert(comm.end(),
              {tool("infraplan-calibrate-mpi", dry), "comm", "--out", comm_out, "--transport", transport});
  if (quick) comm.push_back("--quick");
  for (const char* k : {"ops", "max-bytes", "max-nodes"})
    if (auto v = a.get(k)) comm.insert(comm.end(), {std::string("--") + k, *v});

  const int steps = int(single.size()) + 2;
  if (dry) {
    int k = 1;
    for (const auto& c : single)
      std::printf("# step %d/%d: single-GPU calibration\n%s\n", k++, steps, shell_line(c).c_str());
    std::printf("# step %d/%d: communication calibration, %d node(s) x %d GPU(s)\n%s\n", k++, steps, nodes,
                gpn, shell_line(comm).c_str());
    std::printf("# step %d/%d: merge\ninfraplan calibrate merge --out %s", k, steps, out.c_str());
    for (const auto& f : given) std::printf(" %s", f.c_str());
    for (const auto& f : single_out) std::printf(" %s", f.c_str());
    std::printf(" %s\n", comm_out.c_str());
    // What the sweeps will take, from the collective model's default constants (a prediction).
    hw::Cluster c = hw::resolve_cluster(Json{{"gpu", a.get("gpu", "h200-sxm-141gb")}});
    for (const auto& name : hw::cluster_preset_names())
      if (hw::cluster_preset(name).gpu.name == c.gpu.name) c = hw::cluster_preset(name);
    c.nodes = nodes;
    c.gpus_per_node = gpn;
    ccal::SweepOptions so;
    if (quick) so.size_factor = 8, so.max_bytes = std::size_t(1) << 30;
    if (auto v = a.get("max-bytes")) so.max_bytes = std::size_t(parse_bytes_string(*v, "--max-bytes"));
    if (auto v = a.get("max-nodes")) so.max_nodes = std::atoi(v->c_str());
    if (auto v = a.get("ops")) {
      so.ops.clear();
      for (const auto& o : split(*v, ',')) so.ops.push_back(coll::parse_op(o, "--ops"));
    }
    const auto phases = ccal::plan_sweeps(ccal::regular_layout(nodes, gpn), so);
    std::printf(
        "# expected: single-GPU calibration %s per GPU model (measured on an H200); communication sweeps "
        "~%.0f s on %d x %d %s (%zu phases; modelled with the default collective constants, plus start-up)\n",
        quick ? "~6 s" : "~260 s", ccal::expected_sweep_seconds(c, phases, so), nodes, gpn,
        c.gpu.name.c_str(), phases.size());
    return 0;
  }
  std::error_code ec;
  fs::create_directories(work, ec);
  if (ec) throw Error("cannot create --work-dir " + work.string() + ": " + ec.message());
  fs::remove(comm_out, ec);
  int k = 1;
  for (std::size_t i = 0; i < single.size(); ++i) {
    std::printf("[calibrate cluster] step %d/%d: single-GPU calibration\n$ %s\n", k++, steps,
                shell_line(single[i]).c_str());
    fs::remove(single_out[i], ec);
    if (const int rc = run(single[i]); rc != 0)
      throw Error("step " + std::to_string(k - 1) + " (single-GPU calibration) failed with exit code " +
                  std::to_string(rc) + "; " + out + " not written");
    // Two partitions of one GPU model: the first profile of a model is kept.
    Json p = read_json_file(single_out[i]);
    bool dup = false;
    for (const auto& [f, j] : inputs)
      dup |= j.value("gpu", std::string()) == p.value("gpu", std::string("?"));
    if (dup)
      std::printf("[calibrate cluster] %s is another %s: kept the first profile of that model\n",
                  single_out[i].c_str(), p.value("gpu", std::string()).c_str());
    else
      inputs.emplace_back(single_out[i], std::move(p));
  }
  std::printf("[calibrate cluster] step %d/%d: communication calibration, %d node(s) x %d GPU(s)\n$ %s\n",
              k++, steps, nodes, gpn, shell_line(comm).c_str());
  if (const int rc = run(comm); rc != 0 || !fs::exists(comm_out, ec))
    throw Error("step " + std::to_string(k - 1) + " (communication calibration) failed with exit code " +
                std::to_string(rc) + " (its message is above); " + out + " not written");
  inputs.emplace_back(comm_out, read_json_file(comm_out));
  std::printf("[calibrate cluster] step %d/%d: merge\n", k, steps);
  if (transport == "host") {
    // No GPU: the host-transport profile is the result.
    write_file_atomic(out, inputs.back().second.dump(1) + "\n");
  } else {
    write_file_atomic(out,
                      ccal::merge_cluster_profiles(inputs, "infraplan calibrate cluster").dump(1) + "\n");
  }
  print_cluster_profile_summary(read_json_file(out), out);
  return 0;
}

}  // namespace infraplan::cli
