// Persistent Jacobi iterations with parpat's grid barrier, checked against the multi-kernel
// version. The Laplace equation on an nx × ny grid (top edge held at 1, the other edges at 0):
// each iteration replaces every interior point by the mean of its four neighbours, reading one
// buffer and writing the other. The multi-kernel version launches one kernel per iteration;
// the persistent version launches once, loops over the iterations inside the kernel and
// separates them with GridSync::sync(), through launch_with_grid_barrier(), which sizes the
// grid to what can be resident at once. Both do the same float operations per point, so their
// results must agree bit for bit. Finally the example asks for one block more than the largest
// safe grid and shows that the launch is refused instead of hanging.
//
//   jacobi_persistent [nx ny iterations]     (default 1024 1024 2000; exit 77 without a GPU)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "parpat/cuda/grid_barrier.cuh"

namespace {

__device__ inline float relax(const float* in, int nx, int x, int y) {
  int i = y * nx + x;
  return 0.25f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}

__global__ void jacobi_step(const float* in, float* out, int nx, int ny) {
  long long interior = static_cast<long long>(nx - 2) * (ny - 2);
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < interior;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    int x = 1 + static_cast<int>(k % (nx - 2)), y = 1 + static_cast<int>(k / (nx - 2));
    out[y * nx + x] = relax(in, nx, x, y);
  }
}

__global__ void jacobi_persistent(parpat::cuda::GridBarrier barrier, float* a, float* b, int nx,
                                  int ny, int iterations) {
  parpat::cuda::GridSync grid(barrier);
  long long interior = static_cast<long long>(nx - 2) * (ny - 2);
  for (int it = 0; it < iterations; ++it) {
    const float* in = it % 2 == 0 ? a : b;
    float* out = it % 2 == 0 ? b : a;
    for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < interior;
         k += static_cast<long long>(gridDim.x) * blockDim.x) {
      int x = 1 + static_cast<int>(k % (nx - 2)), y = 1 + static_cast<int>(k / (nx - 2));
      out[y * nx + x] = relax(in, nx, x, y);
    }
    if (!grid.sync()) return;  // a wait ran past its bound: the host sees failed()
  }
}

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "jacobi_persistent: %s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  int nx = argc > 3 ? std::atoi(argv[1]) : 1024;
  int ny = argc > 3 ? std::atoi(argv[2]) : 1024;
  int iterations = argc > 3 ? std::atoi(argv[3]) : 2000;
  if (nx < 3 || ny < 3 || iterations < 0) {
    std::fprintf(stderr, "usage: jacobi_persistent [nx ny iterations] (nx, ny >= 3)\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("jacobi_persistent: no CUDA device, nothing to run\n");
    return 77;  // CTest's skip code
  }
  std::size_t points = static_cast<std::size_t>(nx) * ny, bytes = points * sizeof(float);
  std::vector<float> initial(points, 0.0f);
  for (int x = 0; x < nx; ++x)
    initial[x] = 1.0f;

  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  float* buffers[4];
  for (auto& p : buffers) {
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    check(cudaMemcpy(p, initial.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  constexpr int kBlock = 256;
  float ms_multi = 0, ms_persistent = 0;

  // Multi-kernel: one launch per iteration.
  int sms = 0, device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "attribute");
  float *in = buffers[0], *out = buffers[1];
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int it = 0; it < iterations; ++it) {
    jacobi_step<<<sms * 8, kBlock, 0, stream>>>(in, out, nx, ny);
    std::swap(in, out);
  }
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "multi-kernel Jacobi");
  check(cudaEventElapsedTime(&ms_multi, start, stop), "cudaEventElapsedTime");
  std::vector<float> expected(points), got(points);
  check(cudaMemcpy(expected.data(), in, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");

  try {
    parpat::cuda::GridBarrierMemory memory;
    int largest = parpat::cuda::max_grid_barrier_blocks(jacobi_persistent, kBlock);
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    parpat::cuda::launch_with_grid_barrier(jacobi_persistent, dim3(largest), dim3(kBlock), 0,
                                           stream, memory, buffers[2], buffers[3], nx, ny,
                                           iterations);
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "persistent Jacobi");
    check(cudaEventElapsedTime(&ms_persistent, start, stop), "cudaEventElapsedTime");
    if (memory.failed(stream)) {
      std::fprintf(stderr, "FAILED: a grid barrier wait ran past its bound\n");
      return 1;
    }
    float* result = iterations % 2 == 0 ? buffers[2] : buffers[3];
    check(cudaMemcpy(got.data(), result, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::printf(
        "%d x %d grid, %d iterations: multi-kernel %.3f ms, persistent (%d blocks of %d) "
        "%.3f ms\n",
        nx, ny, iterations, ms_multi, largest, kBlock, ms_persistent);

    bool refused = false;
    try {
      parpat::cuda::launch_with_grid_barrier(jacobi_persistent, dim3(largest + 1), dim3(kBlock), 0,
                                             stream, memory, buffers[2], buffers[3], nx, ny,
                                             iterations);
    } catch (const parpat::Error& e) {
      refused = true;
      std::printf("a grid of %d blocks is refused: %s\n", largest + 1, e.what());
    }
    if (!refused) {
      std::fprintf(stderr, "FAILED: a grid above the safe bound was launched\n");
      return 1;
    }
  } catch (const parpat::Error& e) {
    std::fprintf(stderr, "jacobi_persistent: %s\n", e.what());
    return 1;
  }

  if (std::memcmp(expected.data(), got.data(), bytes) != 0) {
    std::size_t i = 0;
    while (expected[i] == got[i])
      ++i;
    std::fprintf(stderr, "FAILED: results differ at point %zu: %.9g (multi-kernel) vs %.9g\n", i,
                 expected[i], got[i]);
    return 1;
  }
  std::printf("persistent and multi-kernel results agree bit for bit\n");
  for (auto p : buffers)
    cudaFree(p);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return 0;
}
