// The classic CUDA grid barriers: atomic-all (every thread a release increment, then an acquire
// spin), representative (one thread per block arrives, the others wait at __syncthreads) and
// flags (Xiao & Feng: a flag per block, a master block that waits for all and releases them).
#pragma once

#include "barrier/cuda/words.cuh"

namespace parpat::detail {
// Private to barrier/cuda.cu, the one file that includes it.
namespace {

// Every thread is a participant: one release increment each, then an acquire spin.
struct AtomicAllBarrier {
  Words words;
  unsigned int epoch = 0;
  __device__ bool sync() {
    unsigned int participants = gridDim.x * blockDim.x;
    unsigned int target = ++epoch * participants;
    unsigned int* counter = words.counter();
    gb::red_add_release(counter, 1u);
    return bounded_spin([&] { return reached(gb::load_acquire(counter), target); }, words.error(),
                        kTimeoutCycles);
  }
};

// One thread per block arrives; the block's other threads wait at __syncthreads.
struct RepresentativeBarrier {
  Words words;
  unsigned int epoch = 0;
  __device__ bool sync() {
    __syncthreads();
    ++epoch;
    bool ok = true;
    if (threadIdx.x == 0) {
      unsigned int target = epoch * gridDim.x;
      unsigned int* counter = words.counter();
      gb::red_add_release(counter, 1u);
      ok = bounded_spin([&] { return reached(gb::load_acquire(counter), target); }, words.error(),
                        kTimeoutCycles);
    }
    return __syncthreads_and(ok) != 0;
  }
};

// Xiao & Feng: block b raises in[b]; block 0's threads wait for every in[], meet, and raise
// every out[]; block b waits for out[b]. No atomics, no contended word.
struct FlagsBarrier {
  Words words;
  unsigned int epoch = 0;
  __device__ bool sync() {
    __syncthreads();
    ++epoch;
    bool ok = true;
    if (blockIdx.x == 0) {
      for (unsigned int b = threadIdx.x + 1; ok && b < gridDim.x; b += blockDim.x) {
        unsigned int* flag = words.in() + b;
        ok = bounded_spin([&] { return reached(gb::load_acquire(flag), epoch); }, words.error(),
                          kTimeoutCycles);
      }
      ok = __syncthreads_and(ok) != 0;
      for (unsigned int b = threadIdx.x + 1; ok && b < gridDim.x; b += blockDim.x)
        gb::store_release(words.out() + b, epoch);
      return ok;
    }
    if (threadIdx.x == 0) {
      gb::store_release(words.in() + blockIdx.x, epoch);
      unsigned int* flag = words.out() + blockIdx.x;
      ok = bounded_spin([&] { return reached(gb::load_acquire(flag), epoch); }, words.error(),
                        kTimeoutCycles);
    }
    return __syncthreads_and(ok) != 0;
  }
};

}  // namespace
}  // namespace parpat::detail
