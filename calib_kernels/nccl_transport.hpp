#pragma once
// The NCCL transport of the multi-process calibration (calib_cluster/comm_driver.hpp): one
// process per GPU, the world communicator from rank 0's unique id broadcast over MPI
// (ncclCommInitRank), each phase's groups split from it (ncclCommSplit), each call size timed
// like nccl-tests (warm-up, a barrier of the group, back-to-back calls, the host clock). A call
// that does not finish within the timeout fails the rank and the communicators are aborted, so a
// rank waiting on a failed peer reports instead of hanging.
#include <memory>

#include "calib_cluster/sweep_transport.hpp"

namespace infraplan::calib {

class NcclTransport final : public ccal::SweepTransport {
 public:
  NcclTransport();
  ~NcclTransport() override;
  std::string name() const override { return "nccl"; }
  ccal::TransportDevice open_device(int local_rank) override;
  void init_world(const ccal::MpiWorld& world, std::size_t max_bytes) override;
  void begin_phase(const ccal::MpiComm* group, int color, int key) override;
  double time_op(coll::CollectiveOp op, std::size_t bytes, int warmup, int iters, double timeout_s) override;
  void end_phase() override;
  void abort() noexcept override;
  double library_device_bytes() const override;
  std::string library() const override;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace infraplan::calib
