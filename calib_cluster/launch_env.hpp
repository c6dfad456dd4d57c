#pragma once
// Which launcher started this process and what it says about the ranks: OpenMPI's mpirun
// (OMPI_COMM_WORLD_*), Slurm's srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, ...), a PMI
// launcher such as MPICH's hydra (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID), or none (a plain start).
// The multi-process calibration takes its GPU from the local rank and checks these numbers
// against what MPI reports, so that a launch that lost ranks stops with a message instead of
// measuring the wrong group.
#include <functional>
#include <string>
#include <vector>

namespace infraplan::ccal {

enum class Launcher { None, OpenMpi, Slurm, Pmi };

/// "none", "mpirun (OpenMPI)", "srun (Slurm)", "PMI".
const char* launcher_name(Launcher l);

struct LaunchEnv {
  Launcher launcher = Launcher::None;
  int rank = -1;               ///< world rank the launcher assigned (-1: not said)
  int size = -1;               ///< ranks the launcher started (-1: not said)
  int local_rank = -1;         ///< rank among this node's processes (-1: not said)
  int local_size = -1;         ///< processes on this node (-1: not said)
  std::string size_var;        ///< the variable `size` came from, e.g. "SLURM_NTASKS"
  std::string local_rank_var;  ///< the variable `local_rank` came from, e.g. "SLURM_LOCALID"
  /// True when a launcher started this process as one rank of several.
  bool multi_process() const { return launcher != Launcher::None; }
};

/// Environment lookup: returns nullptr for an unset variable.
using EnvLookup = std::function<const char*(const char*)>;
/// The process environment (std::getenv).
EnvLookup process_env();

/// Reads the launcher's variables. OpenMPI's win over Slurm's (mpirun inside an allocation), a
/// Slurm step's over PMI's. Throws infraplan::Error naming the variable and its value when a value
/// is not a whole number, or a rank is outside its size.
LaunchEnv read_launch_env(const EnvLookup& env = process_env());

/// Slurm's per-node task counts ("4(x2),3" = 4, 4, 3) expanded; throws infraplan::Error on a
/// malformed value naming `var`.
std::vector<int> expand_slurm_tasks_per_node(const std::string& value, const std::string& var);

/// Checks what MPI reports against the launcher: a different size means ranks are missing (srun
/// without an MPI plugin starts N singletons; an mpirun of another MPI starts N worlds of one).
/// Throws infraplan::Error naming this rank, the variables and the likely cause.
void check_launch_against_mpi(const LaunchEnv& env, int mpi_rank, int mpi_size);

}  // namespace infraplan::ccal
