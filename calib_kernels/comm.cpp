#include "calib_kernels/comm.hpp"

#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

using json = nlohmann::ordered_json;

void nccl_check(ncclResult_t r, const char* call, int line) {
  if (r != ncclSuccess)
    throw CudaError(std::string(call) + " failed at comm.cpp:" + std::to_string(line) + ": " +
                    ncclGetErrorString(r));
}
#define CALIB_NCCL(call) nccl_check((call), #call, __LINE__)

enum class Op { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, SendRecv };
const char* op_name(Op o) {
  switch (o) {
    case Op::AllReduce:
      return "all_reduce";
    case Op::AllGather:
      return "all_gather";
    case Op::ReduceScatter:
      return "reduce_scatter";
    case Op::AllToAll:
      return "alltoall";
    case Op::Broadcast:
      return "broadcast";
    case Op::SendRecv:
      return "sendrecv";
  }
  return "?";
}
/// nccl-tests busbw factor.
double bus_factor(Op o, int n) {
  switch (o) {
    case Op::AllReduce:
      return 2.0 * (n - 1) / n;
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AllToAll:
      return double(n - 1) / n;
    case Op::Broadcast:
    case Op::SendRecv:
      return 1.0;
  }
  return 1;
}

struct Rank {
  int dev = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

/// Enqueues one op of `bytes` (nccl-tests "size": the total buffer for gather/scatter/alltoall).
void enqueue(Op op, std::vector<Rank>& ranks, std::size_t bytes) {
  int n = int(ranks.size());
  std::size_t count = bytes / 4;
  CALIB_NCCL(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    switch (op) {
      case Op::AllReduce:
        CALIB_NCCL(ncclAllReduce(k.send, k.recv, count, ncclFloat, ncclSum, k.comm, k.stream));
        break;
      case Op::AllGather:
        CALIB_NCCL(ncclAllGather(k.send, k.recv, count / n, ncclFloat, k.comm, k.stream));
        break;
      case Op::ReduceScatter:
        CALIB_NCCL(ncclReduceScatter(k.send, k.recv, count / n, ncclFloat, ncclSum, k.comm, k.stream));
        break;
      case Op::AllToAll:
        for (int p = 0; p < n; ++p) {
          CALIB_NCCL(ncclSend(k.send + p * (count / n), count / n, ncclFloat, p, k.comm, k.stream));
          CALIB_NCCL(ncclRecv(k.recv + p * (count / n), count / n, ncclFloat, p, k.comm, k.stream));
        }
        break;
      case Op::Broadcast:
        CALIB_NCCL(ncclBroadcast(k.send, k.recv, count, ncclFloat, 0, k.comm, k.stream));
        break;
      case Op::SendRecv:
        CALIB_NCCL(ncclSend(k.send, count, ncclFloat, (r + 1) % n, k.comm, k.stream));
        CALIB_NCCL(ncclRecv(k.recv, count, ncclFloat, (r + n - 1) % n, k.comm, k.stream));
        break;
    }
  }
  CALIB_NCCL(ncclGroupEnd());
}

void sync_all(std::vector<Rank>& ranks) {
  for (auto& k : ranks) {
    CALIB_CUDA(cudaSetDevice(k.dev));
    CALIB_CUDA(cudaStreamSynchronize(k.stream));
  }
}

}  // namespace

json run_comm_sweeps(const CommOptions& opt) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  json out;
  int ver = 0;
  CALIB_NCCL(ncclGetVersion(&ver));
  out["nccl_version"] = ver;
  out["env"] = {{"NCCL_NVLS_ENABLE", "0"}};
  json notes = json::array();
  int ndev = 0;
  CALIB_CUDA(cudaGetDeviceCount(&ndev));
  out["gpus"] = ndev;
  if (ndev > 0) {
    cudaDeviceProp prop{};
    CALIB_CUDA(cudaGetDeviceProperties(&prop, 0));
    out["device"] = prop.name;  // which GPU model the sweep measured (checked when merged)
  }

  if (opt.try_multi_rank_one_gpu) {
    std::vector<ncclComm_t> c2(2);
    int devs[2] = {0, 0};
    ncclResult_t r = ncclCommInitAll(c2.data(), 2, devs);
    std::string msg = std::string("ncclCommInitAll with 2 ranks on GPU 0: ") +
                      (r == ncclSuccess ? "accepted" : std::string("refused: ") + ncclGetErrorString(r));
    if (r == ncclSuccess)
      for (auto c : c2) ncclCommDestroy(c);
    notes.push_back(msg);
    std::printf("# %s\n", msg.c_str());
  }

  std::vector<int> devlist(ndev);
  for (int i = 0; i < ndev; ++i) devlist[i] = i;
  std::vector<ncclComm_t> comms(ndev);
  CALIB_NCCL(ncclCommInitAll(comms.data(), ndev, devlist.data()));
  std::size_t max_bytes = opt.quick ? (std::size_t(1) << 30) : (std::size_t(4) << 30);
  std::vector<Rank> ranks(ndev);
  for (int r = 0; r < ndev; ++r) {
    ranks[r].dev = r;
    ranks[r].comm = comms[r];
    CALIB_CUDA(cudaSetDevice(r));
    CALIB_CUDA(cudaStreamCreateWithFlags(&ranks[r].stream, cudaStreamNonBlocking));
    CALIB_CUDA(cudaMalloc(&ranks[r].send, max_bytes));
    CALIB_CUDA(cudaMalloc(&ranks[r].recv, max_bytes));
    fill_random(ranks[r].send, max_bytes / 4, Elem::F32, 7 + r, 1.f, ranks[r].stream);
  }
  sync_all(ranks);

  json rows = json::array(), fits = json::array();
  int n = ndev;
  for (Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::AllToAll, Op::Broadcast, Op::SendRecv}) {
    std::printf("#\n# %s, %d rank(s), float, out-of-place (nccl-tests definitions)\n", op_name(op), n);
    std::printf("# %14s %12s %12s %10s %10s\n", "size(B)", "count", "time(us)", "algbw", "busbw");
    double small_t = 1e30, big_bytes = 0, big_t = 0;
    for (std::size_t bytes = 8; bytes <= max_bytes; bytes *= opt.quick ? 8 : 2) {
      std::size_t b = bytes / (4 * n) * (4 * n);  // divisible by ranks
      if (b == 0) continue;
      int iters = b >= (std::size_t(256) << 20) ? 5 : 20;
      for (int w = 0; w < 2; ++w) enqueue(op, ranks, b);
      sync_all(ranks);
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) enqueue(op, ranks, b);
      sync_all(ranks);
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
      double algbw = double(b) / t / 1e9, busbw = algbw * bus_factor(op, n);
      std::printf("  %14zu %12zu %12.2f %10.2f %10.2f\n", b, b / 4, t * 1e6, algbw, busbw);
      rows.push_back({{"op", op_name(op)},
                      {"ranks", n},
                      {"bytes", b},
                      {"time_us", t * 1e6},
                      {"algbw_GBps", algbw},
                      {"busbw_GBps", busbw}});
      if (b <= 65536) small_t = std::min(small_t, t);
      big_bytes = double(b);
      big_t = t;
    }
    // time = latency + bytes / bw: latency from the small sizes, bw from the largest.
    double bw = big_bytes / std::max(big_t - small_t, 1e-9) / 1e9;
    fits.push_back({{"op", op_name(op)},
                    {"ranks", n},
                    {"scope", "intra"},
                    {"latency_us", small_t * 1e6},
                    {"bw_GBps", bw},
                    {"busbw_GBps", bw * bus_factor(op, n)}});
    std::fflush(stdout);
  }
  for (auto& k : ranks) {
    cudaSetDevice(k.dev);
    cudaFree(k.send);
    cudaFree(k.recv);
    cudaStreamDestroy(k.stream);
    ncclCommDestroy(k.comm);
  }
  if (n == 1)
    notes.push_back(
        "one GPU: collectives are local copies/reductions (busbw factor 0 for all_reduce, all_gather, "
        "reduce_scatter, alltoall); the fits give NCCL's per-call latency and local bandwidth only");
  out["rows"] = rows;
  out["fits"] = fits;
  out["notes"] = notes;
  return out;
}

}  // namespace infraplan::calib
