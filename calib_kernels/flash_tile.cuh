#pragma once
// The tile math of the FlashAttention-2-style prefill kernels, shared by the calibration kernel
// (calib_kernels/attention_prefill.cu) and the mini-engine's paged prefill
// (engine/paged_prefill_attention.cu): the XOR-swizzled shared-memory layout, QKᵀ and PV on
// mma.sync m16n8k16 for a warp's MT m-tiles of 16 rows, and the online softmax in registers.
// What differs between the two kernels (how tiles are loaded, the causal mask) stays in each.
#include <cstdint>

#include "calib_kernels/mma_util.cuh"

namespace infraplan::calib::flash {

/// m-tiles of 16 query rows per warp.
constexpr int MT = 2;

// Rows of D bf16 (D/8 16-byte chunks) with the chunk index XOR-ed by row % 8.
template <int D>
__device__ __forceinline__ int sw(int row, int chunk) {
  return row * D + ((chunk ^ (row & 7)) * 8);
}

// Per-lane state of the ldmatrix addresses: each lane's byte offset inside a tile for k-step (or
// column block) 0. A k-step moves 32 bytes, which with the XOR swizzle only flips chunk bits below
// the row stride, so later steps are offset ^ (32·ks): one register and one LOP3 per ldmatrix.
struct LdOffsets {
  std::uint32_t q, k, v;
};

// S = Q Kᵀ for this warp's MT × 16 rows and NK keys starting at shared address kt.
template <int D, int NK>
__device__ __forceinline__ void qk_step(float (&s)[MT][NK / 8][4], std::uint32_t sQa, std::uint32_t kt,
                                        const LdOffsets& off) {
  constexpr int RB = D * 2;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NK / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    std::uint32_t qa[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) ldmatrix_x4(qa[mt], sQa + mt * 16 * RB + (off.q ^ (ks * 32)));
#pragma unroll
    for (int nt = 0; nt < NK / 8; nt += 2) {
      std::uint32_t t[4];
      ldmatrix_x4(t, kt + nt * 8 * RB + (off.k ^ (ks * 32)));
      std::uint32_t b0[2] = {t[0], t[1]}, b1[2] = {t[2], t[3]};
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        mma_bf16(s[mt][nt], qa[mt], b0);
        mma_bf16(s[mt][nt + 1], qa[mt], b1);
      }
    }
  }
}

// Online softmax over the 2 · MT rows this thread holds (scale folded into exp2); s becomes P.
// Lazy rescaling: the running maxima, and with them the accumulators, are only updated when some
// row's maximum grew by more than 2^8 (any lane of the warp): P may then exceed 1 by up to 2^8,
// harmless in fp32 and bf16, and the MT · D / 2 multiplications per step are skipped almost
// always (measured 1-3% faster than rescaling at every step at S ≥ 1024 on H200).
template <int D, int NK>
__device__ __forceinline__ void softmax_step(float (&s)[MT][NK / 8][4], float (&m_r)[MT][2],
                                             float (&l_r)[MT][2], float (&acc)[MT][D / 8][4],
                                             float scale_log2) {
  float mx[MT][2];
  bool grow = false;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float x = m_r[mt][r];
#pragma unroll
      for (int nt = 0; nt < NK / 8; ++nt) x = fmaxf(x, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
      mx[mt][r] = x;
      grow = grow || (x - m_r[mt][r]) * scale_log2 > 8.f;
    }
  if (__any_sync(0xffffffffu, grow)) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float alpha = ex2_approx((m_r[mt][r] - mx[mt][r]) * scale_log2);
        m_r[mt][r] = mx[mt][r];
        l_r[mt][r] *= alpha;
#pragma unroll
        for (int dt = 0; dt < D / 8; ++dt) {
          acc[mt][dt][2 * r] *= alpha;
          acc[mt][dt][2 * r + 1] *= alpha;
        }
      }
  }
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float ms = m_r[mt][r] * scale_log2, sum = 0;
#pragma unroll
      for (int nt = 0; nt < NK / 8; ++nt) {
        float p0 = ex2_approx(fmaf(s[mt][nt][2 * r], scale_log2, -ms));
        float p1 = ex2_approx(fmaf(s[mt][nt][2 * r + 1], scale_log2, -ms));
        s[mt][nt][2 * r] = p0;
        s[mt][nt][2 * r + 1] = p1;
        sum += p0 + p1;
      }
      l_r[mt][r] += sum;
    }
}

// acc += P V for NK keys whose V rows start at shared address vt (P stays in registers as the A
// operand).
template <int D, int NK>
__device__ __forceinline__ void pv_step(float (&acc)[MT][D / 8][4], const float (&s)[MT][NK / 8][4],
                                        std::uint32_t vt, const LdOffsets& off) {
  constexpr int RB = D * 2;
#pragma unroll
  for (int kk = 0; kk < NK / 16; ++kk) {
    std::uint32_t pa[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      pa[mt][0] = pack_bf16(s[mt][2 * kk][0], s[mt][2 * kk][1]);
      pa[mt][1] = pack_bf16(s[mt][2 * kk][2], s[mt][2 * kk][3]);
      pa[mt][2] = pack_bf16(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
      pa[mt][3] = pack_bf16(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    }
#pragma unroll
    for (int dt = 0; dt < D / 8; dt += 2) {
      std::uint32_t t[4];
      ldmatrix_x4_trans(t, vt + kk * 16 * RB + (off.v ^ (dt * 16)));
      std::uint32_t b0[2] = {t[0], t[1]}, b1[2] = {t[2], t[3]};
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        mma_bf16(acc[mt][dt], pa[mt], b0);
        mma_bf16(acc[mt][dt + 1], pa[mt], b1);
      }
    }
  }
}

}  // namespace infraplan::calib::flash
