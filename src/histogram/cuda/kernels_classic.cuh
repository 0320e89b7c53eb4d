// The classic CUDA histogram kernels. Counts are 64-bit in global memory.
//  - global-atomic: each thread a contiguous section, one global 64-bit atomic per value;
//  - interleaved: grid-stride (coalesced) reads, global atomics;
//  - privatized: a 32-bit histogram per block in shared memory, added to the global counts at
//    the end (blocks are sized so no block sees 2^31 values: 32-bit counts cannot wrap);
//  - aggregated: privatized, and each thread counts a run of equal slots before one atomic.
#pragma once

#include "histogram/cuda/rules.cuh"

namespace parpat::detail {
// Private to histogram/cuda.cu, the one file that includes it.
namespace {

template <class T, class Rule>
__global__ void global_atomic_kernel(const T* __restrict__ in, long long n, Rule rule,
                                     unsigned long long* counts) {
  long long threads = (long long)gridDim.x * blockDim.x;
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long per = (n + threads - 1) / threads;
  long long begin = t * per, end = min(n, begin + per);
  for (long long i = begin; i < end; ++i)
    atomicAdd(counts + rule.slot(in[i]), 1ull);
}

template <class T, class Rule>
__global__ void interleaved_kernel(const T* __restrict__ in, long long n, Rule rule,
                                   unsigned long long* counts) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(counts + rule.slot(in[i]), 1ull);
}

// Adds a block's shared counts to the global ones: one atomic per non-empty slot.
__device__ void flush(const unsigned* hist, unsigned slots, unsigned replicas,
                      unsigned long long* counts) {
  for (unsigned s = threadIdx.x; s < slots; s += blockDim.x) {
    unsigned long long sum = 0;
    for (unsigned r = 0; r < replicas; ++r)
      sum += hist[r * slots + s];
    if (sum) atomicAdd(counts + s, sum);
  }
}

template <class T, class Rule, bool kAggregate>
__global__ void privatized_kernel(const T* __restrict__ in, long long n, Rule rule, unsigned slots,
                                  unsigned long long* counts) {
  extern __shared__ unsigned hist[];
  for (unsigned s = threadIdx.x; s < slots; s += blockDim.x)
    hist[s] = 0;
  __syncthreads();
  long long stride = (long long)gridDim.x * blockDim.x;
  unsigned run_slot = kNone, run = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    unsigned s = rule.slot(in[i]);
    if constexpr (kAggregate) {
      if (s == run_slot) {
        ++run;
        continue;
      }
      if (run) atomicAdd(hist + run_slot, run);
      run_slot = s;
      run = 1;
    } else {
      atomicAdd(hist + s, 1u);
    }
  }
  if (kAggregate && run) atomicAdd(hist + run_slot, run);
  __syncthreads();
  flush(hist, slots, 1, counts);
}
}  // namespace
}  // namespace parpat::detail
