#include "calib_cluster/host_transport.hpp"

#include <mpi.h>

#include <chrono>
#include <fstream>

#include "calib_cluster/mpi_impl.hpp"
#include "common/error.hpp"

namespace infraplan::ccal {

using coll::CollectiveOp;

namespace {

void check(int rc, CollectiveOp op) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(std::string("MPI ") + coll::op_name(op) + " failed: " + std::string(msg, std::size_t(len)));
  }
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto c = line.find(':');
      if (c != std::string::npos) return line.substr(line.find_first_not_of(' ', c + 1));
    }
  return "unknown";
}

}  // namespace

HostTransport::HostTransport() = default;
HostTransport::~HostTransport() = default;

TransportDevice HostTransport::open_device(int /*local_rank*/) {
  TransportDevice d;
  d.name = "host CPU: " + cpu_model();
  return d;
}

void HostTransport::init_world(const MpiWorld& world, std::size_t max_bytes) {
  send_.assign(max_bytes / 4, 0.f);
  recv_.assign(max_bytes / 4, 0.f);
  // Random-looking, never zero: the same counter hash on every rank, offset by the rank.
  for (std::size_t i = 0; i < send_.size(); ++i)
    send_[i] = float((i * 2654435761u + std::size_t(world.rank()) * 40503u) % 1000 + 1) * 1e-3f;
  library_ = world.library_version();
}

void HostTransport::begin_phase(const MpiComm* group, int, int) { group_ = group; }

void HostTransport::end_phase() { group_ = nullptr; }

std::string HostTransport::library() const { return library_; }

void HostTransport::call(CollectiveOp op, std::size_t bytes) {
  MPI_Comm c = group_->impl().comm;
  const int n = group_->size(), me = group_->rank();
  const int count = int(bytes / 4);
  float* s = send_.data();
  float* r = recv_.data();
  switch (op) {
    case CollectiveOp::AllReduce:
      check(MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, c), op);
      break;
    case CollectiveOp::AllGather:
      check(MPI_Allgather(s, count / n, MPI_FLOAT, r, count / n, MPI_FLOAT, c), op);
      break;
    case CollectiveOp::ReduceScatter:
      check(MPI_Reduce_scatter_block(s, r, count / n, MPI_FLOAT, MPI_SUM, c), op);
      break;
    case CollectiveOp::AllToAll:
      check(MPI_Alltoall(s, count / n, MPI_FLOAT, r, count / n, MPI_FLOAT, c), op);
      break;
    case CollectiveOp::Broadcast:
      check(MPI_Bcast(me == 0 ? s : r, count, MPI_FLOAT, 0, c), op);
      break;
    case CollectiveOp::Reduce:
      check(MPI_Reduce(s, r, count, MPI_FLOAT, MPI_SUM, 0, c), op);
      break;
    case CollectiveOp::SendRecv:
      check(MPI_Sendrecv(s, count, MPI_FLOAT, (me + 1) % n, 0, r, count, MPI_FLOAT, (me + n - 1) % n, 0, c,
                         MPI_STATUS_IGNORE),
            op);
      break;
  }
}

double HostTransport::time_op(CollectiveOp op, std::size_t bytes, int warmup, int iters,
                              double /*timeout_s*/) {
  if (!group_) throw Error("host transport: time_op outside a group");
  if (bytes > send_.size() * 4)
    throw Error("host transport: " + std::to_string(bytes) + " B exceeds the buffers");
  for (int i = 0; i < warmup; ++i) call(op, bytes);
  group_->barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) call(op, bytes);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
}

}  // namespace infraplan::ccal
