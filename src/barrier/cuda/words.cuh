// The workspace of the classic CUDA grid barriers and their bounded spin. Word 0 is the arrival
// counter, word 1 the error word (the same two words as the public barrier's layout, so one
// check reads any method's failure), then the flags method's `in` and `out` arrays, one word per
// block each. The memory operations are the public barrier's (parpat/cuda/grid_barrier_words.cuh).
#pragma once

#include <cooperative_groups.h>

#include <cstddef>

#include "parpat/cuda/grid_barrier.cuh"

namespace parpat::detail {
// Private to barrier/cuda.cu, the one file that includes it.
namespace {

namespace cg = cooperative_groups;
namespace gb = parpat::cuda::detail;

constexpr long long kTimeoutCycles = parpat::cuda::GridBarrier::kDefaultTimeoutCycles;

// Whether a monotonic counter has reached `target`, across wrap-around of 32 bits.
__device__ inline bool reached(unsigned int value, unsigned int target) {
  return static_cast<int>(value - target) >= 0;
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
      if (gb::load_relaxed(error) != 0) return false;
      if (clock64() - start > timeout_cycles) {
        atomicExch(error, 1u);
        return false;
      }
    }
  }
}

struct Words {
  unsigned int* base;
  __device__ unsigned int* counter() const { return base; }
  __device__ unsigned int* error() const { return base + 1; }
  __device__ unsigned int* in() const { return base + 2; }
  __device__ unsigned int* out() const { return base + 2 + gridDim.x; }
};

// The words the classic methods need for `groups` blocks.
std::size_t classic_words(int groups) {
  return 2 + 2 * static_cast<std::size_t>(groups);
}

}  // namespace
}  // namespace parpat::detail
