#include "calib_kernels/nccl_transport.hpp"

#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "calib_cluster/mpi_world.hpp"
#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"
#include "common/error.hpp"

namespace infraplan::calib {

using coll::CollectiveOp;

namespace {

void nccl_check(ncclResult_t r, const char* call) {
  if (r != ncclSuccess) throw Error(std::string(call) + " failed: " + ncclGetErrorString(r));
}
#define NT_NCCL(call) nccl_check((call), #call)

}  // namespace

struct NcclTransport::State {
  int device = -1;
  ncclComm_t world = nullptr;
  ncclComm_t group = nullptr;
  const ccal::MpiComm* group_mpi = nullptr;
  std::optional<DeviceBuffer<float>> send, recv;
  std::optional<Stream> stream;
  std::size_t max_bytes = 0;
  double used_before = -1;  ///< device memory in use before the world was set up
  double own_bytes = 0;     ///< the sweep's send/receive buffers, as the device counts them
  bool aborted = false;
};

namespace {

/// Device memory in use on the current device (total − free), bytes; -1 when unknown.
double device_used_bytes() {
  std::size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return -1;
  return double(total_b) - double(free_b);
}

}  // namespace

NcclTransport::NcclTransport() : s_(std::make_unique<State>()) {}

NcclTransport::~NcclTransport() {
  if (s_->aborted) return;
  if (s_->group) ncclCommDestroy(s_->group);
  if (s_->world) ncclCommDestroy(s_->world);
}

ccal::TransportDevice NcclTransport::open_device(int local_rank) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  const char* vis = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string visible = std::string(" (CUDA_VISIBLE_DEVICES=") + (vis ? vis : "unset") + ")";
  if (e != cudaSuccess || count == 0)
    throw Error(std::string("no CUDA device visible") + visible + (e != cudaSuccess ? ": " : "") +
                (e != cudaSuccess ? cudaGetErrorString(e) : "") +
                "; without GPUs, --transport host exercises the launcher path");
  // One GPU visible: the launcher bound one GPU to this rank (srun --gpus-per-task=1). Several:
  // the local rank picks one.
  const int dev = count == 1 ? 0 : local_rank;
  if (dev >= count)
    throw Error("local rank " + std::to_string(local_rank) + " has no GPU: " + std::to_string(count) +
                " visible" + visible + "; start at most one process per GPU");
  CALIB_CUDA(cudaSetDevice(dev));
  cudaDeviceProp p{};
  CALIB_CUDA(cudaGetDeviceProperties(&p, dev));
  char bus[64] = {0};
  CALIB_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
  int driver = 0, runtime = 0, nccl = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  ncclGetVersion(&nccl);
  s_->device = dev;
  ccal::TransportDevice d;
  d.index = dev;
  d.name = p.name;
  d.bus_id = bus;
  d.memory_bytes = double(p.totalGlobalMem);
  d.versions = "CUDA driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime) + ", NCCL " +
               std::to_string(nccl);
  return d;
}

void NcclTransport::init_world(const ccal::MpiWorld& world, std::size_t max_bytes) {
  // NVLink multicast stays off unless the environment says otherwise (it can take shared
  // machines' GPUs out of service); the profile records the setting.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  CALIB_CUDA(cudaSetDevice(s_->device));
  ncclUniqueId id{};
  std::string raw;
  if (world.rank() == 0) {
    NT_NCCL(ncclGetUniqueId(&id));
    raw.assign(reinterpret_cast<const char*>(&id), sizeof id);
  }
  raw = world.broadcast(raw, 0);
  if (raw.size() != sizeof id) throw Error("the NCCL unique id from rank 0 has the wrong size");
  std::memcpy(&id, raw.data(), sizeof id);
  // The sweep's buffers first, so that what the device holds beyond them afterwards is NCCL's.
  CALIB_CUDA(cudaFree(nullptr));
  s_->used_before = device_used_bytes();
  s_->max_bytes = max_bytes;
  s_->stream.emplace();
  s_->send.emplace(max_bytes / 4);
  s_->recv.emplace(max_bytes / 4);
  const double with_buffers = device_used_bytes();
  s_->own_bytes = s_->used_before >= 0 && with_buffers >= 0 ? with_buffers - s_->used_before : 0;
  NT_NCCL(ncclCommInitRank(&s_->world, world.size(), id, world.rank()));
  fill_random(s_->send->get(), max_bytes / 4, Elem::F32, 7 + std::uint64_t(world.rank()), 1.f,
              s_->stream->get());
  CALIB_CUDA(cudaStreamSynchronize(s_->stream->get()));
}

void NcclTransport::begin_phase(const ccal::MpiComm* group, int color, int key) {
  s_->group_mpi = group;
  s_->group = nullptr;
  NT_NCCL(ncclCommSplit(s_->world, color >= 0 ? color : NCCL_SPLIT_NOCOLOR, key, &s_->group, nullptr));
  if (color >= 0 && !s_->group)
    throw Error("ncclCommSplit gave no communicator for group " + std::to_string(color));
}

void NcclTransport::end_phase() {
  if (s_->group) NT_NCCL(ncclCommDestroy(s_->group));
  s_->group = nullptr;
  s_->group_mpi = nullptr;
}

void NcclTransport::abort() noexcept {
  if (s_->aborted) return;
  s_->aborted = true;
  if (s_->group) ncclCommAbort(s_->group);
  if (s_->world) ncclCommAbort(s_->world);
  s_->group = s_->world = nullptr;
}

double NcclTransport::library_device_bytes() const {
  if (s_->used_before < 0 || s_->device < 0) return -1;
  if (cudaSetDevice(s_->device) != cudaSuccess) return -1;
  const double now = device_used_bytes();
  if (now < 0) return -1;
  return std::max(0.0, now - s_->used_before - s_->own_bytes);
}

std::string NcclTransport::library() const {
  int v = 0;
  ncclGetVersion(&v);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

double NcclTransport::time_op(CollectiveOp op, std::size_t bytes, int warmup, int iters, double timeout_s) {
  if (!s_->group || !s_->group_mpi) throw Error("nccl transport: time_op outside a group");
  if (bytes > s_->max_bytes)
    throw Error("nccl transport: " + std::to_string(bytes) + " B exceeds the buffers");
  ncclComm_t c = s_->group;
  const int n = s_->group_mpi->size(), me = s_->group_mpi->rank();
  const std::size_t count = bytes / 4;
  float* snd = s_->send->get();
  float* rcv = s_->recv->get();
  cudaStream_t st = s_->stream->get();
  auto enqueue = [&]() {
    switch (op) {
      case CollectiveOp::AllReduce:
        NT_NCCL(ncclAllReduce(snd, rcv, count, ncclFloat, ncclSum, c, st));
        break;
      case CollectiveOp::AllGather:
        NT_NCCL(ncclAllGather(snd, rcv, count / n, ncclFloat, c, st));
        break;
      case CollectiveOp::ReduceScatter:
        NT_NCCL(ncclReduceScatter(snd, rcv, count / n, ncclFloat, ncclSum, c, st));
        break;
      case CollectiveOp::AllToAll:
        NT_NCCL(ncclGroupStart());
        for (int p = 0; p < n; ++p) {
          NT_NCCL(ncclSend(snd + std::size_t(p) * (count / n), count / n, ncclFloat, p, c, st));
          NT_NCCL(ncclRecv(rcv + std::size_t(p) * (count / n), count / n, ncclFloat, p, c, st));
        }
        NT_NCCL(ncclGroupEnd());
        break;
      case CollectiveOp::Broadcast:
        NT_NCCL(ncclBroadcast(snd, rcv, count, ncclFloat, 0, c, st));
        break;
      case CollectiveOp::Reduce:
        NT_NCCL(ncclReduce(snd, rcv, count, ncclFloat, ncclSum, 0, c, st));
        break;
      case CollectiveOp::SendRecv:
        NT_NCCL(ncclGroupStart());
        NT_NCCL(ncclSend(snd, count, ncclFloat, (me + 1) % n, c, st));
        NT_NCCL(ncclRecv(rcv, count, ncclFloat, (me + n - 1) % n, c, st));
        NT_NCCL(ncclGroupEnd());
        break;
    }
  };
  // Waits for the stream with a deadline; NCCL's asynchronous errors end the wait too.
  auto wait = [&](const char* what) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      const cudaError_t q = cudaStreamQuery(st);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) throw Error(std::string(what) + ": " + cudaGetErrorString(q));
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(c, &async);
      if (async != ncclSuccess && async != ncclInProgress)
        throw Error(std::string(what) + ": NCCL reports " + ncclGetErrorString(async));
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s)
        throw Error(std::string(what) + " did not finish within " + std::to_string(int(timeout_s)) +
                    " s (a peer stopped?)");
      // Spin while the calls may still be short (no sleep inside a timed small call), then back off.
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 0.1)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  };
  for (int i = 0; i < warmup; ++i) enqueue();
  wait("warm-up calls");
  s_->group_mpi->barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) enqueue();
  wait("timed calls");
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
}

}  // namespace infraplan::calib
