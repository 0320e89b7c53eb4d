// The public grid barrier (parpat/cuda/grid_barrier.cuh) as users' kernels use it: launched
// through launch_with_grid_barrier from one GridBarrierMemory over grids whose tuned layouts
// differ (one word, warp arrivals, the table, sub-words with release lines; 1-D and 3-D grids,
// partial warps), each checked by the early-release stress test; a grid beyond the resident
// bound refused; a barrier that one block never reaches failing within its bound instead of
// hanging. Skipped, with a message naming CUDA, where no GPU is present.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "parpat/cuda/grid_barrier.cuh"

namespace parpat::test {
namespace {

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define SKIP_WITHOUT_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "backend cuda has no device here"

// Fewer rounds under compute-sanitizer, which serialises the threads.
int rounds() {
  const char* v = std::getenv("PARPAT_SANITIZE_RUN");
  return v != nullptr && std::string(v) == "1" ? 20 : 3000;
}

__device__ unsigned int linear_block() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

// Each round the last thread of every block publishes the round number in its block's slot;
// after the barrier every thread reads the slot of the next block and of the block half-way
// round, which must hold this round or the next: anything older is an early release.
template <parpat::cuda::GridArrivals Arrivals>
__global__ void stress(parpat::cuda::BasicGridBarrier<Arrivals> barrier, unsigned int* slots,
                       unsigned long long* early, unsigned int* completed, int rounds) {
  parpat::cuda::BasicGridSync<Arrivals> grid(barrier);
  unsigned int blocks = gridDim.x * gridDim.y * gridDim.z, block = linear_block();
  unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
  unsigned int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  volatile unsigned int* shared_slots = slots;
  unsigned long long seen = 0;
  int r = 1;
  for (; r <= rounds; ++r) {
    if (thread == threads - 1) shared_slots[block] = static_cast<unsigned int>(r);
    if (!grid.sync()) break;
    unsigned int next = shared_slots[(block + 1) % blocks];
    unsigned int far = shared_slots[(block + blocks / 2) % blocks];
    seen += next - static_cast<unsigned int>(r) > 1u ? 1 : 0;
    seen += far - static_cast<unsigned int>(r) > 1u ? 1 : 0;
  }
  if (seen) atomicAdd(early, seen);
  if (thread == 0 && r > rounds) atomicAdd(completed, 1u);
}

// Block 0 leaves without arriving; everybody else must give up within the bound.
// Counts the warps that gave up.
template <parpat::cuda::GridArrivals Arrivals>
__global__ void abandoned(parpat::cuda::BasicGridBarrier<Arrivals> barrier, unsigned int* gave_up) {
  parpat::cuda::BasicGridSync<Arrivals> grid(barrier);
  if (linear_block() == 0) return;
  if (!grid.sync() && threadIdx.x % 32 == 0) atomicAdd(gave_up, 1u);
}

struct Shape {
  const char* what;
  dim3 grid, block;
};

template <class T>
T* zeroed(std::size_t n) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemset(p, 0, n * sizeof(T)), cudaSuccess);
  return p;
}

template <class T>
T read(const T* p) {
  T v{};
  EXPECT_EQ(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}

template <parpat::cuda::GridArrivals Arrivals>
void expect_no_early_release() {
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  auto kernel = stress<Arrivals>;
  auto largest = [&](int threads) {
    return parpat::cuda::max_grid_barrier_blocks(kernel, threads);
  };
  const std::vector<Shape> shapes = {
      {"one block", dim3(1), dim3(128)},
      {"one warp per SM", dim3(sms), dim3(32)},
      {"partial warps of one", dim3(sms * 2), dim3(20)},
      {"partial warps of two", dim3(sms * 2), dim3(48)},
      {"blocks of 128, one per SM", dim3(sms), dim3(128)},
      {"blocks of 128, the largest grid", dim3(largest(128)), dim3(128)},
      {"blocks of 1024, the largest grid", dim3(largest(1024)), dim3(1024)},
      {"warps, the largest grid (sub-words)", dim3(largest(32)), dim3(32)},
      {"3-D grid of 3-D blocks", dim3(2, 3, sms / 6 > 0 ? sms / 6 : 1), dim3(8, 4, 2)},
  };
  parpat::cuda::GridBarrierMemory memory;  // one memory, re-laid out for every shape
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.what);
    unsigned int blocks = s.grid.x * s.grid.y * s.grid.z;
    auto* slots = zeroed<unsigned int>(blocks);
    auto* early = zeroed<unsigned long long>(1);
    auto* completed = zeroed<unsigned int>(1);
    parpat::cuda::launch_with_grid_barrier(kernel, s.grid, s.block, 0, stream, memory, slots, early,
                                           completed, rounds());
    EXPECT_FALSE(memory.failed(stream));
    EXPECT_EQ(read(early), 0ull);
    EXPECT_EQ(read(completed), blocks) << "blocks that passed every round";
    cudaFree(slots);
    cudaFree(early);
    cudaFree(completed);
  }
  cudaStreamDestroy(stream);
}

TEST(GridBarrier, NoEarlyReleaseOnAnyLayout) {
  SKIP_WITHOUT_GPU();
  expect_no_early_release<parpat::cuda::GridArrivals::block>();
}

TEST(GridBarrier, NoEarlyReleaseOnAnyLayoutWithWarpArrivals) {
  SKIP_WITHOUT_GPU();
  expect_no_early_release<parpat::cuda::GridArrivals::warp>();
}

TEST(GridBarrier, GridBeyondTheResidentBoundIsRefused) {
  SKIP_WITHOUT_GPU();
  auto kernel = stress<parpat::cuda::GridArrivals::block>;
  int largest = parpat::cuda::max_grid_barrier_blocks(kernel, 256);
  parpat::cuda::GridBarrierMemory memory;
  try {
    parpat::cuda::launch_with_grid_barrier(kernel, dim3(largest + 1), dim3(256), 0, nullptr, memory,
                                           nullptr, nullptr, nullptr, 1);
    FAIL() << "a grid of " << largest + 1 << " blocks was launched";
  } catch (const parpat::Error& e) {
    EXPECT_EQ(e.kind(), parpat::ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(std::to_string(largest)), std::string::npos) << e.what();
  }
  EXPECT_THROW(parpat::cuda::plan_grid_barrier(0, 0, 128), parpat::Error);
}

template <parpat::cuda::GridArrivals Arrivals>
void expect_abandoned_barrier_fails() {
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  parpat::cuda::GridBarrierMemory memory(20000000LL);  // about 10 ms
  for (int threads : {32, 128}) {
    for (int blocks : {4, sms * 4}) {
      SCOPED_TRACE(std::to_string(blocks) + " blocks of " + std::to_string(threads));
      auto* gave_up = zeroed<unsigned int>(1);
      parpat::cuda::launch_with_grid_barrier(abandoned<Arrivals>, dim3(blocks), dim3(threads), 0,
                                             nullptr, memory, gave_up);
      EXPECT_TRUE(memory.failed(nullptr));
      EXPECT_EQ(read(gave_up), static_cast<unsigned int>((blocks - 1) * (threads / 32)))
          << "warps that gave up";
      memory.reset(nullptr);
      EXPECT_FALSE(memory.failed(nullptr));
      cudaFree(gave_up);
    }
  }
}

TEST(GridBarrier, AbandonedBarrierFailsWithinItsBound) {
  SKIP_WITHOUT_GPU();
  expect_abandoned_barrier_fails<parpat::cuda::GridArrivals::block>();
  expect_abandoned_barrier_fails<parpat::cuda::GridArrivals::warp>();
}

}  // namespace
}  // namespace parpat::test
