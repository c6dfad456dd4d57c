#pragma once
// The CUDA engine's own kernels (host launchers). Everything is bf16 with fp32 arithmetic;
// rows are tokens; launchers enqueue on `stream`, check the launch and return at once. The KV
// cache of one layer is [num_blocks][kv_heads][block_size = 16][head_dim = 128] for keys and the
// same for values (the layout of calib::decode_attention), bf16 or (fp8 KV, engine/kv_format.hpp)
// E4M3 codes with one static scale per layer for keys and one for values.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "engine/prefill_kernel.hpp"
#include "engine/weight_init.hpp"

namespace infraplan::engine {

using bf16 = __nv_bfloat16;
using fp8 = __nv_fp8_e4m3;
constexpr int kBlockSize = 16;  ///< tokens per KV block
constexpr int kHeadDim = 128;   ///< the kernels' head width

/// Fills `n` bf16 weights of tensor `id` with weight_value(init, seed, id, i).
void init_weights(bf16* p, std::int64_t n, WeightInit init, std::uint64_t seed, std::uint32_t id,
                  cudaStream_t stream);

/// out[t] = table[tokens[t]] for t < rows (hidden wide).
void embed_tokens(const bf16* table, const int* tokens, bf16* out, int rows, int hidden, cudaStream_t stream);

/// Fused residual add and RMSNorm: when `delta` is set, resid = bf16(resid + delta) (written
/// back); then out = bf16(resid / sqrt(mean(resid²) + eps) · w). hidden % 8 == 0, ≤ 16384.
void add_rmsnorm(bf16* resid, const bf16* delta, const bf16* w, bf16* out, int rows, int hidden, float eps,
                 cudaStream_t stream);
/// add_rmsnorm that also folds max |out| over rows [0, *live_rows) into *amax (fp8 activation
/// scales, engine/fp8_kernels.hpp; *amax zeroed beforehand). out is the same as add_rmsnorm's.
void add_rmsnorm_amax(bf16* resid, const bf16* delta, const bf16* w, bf16* out, int rows, int hidden,
                      float eps, const int* live_rows, float* amax, cudaStream_t stream);
/// The same for the rows `rows[s]` only (s < n), without writing the residual: the final norm
/// of the rows that are sampled. out: [n][hidden].
void gather_add_rmsnorm(const bf16* resid, const bf16* delta, const int* rows, const bf16* w, bf16* out,
                        int n, int hidden, float eps, cudaStream_t stream);

/// Fused rotary embedding and KV-cache write. qkv: [rows][(heads + 2 · kv_heads) · 128] (q, k, v
/// heads in that order); writes rotated q to q_out [rows][heads][128], rotated k and plain v to
/// the caches at slots[t] (block = slot / 16, offset = slot % 16; slot < 0: not written).
/// rope: [max_seq][64] (cos, sin) pairs (llama_config's rope_table).
void rope_qkv_to_cache(const bf16* qkv, bf16* q_out, bf16* k_cache, bf16* v_cache, const int* positions,
                       const int* slots, const float2* rope, int rows, int heads, int kv_heads,
                       cudaStream_t stream);

/// rope_qkv_to_cache for an fp8 cache: the rotated k and the plain v, rounded to bf16 as a bf16
/// cache would hold them, are stored as E4M3(x / k_scale) and E4M3(x / v_scale) (round to nearest
/// even, saturating to ±448; engine/fp8_e4m3.hpp's fp8_quantize). q_out is rope_qkv_to_cache's.
void rope_qkv_to_fp8_cache(const bf16* qkv, bf16* q_out, fp8* k_cache, fp8* v_cache, const int* positions,
                           const int* slots, const float2* rope, int rows, int heads, int kv_heads,
                           float k_scale, float v_scale, cudaStream_t stream);

/// Copies whole KV blocks pairs[i] = (src, dst) in every layer: cache holds `layers` × (K, V) planes
/// of `plane_bytes` bytes, a block is `block_bytes` bytes of a plane (a multiple of 16).
void copy_kv_blocks(void* cache, const int2* pairs, int n, int layers, std::int64_t plane_bytes,
                    std::int64_t block_bytes, cudaStream_t stream);

/// Fills `n` E4M3 values with E4M3(weight_value({0, 1}, seed, id, i)): random codes in [−1, 1)
/// (benchmarks never time zeros).
void init_fp8_random(fp8* p, std::int64_t n, std::uint64_t seed, std::uint32_t id, cudaStream_t stream);

/// out[r] = the index of the largest of logits[r][0, vocab) (lowest index on ties; NaN ignored).
void argmax_rows(const float* logits, int* out, int rows, int vocab, cudaStream_t stream);

/// FlashAttention-style causal attention of prefill chunks over the paged KV cache: chunk i has
/// its query rows cu_q[i] .. cu_q[i + 1] − 1 of q (positions start[i] …), and attends to keys
/// 0 .. start[i] + its row (cached prefix and earlier chunks included) through its block table.
/// With an fp8 cache, k_fp8 / v_fp8 are set instead of k_cache / v_cache: the E4M3 tiles are
/// widened to bf16 in shared memory (exact), the key scale multiplies the scores and the value
/// scale the output, in fp32.
struct PagedPrefillArgs {
  const bf16* q = nullptr;           ///< [rows][heads][128]
  const bf16* k_cache = nullptr;     ///< one layer's keys (bf16 cache)
  const bf16* v_cache = nullptr;     ///< one layer's values (bf16 cache)
  const fp8* k_fp8 = nullptr;        ///< one layer's keys (fp8 cache)
  const fp8* v_fp8 = nullptr;        ///< one layer's values (fp8 cache)
  float k_scale = 1.0f, v_scale = 1.0f;  ///< fp8 cache: dequantization scales
  bf16* out = nullptr;               ///< [rows][heads][128]
  const int* cu_q = nullptr;         ///< [chunks + 1] row offsets
  const int* start = nullptr;        ///< [chunks] position of each chunk's first row
  const int* kv_len = nullptr;       ///< [chunks] keys visible to the last row (start + rows)
  const int* block_table = nullptr;  ///< [chunks][max_blocks_per_seq]
  int chunks = 0, max_q = 0, heads = 0, kv_heads = 0, max_blocks_per_seq = 0;
  PrefillKernel kernel = PrefillKernel::automatic;
};
void paged_prefill_attention(const PagedPrefillArgs& a, cudaStream_t stream);
/// The kernel paged_prefill_attention runs for `k` on the current GPU with a bf16 (fp8_cache false)
/// or fp8 cache: mma_sync or wgmma, never automatic.
PrefillKernel resolved_prefill_kernel(PrefillKernel k, bool fp8_cache);

}  // namespace infraplan::engine
