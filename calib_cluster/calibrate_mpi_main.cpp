// infraplan-calibrate-mpi: the multi-process communication calibration, one process per GPU,
// started by mpirun or srun (docs/calibration.md, "On your cluster"). infraplan-calibrate hands
// `comm` over to this program when a launcher started it, so that infraplan-calibrate itself
// needs no MPI library:
//   mpirun -np 16 infraplan-calibrate comm --out cluster.json
//   srun --mpi=pmix -N 2 --ntasks-per-node=8 --gpus-per-task=1 infraplan-calibrate comm --out cluster.json
// Built with NCCL (the CUDA build) it sweeps NCCL on the GPUs; without, only --transport host
// (MPI on host memory: the launcher path without GPUs).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "calib_cluster/comm_driver.hpp"
#include "calib_cluster/host_transport.hpp"
#include "common/error.hpp"
#ifdef INFRAPLAN_HAVE_NCCL_TRANSPORT
#include "calib_kernels/nccl_transport.hpp"
#endif

int main(int argc, char** argv) {
  using namespace infraplan::ccal;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "comm") args.erase(args.begin());
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      std::printf("usage: %s", comm_usage().c_str());
      return 0;
    }
  ClusterCommOptions opt;
  try {
    opt = parse_comm_args(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infraplan-calibrate comm: %s\n", e.what());
    return 2;
  }
  opt.command = "infraplan-calibrate comm";
  for (const auto& a : args) opt.command += " " + a;
  std::unique_ptr<SweepTransport> transport;
  if (opt.transport == "host") {
    transport = std::make_unique<HostTransport>();
  } else {
#ifdef INFRAPLAN_HAVE_NCCL_TRANSPORT
    transport = std::make_unique<infraplan::calib::NcclTransport>();
#else
    std::fprintf(stderr,
                 "infraplan-calibrate comm: this build has no NCCL (built without CUDA or NCCL): only "
                 "--transport host is available here\n");
    return 2;
#endif
  }
  try {
    MpiWorld world(&argc, &argv);
    return run_cluster_comm(world, *transport, opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infraplan-calibrate comm: %s\n", e.what());
    return 1;
  }
}
