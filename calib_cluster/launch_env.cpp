#include "calib_cluster/launch_env.hpp"

#include <cctype>
#include <cstdlib>
#include <vector>

#include "common/error.hpp"

namespace infraplan::ccal {

namespace {

/// A whole number >= `min` from variable `var`, or -1 when unset.
int read_int(const EnvLookup& env, const char* var, int min) {
  const char* v = env(var);
  if (!v) return -1;
  std::string s = v;
  char* end = nullptr;
  long x = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || x < min || x > (1 << 24))
    throw Error(std::string(var) + "='" + s + "' is not a whole number >= " + std::to_string(min) +
                " (set by the launcher; was it edited?)");
  return int(x);
}

}  // namespace

const char* launcher_name(Launcher l) {
  switch (l) {
    case Launcher::None:
      return "none";
    case Launcher::OpenMpi:
      return "mpirun (OpenMPI)";
    case Launcher::Slurm:
      return "srun (Slurm)";
    case Launcher::Pmi:
      return "PMI";
  }
  return "?";
}

EnvLookup process_env() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

std::vector<int> expand_slurm_tasks_per_node(const std::string& value, const std::string& var) {
  std::vector<int> out;
  std::size_t i = 0;
  auto fail = [&]() -> void {
    throw Error(var + "='" + value + "' is not Slurm's per-node task list (e.g. \"4(x2),3\")");
  };
  while (i < value.size()) {
    std::size_t j = i;
    while (j < value.size() && std::isdigit(static_cast<unsigned char>(value[j]))) ++j;
    if (j == i) fail();
    const int tasks = std::stoi(value.substr(i, j - i));
    int repeat = 1;
    if (j < value.size() && value[j] == '(') {
      if (j + 2 >= value.size() || value[j + 1] != 'x') fail();
      std::size_t k = j + 2, e = k;
      while (e < value.size() && std::isdigit(static_cast<unsigned char>(value[e]))) ++e;
      if (e == k || e >= value.size() || value[e] != ')') fail();
      repeat = std::stoi(value.substr(k, e - k));
      j = e + 1;
    }
    for (int r = 0; r < repeat; ++r) out.push_back(tasks);
    if (j < value.size()) {
      if (value[j] != ',') fail();
      ++j;
      if (j == value.size()) fail();
    }
    i = j;
  }
  if (out.empty()) fail();
  return out;
}

LaunchEnv read_launch_env(const EnvLookup& env) {
  LaunchEnv e;
  if (env("OMPI_COMM_WORLD_SIZE")) {
    e.launcher = Launcher::OpenMpi;
    e.size = read_int(env, "OMPI_COMM_WORLD_SIZE", 1);
    e.size_var = "OMPI_COMM_WORLD_SIZE";
    e.rank = read_int(env, "OMPI_COMM_WORLD_RANK", 0);
    e.local_rank = read_int(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0);
    e.local_rank_var = "OMPI_COMM_WORLD_LOCAL_RANK";
    e.local_size = read_int(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1);
  } else if (env("SLURM_PROCID") && (env("SLURM_STEP_ID") || env("SLURM_STEPID"))) {
    e.launcher = Launcher::Slurm;
    e.rank = read_int(env, "SLURM_PROCID", 0);
    e.size_var = env("SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
    e.size = read_int(env, e.size_var.c_str(), 1);
    e.local_rank = read_int(env, "SLURM_LOCALID", 0);
    e.local_rank_var = "SLURM_LOCALID";
    const char* per_node = env("SLURM_STEP_TASKS_PER_NODE");
    const int node = read_int(env, "SLURM_NODEID", 0);
    if (per_node && node >= 0) {
      auto tasks = expand_slurm_tasks_per_node(per_node, "SLURM_STEP_TASKS_PER_NODE");
      if (std::size_t(node) >= tasks.size())
        throw Error("SLURM_NODEID=" + std::to_string(node) + " is outside SLURM_STEP_TASKS_PER_NODE='" +
                    per_node + "' (" + std::to_string(tasks.size()) + " nodes)");
      e.local_size = tasks[std::size_t(node)];
    }
  } else if (env("PMI_RANK") && env("PMI_SIZE")) {
    e.launcher = Launcher::Pmi;
    e.rank = read_int(env, "PMI_RANK", 0);
    e.size = read_int(env, "PMI_SIZE", 1);
    e.size_var = "PMI_SIZE";
    e.local_rank = read_int(env, "MPI_LOCALRANKID", 0);
    if (e.local_rank >= 0) e.local_rank_var = "MPI_LOCALRANKID";
    e.local_size = read_int(env, "MPI_LOCALNRANKS", 1);
  } else {
    return e;
  }
  const std::string who = launcher_name(e.launcher);
  if (e.rank < 0) throw Error(who + " set " + e.size_var + " but not this process's rank");
  if (e.rank >= e.size)
    throw Error(who + ": rank " + std::to_string(e.rank) + " is outside " + e.size_var + "=" +
                std::to_string(e.size));
  if (e.local_rank >= 0 && e.local_size > 0 && e.local_rank >= e.local_size)
    throw Error(who + ": local rank " + std::to_string(e.local_rank) + " (" + e.local_rank_var +
                ") is outside the node's " + std::to_string(e.local_size) + " ranks");
  return e;
}

void check_launch_against_mpi(const LaunchEnv& env, int mpi_rank, int mpi_size) {
  if (!env.multi_process()) return;
  const std::string who = launcher_name(env.launcher);
  if (env.size != mpi_size) {
    std::string why;
    if (env.launcher == Launcher::Slurm)
      why = mpi_size == 1
                ? "srun started the tasks but did not connect them through MPI, so each runs alone: "
                  "start with `srun --mpi=pmix` (or pmi2; `srun --mpi=list` shows what this Slurm "
                  "offers), or run mpirun inside the allocation"
                : "the MPI world is not the Slurm step: were some tasks started by another srun?";
    else if (env.launcher == Launcher::OpenMpi)
      why =
          "this program's MPI library is not the one of the mpirun that started it (rebuild against the "
          "cluster's MPI, or start it with that MPI's own mpirun)";
    else
      why = "the PMI launcher and the MPI library disagree (start the program with its own MPI's launcher)";
    throw Error("rank " + std::to_string(env.rank) + ": " + who + " started " + std::to_string(env.size) +
                " ranks (" + env.size_var + "=" + std::to_string(env.size) + ") but MPI joined " +
                std::to_string(mpi_size) + " of them as one world; ranks are missing: " + why +
                ". No profile written");
  }
  if (env.rank != mpi_rank)
    throw Error("rank " + std::to_string(mpi_rank) + ": " + who + " calls this process rank " +
                std::to_string(env.rank) + " but MPI ranks it " + std::to_string(mpi_rank) +
                ": the launcher and the MPI library disagree. No profile written");
}

}  // namespace infraplan::ccal
