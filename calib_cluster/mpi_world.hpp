#pragma once
// A thin MPI layer for the multi-process calibration: the world (init/finalize), byte-string
// broadcast and gathers for the bootstrap (NCCL unique id, rank facts, results), an agreement
// step after every stage, and communicators for the groups of a sweep phase. MPI's own headers
// stay inside calib_cluster/*.cpp.
#include <memory>
#include <string>
#include <vector>

namespace infraplan::ccal {

class MpiComm;

class MpiWorld {
 public:
  /// MPI_Init (a plain start becomes a world of one: OpenMPI's singleton mode).
  MpiWorld(int* argc, char*** argv);
  /// MPI_Finalize.
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  void barrier() const;
  /// `data` of `root` on every rank.
  std::string broadcast(const std::string& data, int root) const;
  /// Every rank's `data`, indexed by rank, on every rank.
  std::vector<std::string> allgather(const std::string& data) const;
  /// Every rank's `data` on `root` (indexed by rank); empty elsewhere.
  std::vector<std::string> gather(const std::string& data, int root) const;
  /// Largest `value` over the ranks.
  int allreduce_max(int value) const;
  /// This rank among the processes that share its memory (its node), from MPI_COMM_TYPE_SHARED.
  int node_local_rank() const;
  /// Communicator of the ranks that pass the same `color` >= 0, ordered by `key`; nullptr for
  /// color < 0. Collective over the world.
  std::unique_ptr<MpiComm> split(int color, int key) const;
  /// MPI_Abort: ends every rank of the job with `code`.
  [[noreturn]] void abort(int code) const;
  /// The MPI library's version string.
  std::string library_version() const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

/// A communicator of some ranks (a sweep group). Owned; freed on destruction.
class MpiComm {
 public:
  struct Impl;
  explicit MpiComm(std::unique_ptr<Impl> impl);
  ~MpiComm();
  int rank() const;
  int size() const;
  void barrier() const;
  /// Sum of `value` over the group.
  double allreduce_sum(double value) const;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace infraplan::ccal
