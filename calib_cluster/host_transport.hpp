#pragma once
// The host transport: the sweep's collectives as MPI calls on host memory (MPI_Allreduce,
// MPI_Allgather, MPI_Reduce_scatter_block, MPI_Alltoall, MPI_Bcast, MPI_Sendrecv around the
// group). It needs no GPU, so the launcher path — bootstrap, rank facts, phases, agreement,
// gathering and the profile — runs on any machine with MPI; the numbers describe MPI over the
// hosts' interconnect, not NCCL.
#include <memory>
#include <vector>

#include "calib_cluster/sweep_transport.hpp"

namespace infraplan::ccal {

class HostTransport final : public SweepTransport {
 public:
  HostTransport();
  ~HostTransport() override;
  std::string name() const override { return "host-mpi"; }
  TransportDevice open_device(int local_rank) override;
  void init_world(const MpiWorld& world, std::size_t max_bytes) override;
  void begin_phase(const MpiComm* group, int color, int key) override;
  double time_op(coll::CollectiveOp op, std::size_t bytes, int warmup, int iters, double timeout_s) override;
  void end_phase() override;
  void abort() noexcept override {}
  std::string library() const override;

 private:
  void call(coll::CollectiveOp op, std::size_t bytes);
  std::vector<float> send_, recv_;
  const MpiComm* group_ = nullptr;
  std::string library_;
};

}  // namespace infraplan::ccal
