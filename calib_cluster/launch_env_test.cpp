#include "calib_cluster/launch_env.hpp"

#include <gtest/gtest.h>

#include <map>

#include "common/error.hpp"

namespace infraplan::ccal {
namespace {

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(LaunchEnv, PlainStartIsNoLauncher) {
  const LaunchEnv e = read_launch_env(env_of({}));
  EXPECT_FALSE(e.multi_process());
  EXPECT_NO_THROW(check_launch_against_mpi(e, 0, 1));
}

TEST(LaunchEnv, OpenMpiVariables) {
  const LaunchEnv e = read_launch_env(env_of({{"OMPI_COMM_WORLD_SIZE", "16"},
                                              {"OMPI_COMM_WORLD_RANK", "9"},
                                              {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                              {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"},
                                              {"SLURM_PROCID", "0"},
                                              {"SLURM_STEP_ID", "0"}}));
  EXPECT_EQ(e.launcher, Launcher::OpenMpi);  // mpirun inside an allocation: OpenMPI's numbers
  EXPECT_EQ(e.rank, 9);
  EXPECT_EQ(e.size, 16);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_size, 8);
  EXPECT_NO_THROW(check_launch_against_mpi(e, 9, 16));
}

TEST(LaunchEnv, SlurmStepVariables) {
  const LaunchEnv e = read_launch_env(env_of({{"SLURM_PROCID", "5"},
                                              {"SLURM_STEP_ID", "3"},
                                              {"SLURM_NTASKS", "11"},
                                              {"SLURM_LOCALID", "1"},
                                              {"SLURM_NODEID", "2"},
                                              {"SLURM_STEP_TASKS_PER_NODE", "4(x2),3"}}));
  EXPECT_EQ(e.launcher, Launcher::Slurm);
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.size, 11);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_size, 3);
}

TEST(LaunchEnv, SlurmBatchScriptWithoutStepIsNoLauncher) {
  EXPECT_FALSE(read_launch_env(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}})).multi_process());
}

TEST(LaunchEnv, TasksPerNodeExpands) {
  EXPECT_EQ(expand_slurm_tasks_per_node("8(x3)", "V"), (std::vector<int>{8, 8, 8}));
  EXPECT_EQ(expand_slurm_tasks_per_node("2,1(x2),4", "V"), (std::vector<int>{2, 1, 1, 4}));
  for (const char* bad : {"", "x", "4(x)", "4(2)", "4,", "4(x2"})
    EXPECT_THROW(expand_slurm_tasks_per_node(bad, "V"), Error) << bad;
}

TEST(LaunchEnv, BadValuesNameTheVariable) {
  try {
    read_launch_env(env_of({{"OMPI_COMM_WORLD_SIZE", "four"}, {"OMPI_COMM_WORLD_RANK", "0"}}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("OMPI_COMM_WORLD_SIZE='four'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_launch_env(env_of({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "2"}})),
               Error);
  EXPECT_THROW(read_launch_env(env_of({{"OMPI_COMM_WORLD_SIZE", "2"}})), Error);  // no rank
}

TEST(LaunchEnv, MissingRanksNameTheRankAndTheCause) {
  // srun without an MPI plugin: every task is a world of one.
  const LaunchEnv e = read_launch_env(
      env_of({{"SLURM_PROCID", "3"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "3"}}));
  try {
    check_launch_against_mpi(e, 0, 1);
    FAIL();
  } catch (const Error& ex) {
    const std::string m = ex.what();
    EXPECT_NE(m.find("rank 3"), std::string::npos) << m;
    EXPECT_NE(m.find("SLURM_NTASKS=4"), std::string::npos) << m;
    EXPECT_NE(m.find("--mpi=pmix"), std::string::npos) << m;
    EXPECT_NE(m.find("No profile written"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace infraplan::ccal
