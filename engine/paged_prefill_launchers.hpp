#pragma once
// The two implementations behind paged_prefill_attention (engine_kernels.hpp), for its dispatcher.
#include <cuda_runtime.h>

#include "engine/engine_kernels.hpp"

namespace infraplan::engine {

/// mma.sync m16n8k16 (sm_80 and later), bf16 or fp8 cache (paged_prefill_attention.cu).
void paged_prefill_mma(const PagedPrefillArgs& a, cudaStream_t stream);
/// wgmma.mma_async (sm_90a), bf16 cache only (paged_prefill_wgmma.cu).
void paged_prefill_wgmma(const PagedPrefillArgs& a, cudaStream_t stream);

}  // namespace infraplan::engine
