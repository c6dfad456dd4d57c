#pragma once
// What moves the bytes of a calibration sweep: NCCL on this rank's GPU (calib_kernels/
// nccl_transport.hpp, the calibration proper) or MPI on host memory (host_transport.hpp: the same
// bootstrap, phases, gathering and profile without a GPU — what the tests run on CPU machines).
// The driver (comm_driver.hpp) calls these in the same order on every rank; calls marked
// collective must be made by every rank of the world.
#include <cstddef>
#include <functional>
#include <string>

#include "collectives/collective.hpp"

namespace infraplan::ccal {

class MpiWorld;
class MpiComm;

/// The device a rank drives.
struct TransportDevice {
  int index = -1;           ///< GPU index (-1: none)
  std::string name;         ///< GPU model as the driver names it (host transport: "host CPU: <model>")
  std::string bus_id;       ///< PCI bus id ("" when none)
  double memory_bytes = 0;  ///< device memory, bytes
  std::string versions;     ///< driver / runtime / library versions, as text
};

class SweepTransport {
 public:
  virtual ~SweepTransport() = default;
  /// "nccl" or "host-mpi".
  virtual std::string name() const = 0;
  /// Opens this rank's device from its local rank (not collective). Throws infraplan::Error
  /// naming the local rank and what is visible when there is no such device.
  virtual TransportDevice open_device(int local_rank) = 0;
  /// Collective: sets up the world and buffers of `max_bytes` per direction (NCCL: rank 0's
  /// unique id broadcast through `world`, then ncclCommInitRank).
  virtual void init_world(const MpiWorld& world, std::size_t max_bytes) = 0;
  /// Collective: enters a phase. `group` is this rank's group communicator (nullptr: the rank
  /// sits the phase out); `color`/`key` are the group index and this rank's place in it.
  virtual void begin_phase(const MpiComm* group, int color, int key) = 0;
  /// Seconds per call of `op` of `bytes` (nccl-tests size) on this rank: `warmup` calls, a
  /// barrier of the group, then `iters` calls back to back timed by the host clock. Throws when a
  /// call fails or does not finish within `timeout_s` seconds.
  virtual double time_op(coll::CollectiveOp op, std::size_t bytes, int warmup, int iters,
                         double timeout_s) = 0;
  /// Collective: leaves the phase (NCCL: frees the group's communicator).
  virtual void end_phase() = 0;
  /// After a failure: releases what it holds without talking to other ranks (NCCL: aborts the
  /// communicators, so that a rank waiting on a failed peer does not hang).
  virtual void abort() noexcept = 0;
  /// Device memory the communication library holds on this rank now, bytes: what the device has
  /// in use beyond what it had before init_world, less the sweep's own send and receive buffers
  /// (NCCL: cudaMemGetInfo; its communicators, channels, protocol buffers and the connections
  /// the calls so far opened). -1 when unknown (the host transport has no device).
  virtual double library_device_bytes() const { return -1; }
  /// Library version for the profile, e.g. "NCCL 2.28.3".
  virtual std::string library() const = 0;
};

}  // namespace infraplan::ccal
