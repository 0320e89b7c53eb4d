// parpat/cuda/grid_barrier.cuh — a grid-wide barrier for users' own CUDA kernels.
//
// A barrier across the whole grid is only correct when every block of the grid is resident at
// once; GPUs promise nothing about blocks that are not. So a kernel that calls
// GridBarrier::sync() must be launched through launch_with_grid_barrier(), which computes the
// largest co-resident grid for that kernel, block size and dynamic shared memory, launches
// cooperatively (the driver then guarantees co-residency) and refuses anything larger.
//
// The barrier (`flip`): one 32-bit word. Block 0 adds 0x80000000 − (n − 1), every other block
// adds 1, each with one release atomic from its thread 0; the n additions sum to exactly
// 0x80000000, so bit 31 flips at the moment the last block arrives, whoever it is, and every
// partial sum leaves it alone. The block whose own atomic flipped the bit (it sees that in the
// returned value) is last and does not wait; the others poll with relaxed loads until bit 31
// differs from the value their atomic returned, and acquire once, with one fence, after the
// flip: an acquire load per poll would invalidate the L1 cache on every iteration. Nothing is
// ever reset, so there is no reset to race with: the low 31 bits are back to zero after each
// barrier, and a block can enter the next barrier while others are still leaving this one (bit
// 31 cannot flip again without them).
//
// Never hang: every spin is bounded (GridBarrier::timeout_cycles, about a second by default).
// A block that exceeds it sets the error word of the barrier state and returns false from
// sync(); every other waiter sees the error word within about a thousand polls and returns
// false too. The host reads the error word with GridBarrierMemory::failed().
//
// Usage:
//   __global__ void step(parpat::cuda::GridBarrier barrier, float* a, int iterations) {
//     for (int it = 0; it < iterations; ++it) {
//       ...phase 1...
//       if (!barrier.sync()) return;
//       ...phase 2...
//     }
//   }
//   parpat::cuda::GridBarrierMemory memory;
//   parpat::cuda::launch_with_grid_barrier(step, grid, block, 0, stream, memory.barrier(), a, n);
//   if (memory.failed(stream)) ...
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include "parpat/error.hpp"

namespace parpat::cuda {

// The barrier's state in device memory: the arrival word and the error word. Zero-initialised.
struct GridBarrierState {
  unsigned int arrive;
  unsigned int error;  // non-zero once a spin ran past its bound
};

namespace detail {

// The synchronisation primitives, in PTX with the global state space spelled out (the generic
// forms cost an address-space check per access). Arrivals are release atomics, polls relaxed
// loads, and one acquire fence follows the flip.
__device__ inline unsigned int* global_address(unsigned int* p) {
  return reinterpret_cast<unsigned int*>(__cvta_generic_to_global(p));
}

__device__ inline unsigned int load_relaxed(unsigned int* p) {
  unsigned int v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(global_address(p)) : "memory");
  return v;
}

__device__ inline unsigned int load_acquire(unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(global_address(p)) : "memory");
  return v;
}

// Whether this compiler knows `fence.acquire` (PTX ISA 8.6, CUDA 12.8; sm_90 and later): one L1
// invalidation, no wait for outstanding stores as a full fence would.
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
#define PARPAT_HAVE_FENCE_ACQUIRE 1
#else
#define PARPAT_HAVE_FENCE_ACQUIRE 0
#endif

// Turns the preceding relaxed reads into acquire reads (an acquire pattern of the PTX model).
__device__ inline void fence_acquire() {
#if PARPAT_HAVE_FENCE_ACQUIRE && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.acquire.gpu;" ::: "memory");
#else
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
#endif
}

__device__ inline unsigned int fetch_add_release(unsigned int* p, unsigned int v) {
  unsigned int old;
  asm volatile("atom.release.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(global_address(p)), "r"(v)
               : "memory");
  return old;
}

// An arrival that needs no answer: a waiter that knows its target needs no returned value.
__device__ inline void red_add_release(unsigned int* p, unsigned int v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(global_address(p)), "r"(v)
               : "memory");
}

// Whether an arrival that added `add` to `old` flipped bit 31, i.e. was the last one.
__device__ inline bool flipped_by(unsigned int old, unsigned int add) {
  return ((old ^ (old + add)) & 0x80000000u) != 0;
}

// Spins until done() holds and returns true, or returns false once `timeout_cycles` have passed
// (setting *error) or another waiter has set *error. The clock and the error word are read
// only every 1024 polls so that the common, short wait is a tight loop of loads.
template <class Done>
__device__ bool bounded_spin(Done done, unsigned int* error, long long timeout_cycles) {
  if (done()) return true;
  long long start = clock64();
  for (unsigned int polls = 1;; ++polls) {
    if (done()) return true;
    if ((polls & 1023u) == 0) {
      if (load_relaxed(error) != 0) return false;
      if (clock64() - start > timeout_cycles) {
        atomicExch(error, 1u);
        return false;
      }
    }
  }
}

// One arrival at the flip barrier for `participants` arrivals in all; `master` is true for
// exactly one of them. Returns false when the wait timed out or the barrier had failed. Either
// way the caller's later reads are ordered after every arrival it saw (the acquire fence).
__device__ inline bool flip_arrive_and_wait(GridBarrierState* state, unsigned int participants,
                                            bool master, long long timeout_cycles) {
  unsigned int* word = &state->arrive;
  unsigned int add = master ? 0x80000000u - (participants - 1u) : 1u;
  unsigned int old = fetch_add_release(word, add);
  bool ok = flipped_by(old, add) ||
            bounded_spin([&] { return ((load_relaxed(word) ^ old) & 0x80000000u) != 0; },
                         &state->error, timeout_cycles);
  fence_acquire();
  return ok;
}

}  // namespace detail

// The device-side handle, passed to the kernel by value. Every block of the grid must call
// sync() the same number of times, from all of its threads (it contains __syncthreads()).
class GridBarrier {
 public:
  // About one second on current GPUs; long enough for any phase that is not itself stuck.
  static constexpr long long kDefaultTimeoutCycles = 2000000000LL;

  __host__ __device__ explicit GridBarrier(GridBarrierState* state,
                                           long long timeout_cycles = kDefaultTimeoutCycles)
      : state_(state), timeout_cycles_(timeout_cycles) {}

  // Waits until every thread of the grid has called sync() as often as this one; memory
  // written before it by any thread is visible after it to every thread. Returns false (in
  // every thread of the block) when the barrier failed: a wait exceeded the bound.
  __device__ bool sync() const {
    __syncthreads();
    bool ok = true;
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
      bool master = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
      ok = detail::flip_arrive_and_wait(state_, blocks, master, timeout_cycles_);
    }
    return __syncthreads_and(ok) != 0;
  }

  // Whether some wait of this barrier has exceeded its bound (cheap: one load).
  __device__ bool failed() const { return detail::load_relaxed(&state_->error) != 0; }

  __host__ __device__ GridBarrierState* state() const { return state_; }

 private:
  GridBarrierState* state_;
  long long timeout_cycles_;
};

// Throws parpat::Error(backend) naming the call when a CUDA call inside the helpers fails.
inline void grid_barrier_check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  throw Error(ErrorKind::backend,
              std::string("CUDA error in ") + call + ": " + cudaGetErrorString(status), "cuda",
              call, static_cast<int>(status));
}

// The largest grid (in blocks) whose blocks are all resident at once for `kernel` launched with
// `block_threads` threads per block and `dynamic_smem` bytes of dynamic shared memory on the
// current device. Throws Error(unsupported) when the device has no cooperative launch.
template <class Kernel>
int max_grid_barrier_blocks(Kernel kernel, int block_threads, std::size_t dynamic_smem = 0) {
  int device = 0, cooperative = 0, sms = 0, per_sm = 0;
  grid_barrier_check(cudaGetDevice(&device), "cudaGetDevice");
  grid_barrier_check(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device),
                     "cudaDeviceGetAttribute");
  if (!cooperative)
    throw Error(ErrorKind::unsupported,
                "CUDA device " + std::to_string(device) +
                    " has no cooperative launch, so no grid barrier can be guaranteed on it",
                "cuda", "cudaDevAttrCooperativeLaunch");
  grid_barrier_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                     "cudaDeviceGetAttribute");
  grid_barrier_check(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(kernel),
                                                    block_threads, dynamic_smem),
      "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return per_sm * sms;
}

// Launches `kernel(args...)` cooperatively on `stream` after checking that all of `grid` can be
// resident at once. Throws Error(invalid_argument) naming the largest safe grid when it cannot,
// Error(unsupported) when the device has no cooperative launch; a launch is never attempted
// that could hang.
template <class... Params, class... Args>
void launch_with_grid_barrier(void (*kernel)(Params...), dim3 grid, dim3 block,
                              std::size_t dynamic_smem, cudaStream_t stream, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "argument count differs from the kernel's");
  int threads = static_cast<int>(block.x * block.y * block.z);
  long long blocks = static_cast<long long>(grid.x) * grid.y * grid.z;
  int largest = max_grid_barrier_blocks(kernel, threads, dynamic_smem);
  if (blocks < 1 || blocks > largest)
    throw Error(ErrorKind::invalid_argument,
                "a grid of " + std::to_string(blocks) + " blocks of " + std::to_string(threads) +
                    " threads (" + std::to_string(dynamic_smem) +
                    " bytes of dynamic shared memory) cannot be resident at once on this "
                    "device; the largest safe grid for this kernel is " +
                    std::to_string(largest) + " blocks",
                "cuda", "launch_with_grid_barrier");
  std::tuple<std::decay_t<Params>...> values(std::forward<Args>(args)...);
  std::apply(
      [&](auto&... v) {
        void* argv[] = {static_cast<void*>(&v)..., nullptr};
        grid_barrier_check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid,
                                                       block, argv, dynamic_smem, stream),
                           "cudaLaunchCooperativeKernel");
      },
      values);
}

// Owns one GridBarrierState in device memory (of the device current at construction).
class GridBarrierMemory {
 public:
  GridBarrierMemory() {
    grid_barrier_check(cudaMalloc(&state_, sizeof(GridBarrierState)), "cudaMalloc");
    grid_barrier_check(cudaMemset(state_, 0, sizeof(GridBarrierState)), "cudaMemset");
  }
  ~GridBarrierMemory() { cudaFree(state_); }
  GridBarrierMemory(const GridBarrierMemory&) = delete;
  GridBarrierMemory& operator=(const GridBarrierMemory&) = delete;

  GridBarrier barrier(long long timeout_cycles = GridBarrier::kDefaultTimeoutCycles) const {
    return GridBarrier(state_, timeout_cycles);
  }
  // Clears the state after a failure (a completed launch leaves it ready for the next one).
  void reset(cudaStream_t stream) {
    grid_barrier_check(cudaMemsetAsync(state_, 0, sizeof(GridBarrierState), stream),
                       "cudaMemsetAsync");
  }
  // Waits for `stream` and tells whether a wait of the barrier exceeded its bound.
  bool failed(cudaStream_t stream) const {
    unsigned int error = 0;
    grid_barrier_check(
        cudaMemcpyAsync(&error, &state_->error, sizeof error, cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync");
    grid_barrier_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return error != 0;
  }
  GridBarrierState* state() const { return state_; }

 private:
  GridBarrierState* state_ = nullptr;
};

}  // namespace parpat::cuda
