#pragma once
// The engine's fp8 (W8A8) quantization kernels: per-tensor amax reductions and E4M3 quantization
// with a scale that lives in device memory, so that a step quantizes its GEMM inputs with no host
// synchronisation and can be captured in a CUDA graph. A tensor's scale is amax / 448 (1 when the
// tensor is all zeros) and its E4M3 value is x / scale rounded to nearest even, saturated to ±448
// — the host's engine/fp8_e4m3.hpp, bit for bit. Launchers enqueue on `stream` and return.
//
// A reduction accumulates into *amax with atomicMax on the float's bits (exact and
// order-independent for values ≥ 0), so *amax must be zeroed before the first kernel that
// reduces into it (one memset per step covers every slot of the step). `live_rows`, where
// given, is a device int: only rows [0, *live_rows) count toward the amax, so that the padding
// rows of a CUDA-graph decode step do not change the scale of the real ones.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace infraplan::engine {

using fp8 = __nv_fp8_e4m3;

/// Floats between two fp8 scales that cuBLASLt reads (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER):
/// 256 bytes, the alignment of cudaMalloc. On the H200 with cuBLAS 13.0 a scale pointer 4 bytes
/// past an allocation's start made every E4M3 GEMM fail with CUBLAS_STATUS_NOT_SUPPORTED, while
/// pointers at the allocation's start ran; LtGemm::run_fp8 refuses pointers that are not 16-byte
/// aligned (smaller strides than 256 bytes were not tried).
constexpr std::size_t kFp8ScaleStride = 64;

/// *amax = max(*amax, max |x|) over the first rows of x ([rows][cols], row-major, cols % 8 == 0).
void amax_bf16(const __nv_bfloat16* x, std::int64_t rows, std::int64_t cols, const int* live_rows,
               float* amax, cudaStream_t stream);

/// out[i] = E4M3(x[i] / s) for i < n (n % 8 == 0) with s = amax / 448 (1 when *amax is 0),
/// and *scale = s (the dequantization scale the GEMM reads).
void quantize_fp8(const __nv_bfloat16* x, std::int64_t n, const float* amax, fp8* out, float* scale,
                  cudaStream_t stream);

/// SwiGLU of the fused gate/up rows ([rows][2 · ffn] → [rows][ffn], out = silu(gate) · up in
/// bf16, the arithmetic of calib::swiglu) that also folds max |out| of the live rows into *amax.
void swiglu_amax(const __nv_bfloat16* gu, __nv_bfloat16* out, int rows, int ffn, const int* live_rows,
                 float* amax, cudaStream_t stream);

}  // namespace infraplan::engine
