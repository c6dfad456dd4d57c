// 32×32 shared-memory tiled transpose, without and with one column of padding (bank conflicts).
#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

template <int PAD>
__global__ void transpose_k(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[32][32 + PAD];
  int x = blockIdx.x * 32 + threadIdx.x;  // column in `in`
  int y0 = blockIdx.y * 32;
  for (int j = threadIdx.y; j < 32; j += 8) {
    int y = y0 + j;
    if (x < cols && y < rows) tile[j][threadIdx.x] = in[std::size_t(y) * cols + x];
  }
  __syncthreads();
  int ox = y0 + threadIdx.x;  // column in `out` (= row in `in`)
  for (int j = threadIdx.y; j < 32; j += 8) {
    int oy = blockIdx.x * 32 + j;  // row in `out`
    if (ox < rows && oy < cols) out[std::size_t(oy) * rows + ox] = tile[threadIdx.x][j];
  }
}

}  // namespace

void transpose32(const float* in, float* out, int rows, int cols, bool padded, cudaStream_t stream) {
  dim3 grid((cols + 31) / 32, (rows + 31) / 32), block(32, 8);
  if (padded)
    transpose_k<1><<<grid, block, 0, stream>>>(in, out, rows, cols);
  else
    transpose_k<0><<<grid, block, 0, stream>>>(in, out, rows, cols);
  CALIB_LAUNCH();
}

}  // namespace infraplan::calib
