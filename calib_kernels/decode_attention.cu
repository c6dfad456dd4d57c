// Paged-KV decode attention (one query token per sequence), GQA, split-K over the context.
// CTA = (split, kv head, sequence), 4 warps. K/V tiles of TILE tokens stream through NS
// shared-memory stages by cp.async (NS - 1 tiles of loads in flight per CTA while one is
// computed), and each warp computes its 16 tokens of a tile as one FlashAttention step on the
// tensor cores (mma.sync): the G query heads sharing the KV head are the rows of a 16-row A operand
// (rows >= G are zero), so the KV bytes are read once for all G heads. The 4 warps merge through
// shared memory; with several splits, partial (o, lse) go to a workspace and a second kernel
// merges them.
//
// An fp8 (E4M3) cache (DecodeArgs::k_fp8): the tiles' codes stream through NS8 = 4 staging stages
// of 16 KiB (half a bf16 stage's bytes, so one more tile in flight in the same 96 KiB), and each
// warp widens its own 16 tokens of a tile to bf16 (exact) into one K/V tile in the bf16 layout
// before its tensor-core step; the key scale is folded into the softmax scale and the value scale
// into the output.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <queue>
#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/e4m3_widen.cuh"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/mma_util.cuh"

namespace infraplan::calib {
namespace {

constexpr int D = 128, BLK = 16, THREADS = 128, TILE = kDecodeTileTokens, CHK = D / 8, NS = 3;
constexpr int NS8 = 4, CHK8 = D / 16;  // fp8: staging stages, 16-byte chunks per row

__global__ void combine_k(DecodeArgs a) {
  int bh = blockIdx.x, d = threadIdx.x;
  const float* lse = a.partial_lse + std::size_t(bh) * a.num_splits;
  float M = -INFINITY;
  for (int s = 0; s < a.num_splits; ++s) M = fmaxf(M, lse[s]);
  float L = 0, O = 0;
  for (int s = 0; s < a.num_splits; ++s) {
    if (lse[s] == -INFINITY) continue;
    float w = exp2f(lse[s] - M);
    L += w;
    O += w * a.partial_o[(std::size_t(bh) * a.num_splits + s) * D + d];
  }
  a.out[std::size_t(bh) * D + d] = __float2bfloat16(L > 0 ? O / L : 0.f);
}

// Row r (token in the tile), 16-byte chunk c, XOR-swizzled so ldmatrix rows hit distinct banks.
__device__ __forceinline__ int swz(int r, int c) { return r * D + ((c ^ (r & 7)) * 8); }

// scale_log2 includes the key scale and out_scale is the value scale (fp8; 1 for bf16).
template <int G, bool FP8>
__global__ void __launch_bounds__(THREADS) decode_mma_k(DecodeArgs a, float scale_log2, float out_scale) {
  constexpr int kStages = FP8 ? 1 : NS;  // bf16 K/V tiles
  constexpr int kPipe = FP8 ? NS8 : NS;  // tiles in the cp.async ring
  extern __shared__ __align__(128) unsigned char smem_raw[];
  bf16* sK = reinterpret_cast<bf16*>(smem_raw);  // kStages tiles of TILE × D
  bf16* sV = sK + kStages * TILE * D;
  unsigned char* s8 = reinterpret_cast<unsigned char*>(sV + kStages * TILE * D);  // fp8: NS8 × [K, V][TILE][D]
  int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  int ctx = a.context_lens[b];
  // tokens_per_split 0: each sequence's own context is shared evenly by the splits (whole tiles).
  int tps = a.tokens_per_split > 0 ? a.tokens_per_split : ((ctx + int(gridDim.x) - 1) / int(gridDim.x) + TILE - 1) / TILE * TILE;
  int t0 = split * tps, t1 = min(ctx, t0 + tps);
  int n_tiles = t1 > t0 ? (t1 - t0 + TILE - 1) / TILE : 0;
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int* table = a.block_table + std::size_t(b) * a.max_blocks_per_seq;

  // Each thread copies 8 chunks of K and of V per tile: rows tid / 16 + 8e, chunk tid % 16 (fp8:
  // 4 chunks, rows tid / 8 + 16e, chunk tid % 8, unswizzled).
  auto load = [&](int tile, int stage) {
    int base = t0 + tile * TILE;
    if constexpr (FP8) {
      unsigned char* st = s8 + stage * 2 * TILE * D;
#pragma unroll
      for (int e = 0; e < TILE * CHK8 / THREADS; ++e) {
        int r = tid / CHK8 + e * (THREADS / CHK8), c = tid % CHK8, tok = base + r;
        bool ok = tok < t1;
        std::size_t row = ok ? (std::size_t(table[tok / BLK]) * a.kv_heads + kvh) * BLK + tok % BLK : 0;
        cp_async16(smem_u32(st + r * D + c * 16), a.k_fp8 + row * D + c * 16, ok);
        cp_async16(smem_u32(st + TILE * D + r * D + c * 16), a.v_fp8 + row * D + c * 16, ok);
      }
    } else {
#pragma unroll
      for (int e = 0; e < TILE * CHK / THREADS; ++e) {
        int r = tid / CHK + e * (THREADS / CHK), c = tid % CHK, tok = base + r;
        bool ok = tok < t1;
        std::size_t row = ok ? (std::size_t(table[tok / BLK]) * a.kv_heads + kvh) * BLK + tok % BLK : 0;
        cp_async16(smem_u32(sK + stage * TILE * D + swz(r, c)), a.k_cache + row * D + c * 8, ok);
        cp_async16(smem_u32(sV + stage * TILE * D + swz(r, c)), a.v_cache + row * D + c * 8, ok);
      }
    }
  };
#pragma unroll
  for (int st = 0; st < kPipe - 1; ++st) {
    if (st < n_tiles) load(st, st);
    cp_async_commit();
  }

  // A fragments of Q (16 rows × D): this thread's rows are lane / 4 (a head if < G) and lane / 4 + 8.
  std::uint32_t qf[D / 16][4];
  int qr = lane / 4;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    const bf16* qp = a.q + (std::size_t(b) * a.heads + kvh * G + qr) * D + ks * 16 + (lane % 4) * 2;
    qf[ks][0] = qr < G ? *reinterpret_cast<const std::uint32_t*>(qp) : 0u;
    qf[ks][2] = qr < G ? *reinterpret_cast<const std::uint32_t*>(qp + 8) : 0u;
    qf[ks][1] = qf[ks][3] = 0u;
  }
  float acc[D / 8][4] = {};
  float m_r = -FLT_MAX, l_r = 0.f;  // row qr only: rows ≥ 8 are padding

  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait<kPipe - 2>();
    __syncthreads();  // tile j visible to all; stage (j - 1) % kPipe free for the prefetch below
    if (j + kPipe - 1 < n_tiles) load(j + kPipe - 1, (j + kPipe - 1) % kPipe);
    cp_async_commit();
    int tok0 = t0 + j * TILE + warp * 16;
    if (tok0 >= t1) continue;  // this warp's 16 tokens are all past the end
    const bf16* kt = sK + (FP8 ? 0 : (j % NS) * TILE * D);
    const bf16* vt = sV + (FP8 ? 0 : (j % NS) * TILE * D);
    if constexpr (FP8) {
      // This warp's 16 rows of the staged tile, widened into its own rows of the bf16 tiles (only
      // this warp reads them, after the __syncwarp).
      const unsigned char* st = s8 + (j % NS8) * 2 * TILE * D;
#pragma unroll
      for (int e = 0; e < 16 * CHK8 / 32; ++e) {
        int r = warp * 16 + lane / CHK8 + e * (32 / CHK8), c = lane % CHK8;
        uint4 k[2], v[2];
        e4m3x16_to_bf16(*reinterpret_cast<const uint4*>(st + r * D + c * 16), k);
        e4m3x16_to_bf16(*reinterpret_cast<const uint4*>(st + TILE * D + r * D + c * 16), v);
        *reinterpret_cast<uint4*>(sK + swz(r, 2 * c)) = k[0];
        *reinterpret_cast<uint4*>(sK + swz(r, 2 * c + 1)) = k[1];
        *reinterpret_cast<uint4*>(sV + swz(r, 2 * c)) = v[0];
        *reinterpret_cast<uint4*>(sV + swz(r, 2 * c + 1)) = v[1];
      }
      __syncwarp();
    }
    float s[2][4] = {};
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      std::uint32_t t[4];
      ldmatrix_x4(t, smem_u32(kt + swz(warp * 16 + (lane % 8) + (lane / 16) * 8, ks * 2 + (lane / 8) % 2)));
      std::uint32_t b0[2] = {t[0], t[1]}, b1[2] = {t[2], t[3]};
      mma_bf16(s[0], qf[ks], b0);
      mma_bf16(s[1], qf[ks], b1);
    }
    if (tok0 + 16 > t1) {
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (tok0 + nt * 8 + (lane % 4) * 2 + (e & 1) >= t1) s[nt][e] = -INFINITY;
    }
    float mx = m_r;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) mx = fmaxf(mx, fmaxf(s[nt][0], s[nt][1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    float alpha = exp2f((m_r - mx) * scale_log2), ms = mx * scale_log2, sum = 0;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        s[nt][e] = exp2f(fmaf(s[nt][e], scale_log2, -ms));
        sum += s[nt][e];
      }
    l_r = l_r * alpha + sum;
    m_r = mx;
    // Rows ≥ 8 (elements 2, 3) are zero padding: their P is zero, whatever their scores.
    std::uint32_t pa[4] = {pack_bf16(s[0][0], s[0][1]), 0u, pack_bf16(s[1][0], s[1][1]), 0u};
#pragma unroll
    for (int dt = 0; dt < D / 8; dt += 2) {
      acc[dt][0] *= alpha;
      acc[dt][1] *= alpha;
      acc[dt + 1][0] *= alpha;
      acc[dt + 1][1] *= alpha;
      std::uint32_t t[4];
      ldmatrix_x4_trans(t, smem_u32(vt + swz(warp * 16 + (lane % 8) + ((lane / 8) % 2) * 8, dt + lane / 16)));
      std::uint32_t b0[2] = {t[0], t[1]}, b1[2] = {t[2], t[3]};
      mma_bf16(acc[dt], pa, b0);
      mma_bf16(acc[dt + 1], pa, b1);
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the pipeline's shared memory is reused for the merge below
  // Merge the 4 warps: (m, l) per warp and head, and the unnormalised rows.
  float* sm_m = reinterpret_cast<float*>(smem_raw);
  float* sm_l = sm_m + 4 * G;
  float* sm_o = sm_l + 4 * G;  // [4][G][D]
  float l = l_r;
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  if (qr < G) {
    if (lane % 4 == 0) {
      sm_m[warp * G + qr] = m_r * scale_log2;
      sm_l[warp * G + qr] = l;
    }
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      int c = dt * 8 + (lane % 4) * 2;
      sm_o[(warp * G + qr) * D + c] = acc[dt][0] * out_scale;
      sm_o[(warp * G + qr) * D + c + 1] = acc[dt][1] * out_scale;
    }
  }
  __syncthreads();
  for (int e = tid; e < G * D; e += THREADS) {
    int g = e / D, d = e % D;
    float M = -FLT_MAX;
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (sm_l[i * G + g] > 0) M = fmaxf(M, sm_m[i * G + g]);
    float L = 0, O = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (!(sm_l[i * G + g] > 0)) continue;
      float w = exp2f(sm_m[i * G + g] - M);
      L += sm_l[i * G + g] * w;
      O += sm_o[(i * G + g) * D + d] * w;
    }
    int h = kvh * G + g;
    if (gridDim.x == 1) {
      a.out[(std::size_t(b) * a.heads + h) * D + d] = __float2bfloat16(L > 0 ? O / L : 0.f);
    } else {
      std::size_t ps = (std::size_t(b) * a.heads + h) * gridDim.x + split;
      a.partial_o[ps * D + d] = L > 0 ? O / L : 0.f;
      if (d == 0) a.partial_lse[ps] = L > 0 ? M + log2f(L) : -INFINITY;
    }
  }
}

constexpr int kSmem = 2 * NS * TILE * D * int(sizeof(bf16));
// The fp8 kernel keeps the bf16 kernel's shared memory, so both fit the same CTAs per
// multiprocessor (ctas_per_sm, the split choice and the engine's slot count hold for both).
static_assert(2 * TILE * D * int(sizeof(bf16)) + NS8 * 2 * TILE * D == kSmem, "fp8: same shared memory");

template <int G>
void launch(const DecodeArgs& a, cudaStream_t stream) {
  const bool fp8 = a.k_fp8 != nullptr;
  auto kern = fp8 ? decode_mma_k<G, true> : decode_mma_k<G, false>;
  CALIB_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  dim3 grid(a.num_splits, a.kv_heads, a.batch);
  const double base = 1.0 / std::sqrt(double(D)) * 1.4426950408889634;
  float scale_log2 = float(fp8 ? base * double(a.k_scale) : base);
  kern<<<grid, THREADS, kSmem, stream>>>(a, scale_log2, fp8 ? a.v_scale : 1.0f);
  CALIB_LAUNCH();
  if (a.num_splits > 1) {
    combine_k<<<a.batch * a.heads, D, 0, stream>>>(a);
    CALIB_LAUNCH();
  }
}

template <int G>
int ctas_per_sm_g() {
  int n = 0;
  CALIB_CUDA(cudaFuncSetAttribute(decode_mma_k<G, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CALIB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, decode_mma_k<G, false>, THREADS, kSmem));
  return std::max(n, 1);
}

int ctas_per_sm(int group) {
  switch (group) {
    case 1:
      return ctas_per_sm_g<1>();
    case 2:
      return ctas_per_sm_g<2>();
    case 4:
      return ctas_per_sm_g<4>();
    default:
      return ctas_per_sm_g<8>();
  }
}

/// Tiles of time that a grid of decode CTAs takes on `slots` resident CTAs: the CTAs start in
/// launch order (split fastest, sequence slowest) on the first free slot; a CTA costs its tiles
/// plus kCtaOverhead (prologue, pipeline fill, merge), an empty one almost nothing.
double simulate_splits(const std::vector<int>& contexts, int kv_heads, int tps, int splits, long slots) {
  constexpr double kCtaOverhead = 1.0, kEmpty = 0.05;
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (long i = 0; i < slots; ++i) free_at.push(0.0);
  double end = 0;
  for (int ctx : contexts)
    for (int h = 0; h < kv_heads; ++h)
      for (int sp = 0; sp < splits; ++sp) {
        int tokens = std::clamp(ctx - sp * tps, 0, tps);
        double cost = tokens > 0 ? (tokens + TILE - 1) / TILE + kCtaOverhead : kEmpty;
        double t = free_at.top() + cost;
        free_at.pop();
        free_at.push(t);
        end = std::max(end, t);
      }
  return end;
}

}  // namespace

void choose_decode_splits(DecodeArgs& a, const std::vector<int>& contexts, int sms) {
  if (contexts.empty() || a.kv_heads <= 0) throw CudaError("choose_decode_splits: no sequences");
  int max_context = std::max(1, *std::max_element(contexts.begin(), contexts.end()));
  long slots = long(sms) * ctas_per_sm(a.heads / a.kv_heads);
  // Splitting fills idle slots and evens out unequal contexts; it costs a prologue per CTA and the
  // merge kernel (about two tiles). Keep at least 256 tokens per split.
  constexpr double kMerge = 2.0;
  int max_splits = std::max(1, (max_context + 255) / 256);
  double best = 1e300;
  int best_tps = max_context;
  for (int want : {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64}) {
    if (want > max_splits) break;
    int tps = ((max_context + want - 1) / want + TILE - 1) / TILE * TILE;
    int splits = (max_context + tps - 1) / tps;
    double cost = simulate_splits(contexts, a.kv_heads, tps, splits, slots) + (splits > 1 ? kMerge : 0.0);
    if (cost < best * 0.98) {  // a split must gain at least 2%
      best = cost;
      best_tps = tps;
    }
  }
  a.tokens_per_split = best_tps;
  a.num_splits = (max_context + best_tps - 1) / best_tps;
}

void decode_attention(const DecodeArgs& a, cudaStream_t stream) {
  if (a.head_dim != D || a.block_size != BLK)
    throw CudaError("decode_attention: head_dim must be 128 and block_size 16");
  if (a.tokens_per_split < 0 || a.tokens_per_split % BLK != 0 || a.num_splits < 1)
    throw CudaError("decode_attention: tokens_per_split must be 0 or a positive multiple of 16, num_splits ≥ 1");
  if (a.kv_heads <= 0 || a.heads % a.kv_heads != 0)
    throw CudaError("decode_attention: heads must be a multiple of kv_heads");
  const bool fp8 = a.k_fp8 != nullptr;
  if (fp8 != (a.v_fp8 != nullptr) || fp8 == (a.k_cache != nullptr) || (a.k_cache != nullptr) != (a.v_cache != nullptr))
    throw CudaError("decode_attention: set k_cache and v_cache (bf16) or k_fp8 and v_fp8 (fp8)");
  switch (a.heads / a.kv_heads) {
    case 1:
      launch<1>(a, stream);
      break;
    case 2:
      launch<2>(a, stream);
      break;
    case 4:
      launch<4>(a, stream);
      break;
    case 8:
      launch<8>(a, stream);
      break;
    default:
      throw CudaError("decode_attention: heads / kv_heads must be 1, 2, 4 or 8");
  }
}

}  // namespace infraplan::calib
