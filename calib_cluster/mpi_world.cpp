#include "calib_cluster/mpi_world.hpp"

#include <mpi.h>

#include <cstdlib>

#include "calib_cluster/mpi_impl.hpp"
#include "common/error.hpp"

namespace infraplan::ccal {

namespace {

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(std::string(call) + " failed: " + std::string(msg, std::size_t(len)));
  }
}

}  // namespace

MpiWorld::MpiWorld(int* argc, char*** argv) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) check(MPI_Init(argc, argv), "MPI_Init");
  // Errors come back as codes (turned into exceptions naming the call), not as an abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiWorld::~MpiWorld() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiWorld::barrier() const { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

std::string MpiWorld::broadcast(const std::string& data, int root) const {
  unsigned long long n = data.size();
  check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = rank_ == root ? data : std::string(std::size_t(n), '\0');
  if (n) check(MPI_Bcast(out.data(), int(n), MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

std::vector<std::string> MpiWorld::allgather(const std::string& data) const {
  int n = int(data.size());
  std::vector<int> lens(static_cast<std::size_t>(size_)), offs(static_cast<std::size_t>(size_));
  check(MPI_Allgather(&n, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < size_; ++r) offs[std::size_t(r)] = total, total += lens[std::size_t(r)];
  std::string all(std::size_t(total), '\0');
  check(MPI_Allgatherv(data.data(), n, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR,
                       MPI_COMM_WORLD),
        "MPI_Allgatherv");
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r)
    out.push_back(all.substr(std::size_t(offs[std::size_t(r)]), std::size_t(lens[std::size_t(r)])));
  return out;
}

std::vector<std::string> MpiWorld::gather(const std::string& data, int root) const {
  int n = int(data.size());
  std::vector<int> lens(static_cast<std::size_t>(size_)), offs(static_cast<std::size_t>(size_));
  check(MPI_Gather(&n, 1, MPI_INT, lens.data(), 1, MPI_INT, root, MPI_COMM_WORLD), "MPI_Gather");
  int total = 0;
  if (rank_ == root)
    for (int r = 0; r < size_; ++r) offs[std::size_t(r)] = total, total += lens[std::size_t(r)];
  std::string all(std::size_t(total), '\0');
  check(MPI_Gatherv(data.data(), n, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, root,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> out;
  if (rank_ == root)
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(std::size_t(offs[std::size_t(r)]), std::size_t(lens[std::size_t(r)])));
  return out;
}

int MpiWorld::allreduce_max(int value) const {
  int out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

int MpiWorld::node_local_rank() const {
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

std::unique_ptr<MpiComm> MpiWorld::split(int color, int key) const {
  MPI_Comm c = MPI_COMM_NULL;
  check(MPI_Comm_split(MPI_COMM_WORLD, color >= 0 ? color : MPI_UNDEFINED, key, &c), "MPI_Comm_split");
  if (c == MPI_COMM_NULL) return nullptr;
  auto impl = std::make_unique<MpiComm::Impl>();
  impl->comm = c;
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c, &impl->rank);
  MPI_Comm_size(c, &impl->size);
  return std::make_unique<MpiComm>(std::move(impl));
}

void MpiWorld::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::string MpiWorld::library_version() const {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, std::size_t(len));
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ',' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

MpiComm::MpiComm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MpiComm::~MpiComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && impl_->comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->comm);
}

int MpiComm::rank() const { return impl_->rank; }
int MpiComm::size() const { return impl_->size; }
void MpiComm::barrier() const { check(MPI_Barrier(impl_->comm), "MPI_Barrier"); }

double MpiComm::allreduce_sum(double value) const {
  double out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_SUM, impl_->comm), "MPI_Allreduce");
  return out;
}

}  // namespace infraplan::ccal
