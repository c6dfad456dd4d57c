// Memory-bound transformer kernels: RMSNorm, fused SwiGLU, rotary embedding (bf16). Each is a
// persistent grid of (SMs × resident blocks) that strides over the work with 16-byte streaming
// accesses, several independent loads in flight per thread: no block is launched per row, and
// memory-level parallelism (what these kernels lacked, at 59-75% of copy) stays high.
#include <algorithm>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

struct alignas(16) Vec8 {
  __nv_bfloat162 h[4];
};

__device__ __forceinline__ Vec8 ld_stream(const Vec8* p) {
  Vec8 v;
  *reinterpret_cast<int4*>(&v) = __ldcs(reinterpret_cast<const int4*>(p));
  return v;
}
__device__ __forceinline__ void st_stream(Vec8* p, const Vec8& v) {
  __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
}

// TPR threads per row (a warp or more), each holding CH 16-byte chunks of the row in registers;
// a block of max(256, TPR) threads holds 256 / TPR rows. The next row's loads are issued before
// this row is reduced and written, and the weights stay in registers for the whole kernel.
template <int CH, int TPR, int MINB>
__global__ void __launch_bounds__(TPR > 256 ? TPR : 256, MINB)
    rmsnorm_rows_k(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y, int rows,
                   int hidden, float eps) {
  constexpr int BT = TPR > 256 ? TPR : 256, RPB = BT / TPR, WPR = TPR / 32;
  int tid = threadIdx.x, grp = tid / TPR, lt = tid % TPR, chunks = hidden / 8;
  Vec8 wv[CH], cur[CH];
#pragma unroll
  for (int c = 0; c < CH; ++c)
    if (lt + c * TPR < chunks) wv[c] = reinterpret_cast<const Vec8*>(w)[lt + c * TPR];
  int groups = (rows + RPB - 1) / RPB;
  auto load = [&](Vec8(&v)[CH], int g) {
    int r = g * RPB + grp;
    if (g >= groups || r >= rows) return;
    const Vec8* xr = reinterpret_cast<const Vec8*>(x + std::size_t(r) * hidden);
#pragma unroll
    for (int c = 0; c < CH; ++c)
      if (lt + c * TPR < chunks) v[c] = ld_stream(xr + lt + c * TPR);
  };
  __shared__ float red[2][BT / 32];
  int parity = 0;
  load(cur, blockIdx.x);
  // The trip count is uniform across the block (the barrier below needs every thread).
  for (int g = blockIdx.x; g < groups; g += gridDim.x) {
    Vec8 nxt[CH];
    load(nxt, g + gridDim.x);
    float ss = 0;
#pragma unroll
    for (int c = 0; c < CH; ++c)
      if (lt + c * TPR < chunks)
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          float2 f = __bfloat1622float2(cur[c].h[k]);
          ss = fmaf(f.x, f.x, fmaf(f.y, f.y, ss));
        }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if (WPR > 1) {
      // Two slots alternate, so one barrier per row suffices.
      if ((tid & 31) == 0) red[parity][tid >> 5] = ss;
      __syncthreads();
      ss = 0;
#pragma unroll
      for (int i = 0; i < WPR; ++i) ss += red[parity][grp * WPR + i];
      parity ^= 1;
    }
    float r = rsqrtf(ss / float(hidden) + eps);
    int row = g * RPB + grp;
    if (row < rows) {
      Vec8* yr = reinterpret_cast<Vec8*>(y + std::size_t(row) * hidden);
#pragma unroll
      for (int c = 0; c < CH; ++c)
        if (lt + c * TPR < chunks) {
          Vec8 o;
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            float2 f = __bfloat1622float2(cur[c].h[k]), gw = __bfloat1622float2(wv[c].h[k]);
            o.h[k] = __floats2bfloat162_rn(f.x * r * gw.x, f.y * r * gw.y);
          }
          st_stream(yr + lt + c * TPR, o);
        }
    }
#pragma unroll
    for (int c = 0; c < CH; ++c) cur[c] = nxt[c];
  }
}

// Flat chunk index f = row · chunks + c over the whole tensor; U chunks (2U 16-byte loads) per
// thread are loaded before any is used. U = 2 and 4 measured within 2% of each other on H200.
constexpr int kSwigluUnroll = 2;
template <int U>
__global__ void __launch_bounds__(256) swiglu_flat_k(const bf16* __restrict__ gu, bf16* __restrict__ out,
                                                     unsigned total, unsigned chunks, int ffn) {
  unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += U * stride) {
    Vec8 g[U], u[U];
    std::size_t oo[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      unsigned f = i + k * stride;
      if (f < total) {
        unsigned r = f / chunks, c = f - r * chunks;
        const Vec8* p = reinterpret_cast<const Vec8*>(gu + std::size_t(r) * 2 * ffn) + c;
        g[k] = ld_stream(p);
        u[k] = ld_stream(p + chunks);
        oo[k] = std::size_t(r) * chunks + c;
      }
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (i + k * stride >= total) break;
      Vec8 o;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float2 gf = __bfloat1622float2(g[k].h[e]), uf = __bfloat1622float2(u[k].h[e]);
        o.h[e] = __floats2bfloat162_rn(__fdividef(gf.x, 1.f + __expf(-gf.x)) * uf.x,
                                       __fdividef(gf.y, 1.f + __expf(-gf.y)) * uf.y);
      }
      st_stream(reinterpret_cast<Vec8*>(out) + oo[k], o);
    }
  }
}

// One warp task = one token and HP × (32 / groups) of its heads, groups = head_dim / 16 lanes per
// head (each lane: 8 pairs j, j + d/2). The 8 sines and cosines of a lane serve all HP heads it
// touches, and the 8 frequencies are computed once per thread (a lane keeps its pair group).
// HP = 2 measured 2-7% faster than 4 on H200 (more warps resident at fewer registers).
constexpr int kRopeHeads = 2;
template <int HP>
__global__ void __launch_bounds__(256) rope_heads_k(bf16* __restrict__ x, const int* __restrict__ pos,
                                                    int tokens, int heads, int head_dim, float log2_theta) {
  int lane = threadIdx.x & 31, groups = head_dim / 16, per_step = 32 / groups;
  int g = lane % groups, hsub = lane / groups, hpw = HP * per_step;
  bool active = hsub < per_step;
  int half = head_dim / 2;
  float freq[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) freq[k] = exp2f(-log2_theta * float(2 * (g * 8 + k)) / float(head_dim));
  long blocks_per_token = (heads + hpw - 1) / hpw, tasks = long(tokens) * blocks_per_token;
  long warp = (long(blockIdx.x) * blockDim.x + threadIdx.x) / 32, nwarps = long(gridDim.x) * blockDim.x / 32;
  for (long task = warp; task < tasks; task += nwarps) {
    int t = int(task / blocks_per_token), h0 = int(task % blocks_per_token) * hpw + hsub;
    Vec8 a[HP], b[HP];
    bf16* base[HP];
#pragma unroll
    for (int k = 0; k < HP; ++k) {
      int h = h0 + k * per_step;
      base[k] = x + (std::size_t(t) * heads + h) * head_dim + g * 8;
      if (active && h < heads) {
        a[k] = ld_stream(reinterpret_cast<const Vec8*>(base[k]));
        b[k] = ld_stream(reinterpret_cast<const Vec8*>(base[k] + half));
      }
    }
    float p = float(pos[t]), sn[8], cs[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) __sincosf(p * freq[k], &sn[k], &cs[k]);
#pragma unroll
    for (int k = 0; k < HP; ++k) {
      if (!active || h0 + k * per_step >= heads) continue;
      Vec8 oa, ob;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float2 af = __bfloat1622float2(a[k].h[e]), bf = __bfloat1622float2(b[k].h[e]);
        float c0 = cs[2 * e], s0 = sn[2 * e], c1 = cs[2 * e + 1], s1 = sn[2 * e + 1];
        oa.h[e] = __floats2bfloat162_rn(af.x * c0 - bf.x * s0, af.y * c1 - bf.y * s1);
        ob.h[e] = __floats2bfloat162_rn(bf.x * c0 + af.x * s0, bf.y * c1 + af.y * s1);
      }
      st_stream(reinterpret_cast<Vec8*>(base[k]), oa);
      st_stream(reinterpret_cast<Vec8*>(base[k] + half), ob);
    }
  }
}

int sm_count() {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  return sms;
}

/// Blocks of `threads` that fill every SM once with `kern` resident, capped by the work.
template <class K>
unsigned persistent_grid(K kern, int threads, long work_blocks) {
  int per_sm = 0;
  CALIB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, threads, 0));
  long cap = long(sm_count()) * std::max(per_sm, 1);
  return unsigned(std::clamp<long>(work_blocks, 1, cap));
}

template <int CH, int TPR, int MINB = 1>
void launch_rmsnorm(const bf16* x, const bf16* w, bf16* y, int rows, int hidden, float eps,
                    cudaStream_t stream) {
  constexpr int BT = TPR > 256 ? TPR : 256;
  auto kern = rmsnorm_rows_k<CH, TPR, MINB>;
  long groups = (rows + BT / TPR - 1) / (BT / TPR);
  kern<<<persistent_grid(kern, BT, groups), BT, 0, stream>>>(x, w, y, rows, hidden, eps);
  CALIB_LAUNCH();
}

}  // namespace

void rmsnorm(const bf16* x, const bf16* w, bf16* y, int rows, int hidden, float eps, cudaStream_t stream) {
  if (hidden % 8 != 0 || hidden > 16384)
    throw CudaError("rmsnorm: hidden must be a multiple of 8 and at most 16384");
  // Up to hidden 2048 a warp per row with up to 8 chunks (16-byte loads) per thread. Wider rows,
  // from the configuration sweep on the H200 (`infraplan-calibrate --only rmsnorm`, three passes,
  // % of copy; docs/data/calib/h200_rmsnorm_configs.txt): hidden ≤ 4096 four chunks × 128 threads at
  // two blocks per SM (4096×4096: 77 against 73 for eight × 64); ≤ 8192 two chunks × 512 threads
  // (16384×8192: 85–87 against 76–83 for eight × 128; 8192×5120: 80 against 75); wider, eight
  // chunks × 256 threads (16384 columns: 83, the only configuration that fits).
  int chunks = hidden / 8;
  if (chunks <= 32)
    launch_rmsnorm<1, 32>(x, w, y, rows, hidden, eps, stream);
  else if (chunks <= 64)
    launch_rmsnorm<2, 32>(x, w, y, rows, hidden, eps, stream);
  else if (chunks <= 128)
    launch_rmsnorm<4, 32>(x, w, y, rows, hidden, eps, stream);
  else if (chunks <= 256)
    launch_rmsnorm<8, 32>(x, w, y, rows, hidden, eps, stream);
  else if (chunks <= 512)
    launch_rmsnorm<4, 128, 2>(x, w, y, rows, hidden, eps, stream);
  else if (chunks <= 1024)
    launch_rmsnorm<2, 512>(x, w, y, rows, hidden, eps, stream);
  else
    launch_rmsnorm<8, 256>(x, w, y, rows, hidden, eps, stream);
}

namespace {
struct RmsnormConfig {
  const char* name;
  int ch, tpr, minb;
  void (*launch)(const bf16*, const bf16*, bf16*, int, int, float, cudaStream_t);
};
// Configurations for rows wider than a warp's 8 chunks (hidden > 2048), for the tuning sweep.
const RmsnormConfig kRmsnormConfigs[] = {
    {"8 chunks x 64 threads", 8, 64, 1, launch_rmsnorm<8, 64>},
    {"8 chunks x 128 threads", 8, 128, 1, launch_rmsnorm<8, 128>},
    {"8 chunks x 128 threads, 2 blocks/SM", 8, 128, 2, launch_rmsnorm<8, 128, 2>},
    {"4 chunks x 256 threads", 4, 256, 1, launch_rmsnorm<4, 256>},
    {"4 chunks x 256 threads, 2 blocks/SM", 4, 256, 2, launch_rmsnorm<4, 256, 2>},
    {"4 chunks x 128 threads, 2 blocks/SM", 4, 128, 2, launch_rmsnorm<4, 128, 2>},
    {"2 chunks x 512 threads", 2, 512, 1, launch_rmsnorm<2, 512>},
    {"8 chunks x 256 threads", 8, 256, 1, launch_rmsnorm<8, 256>},
};
}  // namespace

int rmsnorm_config_count() { return int(sizeof kRmsnormConfigs / sizeof kRmsnormConfigs[0]); }
const char* rmsnorm_config_name(int config) { return kRmsnormConfigs[config].name; }
bool rmsnorm_config(int config, const bf16* x, const bf16* w, bf16* y, int rows, int hidden, float eps,
                    cudaStream_t stream) {
  const RmsnormConfig& c = kRmsnormConfigs[config];
  if (hidden % 8 != 0 || c.ch * c.tpr * 8 < hidden || (c.ch - 1) * c.tpr * 8 >= hidden) return false;
  c.launch(x, w, y, rows, hidden, eps, stream);
  return true;
}

void swiglu(const bf16* gu, bf16* out, int rows, int ffn, cudaStream_t stream) {
  if (ffn % 8 != 0) throw CudaError("swiglu: ffn must be a multiple of 8");
  std::size_t total = std::size_t(rows) * (ffn / 8);
  auto kern = swiglu_flat_k<kSwigluUnroll>;
  unsigned grid = persistent_grid(kern, 256, long((total + 255) / 256));
  if (total + std::size_t(kSwigluUnroll) * grid * 256 >= (std::size_t(1) << 32))
    throw CudaError("swiglu: rows × ffn / 8 must be below 2^32 minus one grid");
  kern<<<grid, 256, 0, stream>>>(gu, out, unsigned(total), unsigned(ffn / 8), ffn);
  CALIB_LAUNCH();
}

void rope(bf16* x, const int* pos, int tokens, int heads, int head_dim, float theta, cudaStream_t stream) {
  if (head_dim % 16 != 0 || head_dim > 512)
    throw CudaError("rope: head_dim must be a multiple of 16 and at most 512");
  auto kern = rope_heads_k<kRopeHeads>;
  int per_warp = kRopeHeads * (32 / (head_dim / 16));
  long tasks = long(tokens) * ((heads + per_warp - 1) / per_warp);
  kern<<<persistent_grid(kern, 256, (tasks + 7) / 8), 256, 0, stream>>>(x, pos, tokens, heads, head_dim,
                                                                        log2f(theta));
  CALIB_LAUNCH();
}

}  // namespace infraplan::calib
