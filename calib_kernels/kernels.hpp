#pragma once
// The project's own CUDA kernels: host-side launchers. Every launcher enqueues on `stream`, returns
// at once, and reports a bad launch configuration as CudaError. Layouts are row-major; sizes are
// element counts. bf16 is __nv_bfloat16 (stored 2 bytes, fp32 accumulation everywhere).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace infraplan::calib {

using bf16 = __nv_bfloat16;

/// Element formats the random fill knows.
enum class Elem { F32, BF16, F16, FP8E4M3, INT8, I32 };
/// How the random fill draws its values.
enum class FillDistribution {
  Uniform,  ///< uniform in [-scale, scale) (the calibration's operands)
  Normal,   ///< normal with standard deviation `scale`, clipped to ±6σ (torch.randn's operands)
};
/// "uniform", "normal".
const char* fill_distribution_name(FillDistribution d);
/// Fills `n` elements with deterministic pseudo-random values drawn from `dist` (rounded to
/// integers for INT8/I32, clamped to ±127 for INT8) from `seed`. Never zeros only: the tests rely
/// on that.
void fill_random(void* p, std::size_t n, Elem e, std::uint64_t seed, float scale, cudaStream_t stream,
                 FillDistribution dist = FillDistribution::Uniform);

// ---- bandwidth (bandwidth.cu) ----
/// out[i] = in[i] for n float4 elements (16-byte loads and stores, grid-stride with
/// `blocks_per_sm` blocks of 256 threads per multiprocessor).
void copy_kernel(const float4* in, float4* out, std::size_t n4, cudaStream_t stream, int blocks_per_sm = 8);
/// Reads n float4 elements once (read-only path) and writes one float per block into `sink`
/// (`sink` must hold 4096 floats).
void read_kernel(const float4* in, std::size_t n4, float* sink, cudaStream_t stream);
/// A kernel that does nothing: launch overhead.
void empty_kernel(cudaStream_t stream);
/// `blocks` blocks that each wait `ns` nanoseconds of the global timer (a kernel of fixed length,
/// for the gap between dependent kernels).
void wait_kernel(unsigned ns, int blocks, cudaStream_t stream);
/// The multiprocessor clock right now: one thread counts clock64() cycles over `window_ns` of the
/// global timer and writes {cycles, ns} to out[0..1] (MHz = 1000 · cycles / ns).
void clock_meter(unsigned long long* out, unsigned window_ns, cudaStream_t stream);

// ---- reduce sum three ways (reduce.cu); *out is zeroed by the launcher ----
/// One atomicAdd per element into *out.
void reduce_atomic(const float* x, std::size_t n, float* out, cudaStream_t stream);
/// Shared-memory tree per block (two loads per thread), one atomicAdd per block.
void reduce_smem_tree(const float* x, std::size_t n, float* out, cudaStream_t stream);
/// Grid-stride float4 loads, warp shuffles, one atomicAdd per block.
void reduce_warp_shuffle(const float* x, std::size_t n, float* out, cudaStream_t stream);

// ---- transpose (transpose.cu) ----
/// out[cols][rows] = in[rows][cols]ᵀ through a 32×32 shared tile; `padded` adds one column.
void transpose32(const float* in, float* out, int rows, int cols, bool padded, cudaStream_t stream);

// ---- row softmax (softmax.cu), fp32 ----
/// Three passes over each row: max, sum of exp, write.
void softmax_naive(const float* x, float* y, int rows, int cols, cudaStream_t stream);
/// Online normaliser (Milakov & Gimelshein): one pass for (max, sum), one pass to write.
void softmax_online(const float* x, float* y, int rows, int cols, cudaStream_t stream);

// ---- GEMM: C[M,N] = A[M,K] · B[N,K]ᵀ, bf16 in/out, fp32 accumulation (gemm_*.cu) ----
/// Shared-memory tiled CUDA-core kernel (128×128 tiles, 8×8 per thread). Any sizes.
void gemm_tiled(const bf16* A, const bf16* B, bf16* C, int M, int N, int K, cudaStream_t stream);
/// Tensor-core kernel: mma.sync m16n8k16, ldmatrix, cp.async multi-stage pipeline. K % 8 == 0.
void gemm_mma(const bf16* A, const bf16* B, bf16* C, int M, int N, int K, cudaStream_t stream);
/// Hopper (sm_90a) kernel: wgmma.mma_async from 128-byte-swizzled shared memory filled by TMA
/// through an mbarrier ring, one producer and one or two consumer warpgroups; picks the tile
/// configuration by shape. K % 8 == 0, A and B 16-byte aligned (TMA's rules).
void gemm_wgmma(const bf16* A, const bf16* B, bf16* C, int M, int N, int K, cudaStream_t stream);
/// The tile configurations gemm_wgmma chooses among (for the tests and the tile sweep):
/// how many, the name of one ("128x256 persistent", ...), and a launch of one.
int gemm_wgmma_config_count();
const char* gemm_wgmma_config_name(int config);
void gemm_wgmma_config(int config, const bf16* A, const bf16* B, bf16* C, int M, int N, int K,
                       cudaStream_t stream);

// ---- attention ----
/// Variable-length FlashAttention-2-style forward. q: [tokens][heads][d], k, v: [tokens][kv_heads][d],
/// o: [tokens][heads][d]; sequence i spans tokens cu_seqlens[i] .. cu_seqlens[i+1]-1.
struct PrefillArgs {
  const bf16* q = nullptr;
  const bf16* k = nullptr;
  const bf16* v = nullptr;
  bf16* o = nullptr;
  const int* cu_seqlens = nullptr;  ///< device, num_seqs + 1 entries
  int num_seqs = 0;
  int max_seqlen = 0;
  int heads = 0, kv_heads = 0;
  int head_dim = 128;  ///< 64 or 128
  bool causal = true;
};
void attention_prefill(const PrefillArgs& a, cudaStream_t stream);

/// Keys per tile of the paged decode kernel: a CTA walks its share of a sequence's context in
/// whole tiles, so a context ending inside a tile costs part of a whole tile's time (the serving
/// cost model's partial-tile term, hardware/paged_attention_model.hpp).
constexpr int kDecodeTileTokens = 64;

/// Paged decode attention, one new token per sequence, GQA, split-K over the context.
/// Caches: [num_blocks][kv_heads][block_size][head_dim]; block_table: [batch][max_blocks_per_seq].
struct DecodeArgs {
  const bf16* q = nullptr;  ///< [batch][heads][head_dim]
  const bf16* k_cache = nullptr;
  const bf16* v_cache = nullptr;
  const int* block_table = nullptr;
  const int* context_lens = nullptr;  ///< [batch], tokens in the cache per sequence
  bf16* out = nullptr;                ///< [batch][heads][head_dim]
  float* partial_o = nullptr;         ///< [batch][heads][num_splits][head_dim] workspace
  float* partial_lse = nullptr;       ///< [batch][heads][num_splits] workspace
  int batch = 0, heads = 0, kv_heads = 0;
  int head_dim = 128;   ///< 128 only
  int block_size = 16;  ///< tokens per cache block, 16 only
  int max_blocks_per_seq = 0;
  int num_splits = 1;        ///< context splits (grid.x)
  /// Multiple of block_size; 0: each sequence's context divided evenly among the splits (whole
  /// 64-token tiles), so one launch shape serves any contexts (CUDA graphs).
  int tokens_per_split = 0;
  /// An fp8 (E4M3) cache, set instead of k_cache / v_cache: same layout, 1 byte per element; an
  /// element's value is its E4M3 value times k_scale (keys) or v_scale (values).
  const std::uint8_t* k_fp8 = nullptr;
  const std::uint8_t* v_fp8 = nullptr;
  float k_scale = 1.0f, v_scale = 1.0f;
};
void decode_attention(const DecodeArgs& a, cudaStream_t stream);
/// Sets num_splits and tokens_per_split for these per-sequence contexts (host copy of
/// context_lens): the split count whose simulated schedule of CTAs on the GPU's resident slots
/// finishes first (fills the GPU at small batch, evens out unequal contexts, no split when the
/// sequences alone fill it). At most 64 splits.
void choose_decode_splits(DecodeArgs& a, const std::vector<int>& contexts, int sms);

// ---- memory-bound transformer kernels (norms.cu), bf16 ----
/// y = x / sqrt(mean(x²) + eps) · w, rows × hidden, hidden % 8 == 0, hidden ≤ 16384.
void rmsnorm(const bf16* x, const bf16* w, bf16* y, int rows, int hidden, float eps, cudaStream_t stream);
/// RMSNorm configurations for rows wider than 2048 (the tuning sweep): how many, a name, and a
/// launch of one; false (nothing launched) when the configuration does not fit `hidden`.
int rmsnorm_config_count();
const char* rmsnorm_config_name(int config);
bool rmsnorm_config(int config, const bf16* x, const bf16* w, bf16* y, int rows, int hidden, float eps,
                    cudaStream_t stream);
/// out[r][j] = silu(gu[r][j]) · gu[r][ffn + j]; gu: rows × 2·ffn, ffn % 8 == 0.
void swiglu(const bf16* gu, bf16* out, int rows, int ffn, cudaStream_t stream);
/// Rotary embedding in place (rotate-half pairs j, j + d/2), x: [tokens][heads][head_dim],
/// angle = pos[t] · theta^(−2j/d).
void rope(bf16* x, const int* pos, int tokens, int heads, int head_dim, float theta, cudaStream_t stream);

}  // namespace infraplan::calib
