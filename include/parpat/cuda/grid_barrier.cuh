// parpat/cuda/grid_barrier.cuh — a grid-wide barrier for users' own CUDA kernels, the same one
// that parpat's barrier benchmarks time as `flip`.
//
// A barrier across the whole grid is only correct when every block of the grid is resident at
// once; GPUs promise nothing about blocks that are not. So a kernel that synchronises its grid
// must be launched through launch_with_grid_barrier(), which computes the largest co-resident
// grid for that kernel, block size and dynamic shared memory, launches cooperatively (the
// driver then guarantees co-residency) and refuses anything larger.
//
// The algorithm (`flip`): n arrivals meet at one 32-bit word. The first adds 0x80000000 − (n − 1),
// every other 1, each with one release operation; the n additions sum to exactly 0x80000000, so
// bit 31 flips at the moment the last arrival lands, whoever it is, and every partial sum leaves
// it alone. Waiters poll with relaxed loads until bit 31 shows the new generation and acquire
// once, with one fence, after the flip (an acquire load per poll would invalidate the L1 cache on
// every iteration). Nothing is ever reset, so there is no reset to race with: the low bits are
// back to zero after each barrier, and a block can enter the next barrier while others are still
// leaving this one. An arrival is a block (its thread 0, after __syncthreads: GridBarrier and
// GridSync) or a warp (no __syncthreads at all: WarpGridBarrier and WarpGridSync, the faster
// choice for blocks of one warp). The host picks, per device and grid, how the
// arrivals spread (plan_grid_barrier, from parpat's tuning table): from about a hundred to a few
// thousand arrivals over a table of words in lines of their own, each arrival adding to one row
// and its waiters polling one column, so that no L2 line takes all the atomics or all the polls;
// above that through sub-words of about √n arrivals first, with the waiters polling copies of the
// generation. GridSync's comment in parpat/cuda/grid_barrier_sync.cuh has the details.
//
// Never hang: every spin is bounded (about a second by default). A waiter that exceeds it sets
// the error word and sync() returns false; every other waiter sees the error word within about
// a thousand polls and returns false too. The host reads it with GridBarrierMemory::failed().
//
// Usage:
//   __global__ void step(parpat::cuda::GridBarrier barrier, float* a, int iterations) {
//     parpat::cuda::GridSync grid(barrier);  // every thread, before its first sync()
//     for (int it = 0; it < iterations; ++it) {
//       ...phase 1...
//       if (!grid.sync()) return;
//       ...phase 2...
//     }
//   }
//   parpat::cuda::GridBarrierMemory memory;
//   parpat::cuda::launch_with_grid_barrier(step, grid, block, 0, stream, memory, a, n);
//   if (memory.failed(stream)) ...
// Link with parpat (parpat::parpat), which holds the tuning table.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "parpat/cuda/grid_barrier_sync.cuh"
#include "parpat/error.hpp"

namespace parpat::cuda {

// The layout parpat's tuning table gives a barrier of `blocks` blocks of `block_threads`
// threads with `arrivals` on CUDA device `device` (PARPAT_TUNING's barrier.flip values apply).
GridBarrierLayout plan_grid_barrier(int device, int blocks, int block_threads,
                                    GridArrivals arrivals = GridArrivals::block);

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

// Owns the barrier's words in device memory (of the device current at construction). The
// launch prepares them for its grid: they grow, and are zeroed on the launch's stream, whenever
// the layout differs from the previous launch's. Launches that share one must not overlap.
class GridBarrierMemory {
 public:
  explicit GridBarrierMemory(long long timeout_cycles = GridBarrier::kDefaultTimeoutCycles)
      : timeout_cycles_(timeout_cycles) {
    grid_barrier_check(cudaGetDevice(&device_), "cudaGetDevice");
  }
  ~GridBarrierMemory() { cudaFree(words_); }
  GridBarrierMemory(const GridBarrierMemory&) = delete;
  GridBarrierMemory& operator=(const GridBarrierMemory&) = delete;

  // The barrier of a launch of `blocks` blocks of `block_threads` threads on `stream`
  // (launch_with_grid_barrier calls it).
  template <GridArrivals Arrivals>
  BasicGridBarrier<Arrivals> prepare(int blocks, int block_threads, cudaStream_t stream) {
    GridBarrierLayout layout = plan_grid_barrier(device_, blocks, block_threads, Arrivals);
    std::size_t words = detail::workspace_words(
        layout, detail::arrival_count(static_cast<unsigned int>(blocks),
                                      static_cast<unsigned int>(block_threads), Arrivals));
    if (words > capacity_) {
      cudaFree(words_);
      words_ = nullptr;
      capacity_ = 0;
      grid_barrier_check(cudaMalloc(&words_, words * sizeof(unsigned int)), "cudaMalloc");
      capacity_ = words;
      prepared_ = false;
    }
    if (!prepared_ || !(layout == layout_)) {
      grid_barrier_check(cudaMemsetAsync(words_, 0, capacity_ * sizeof(unsigned int), stream),
                         "cudaMemsetAsync");
      layout_ = layout;
      prepared_ = true;
    }
    return BasicGridBarrier<Arrivals>{words_, layout, timeout_cycles_};
  }

  // Clears the words after a failure (a completed launch leaves them ready for the next one).
  void reset(cudaStream_t stream) {
    if (words_ != nullptr)
      grid_barrier_check(cudaMemsetAsync(words_, 0, capacity_ * sizeof(unsigned int), stream),
                         "cudaMemsetAsync");
  }
  // Waits for `stream` and tells whether a wait of the barrier exceeded its bound.
  bool failed(cudaStream_t stream) const {
    unsigned int error = 0;
    if (words_ != nullptr)
      grid_barrier_check(
          cudaMemcpyAsync(&error, words_ + 1, sizeof error, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
    grid_barrier_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return error != 0;
  }

 private:
  int device_ = 0;
  long long timeout_cycles_;
  unsigned int* words_ = nullptr;
  std::size_t capacity_ = 0;  // in words
  GridBarrierLayout layout_ = {};
  bool prepared_ = false;
};

namespace detail {

template <class T>
struct IsGridBarrier : std::false_type {};
template <GridArrivals Arrivals>
struct IsGridBarrier<BasicGridBarrier<Arrivals>> : std::true_type {
  static constexpr GridArrivals kArrivals = Arrivals;
};

// A launch argument as the kernel receives it: a GridBarrierMemory becomes the barrier prepared
// for this launch's grid and the parameter's arrivals, anything else passes through.
template <class Param, class Arg>
decltype(auto) launch_argument(Arg&& arg, int blocks, int threads, cudaStream_t stream) {
  if constexpr (std::is_same_v<std::decay_t<Arg>, GridBarrierMemory>) {
    static_assert(IsGridBarrier<Param>::value,
                  "a GridBarrierMemory can only be passed for a GridBarrier parameter");
    return arg.template prepare<IsGridBarrier<Param>::kArrivals>(blocks, threads, stream);
  } else {
    static_assert(!IsGridBarrier<std::decay_t<Arg>>::value,
                  "pass the GridBarrierMemory: the launch prepares the barrier for its grid");
    return std::forward<Arg>(arg);
  }
}

}  // namespace detail

// Launches `kernel(args...)` cooperatively on `stream` after checking that all of `grid` can be
// resident at once; a GridBarrierMemory passed for a GridBarrier (or WarpGridBarrier) parameter
// becomes the barrier laid out for this grid. Throws Error(invalid_argument) naming the largest
// safe grid when the grid cannot be resident, Error(unsupported) when the device has no cooperative
// launch; a launch is never attempted that could hang.
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
  std::tuple<std::decay_t<Params>...> values(detail::launch_argument<std::decay_t<Params>>(
      std::forward<Args>(args), static_cast<int>(blocks), threads, stream)...);
  std::apply(
      [&](auto&... v) {
        void* argv[] = {static_cast<void*>(&v)..., nullptr};
        grid_barrier_check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid,
                                                       block, argv, dynamic_smem, stream),
                           "cudaLaunchCooperativeKernel");
      },
      values);
}

}  // namespace parpat::cuda
