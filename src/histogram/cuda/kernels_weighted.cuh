// The CUDA weighted histogram kernels: each adds the float64 weight of every value to the sum of
// the value's slot (the slot rules of the counting kernels, rules.cuh).
//  - interleaved: grid-stride (coalesced) reads, one global float64 atomic per value;
//  - fast: grid-stride reads of values and weights, four of each in flight per thread; each
//    thread adds the weights of a run of equal slots in a register (one atomic per run: skewed
//    and all-equal data cost one add per run, not one per value on the same address), and the
//    runs go to a float64 sum per slot in shared memory, lane-striped over `columns` copies
//    (slot s of lane l at s·columns + l mod columns) so the lanes of a warp seldom meet on one
//    address. A block adds its sums (the copies of a slot together) to the global sums at the
//    end, one atomic per slot that took a weight. Slots beyond shared memory go to the global
//    sums directly (kShared false).
#pragma once

#include "histogram/cuda/rules.cuh"

namespace parpat::detail {
// Private to the histogram's CUDA units.
namespace {

template <class T, class W, class Rule>
__global__ void weighted_interleaved_kernel(const T* __restrict__ in, const W* __restrict__ w,
                                            long long n, Rule rule, double* sums) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    bool exact = true;
    unsigned s = quick_place<false>(rule, in[i], exact);
    if (!exact) s = corrected_place<false>(rule, in[i], s);
    atomicAdd(sums + s, double(w[i]));
  }
}

// One thread's run of equal slots and the sum of their weights.
struct WeightRun {
  unsigned slot = kNone;
  double sum = 0;
  template <class Add>
  __device__ void add(unsigned s, double weight, const Add& flush) {
    if (s == slot) {
      sum += weight;
      return;
    }
    if (slot != kNone) flush(slot, sum);
    slot = s;
    sum = weight;
  }
};

// A block's float64 sums per slot: lane-striped shared copies (kShared; slot s of lane l at
// s·columns + l mod columns, zeroed on construction) that finish() adds to the global sums, the
// copies of a slot together, one atomic per slot that took a weight; else the global sums.
template <bool kShared>
struct BlockSums {
  double* part;
  double* sums;
  unsigned slots, columns, column;
  __device__ BlockSums(double* part, double* sums, unsigned slots, unsigned columns)
      : part(part), sums(sums), slots(slots), columns(columns), column(threadIdx.x % 32 % columns) {
    if constexpr (kShared) {
      for (unsigned i = threadIdx.x; i < slots * columns; i += blockDim.x)
        part[i] = 0;
      __syncthreads();
    }
  }
  __device__ void operator()(unsigned s, double v) const {
    if constexpr (kShared) {
      atomicAdd(part + s * columns + column, v);
    } else {
      atomicAdd(sums + s, v);
    }
  }
  // Adds the thread's last run, then (kShared) the block's sums to the global ones.
  __device__ void finish(const WeightRun& run) const {
    if (run.slot != kNone) (*this)(run.slot, run.sum);
    if constexpr (kShared) {
      __syncthreads();
      for (unsigned s = threadIdx.x; s < slots; s += blockDim.x) {
        double sum = 0;
        for (unsigned c = 0; c < columns; ++c)
          sum += part[s * columns + c];
        if (sum != 0) atomicAdd(sums + s, sum);
      }
    }
  }
};

template <class T, class W, class Rule, bool kShared>
__global__ void weighted_fast_kernel(const T* __restrict__ in, const W* __restrict__ w, long long n,
                                     Rule rule, unsigned slots, unsigned columns, double* sums) {
  extern __shared__ double part[];
  const BlockSums<kShared> block(part, sums, slots, columns);
  auto slot_of = [&](T x) {
    bool exact = true;
    unsigned s = quick_place<false>(rule, x, exact);
    return exact ? s : corrected_place<false>(rule, x, s);
  };
  constexpr int kLoads = 4;
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  WeightRun run;
  for (; i + (kLoads - 1) * stride < n; i += kLoads * stride) {
    T x[kLoads];
    W v[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      x[k] = __ldcs(in + i + k * stride);
      v[k] = __ldcs(w + i + k * stride);
    }
#pragma unroll
    for (int k = 0; k < kLoads; ++k)
      run.add(slot_of(x[k]), double(v[k]), block);
  }
  for (; i < n; i += stride)
    run.add(slot_of(in[i]), double(w[i]), block);
  block.finish(run);
}

}  // namespace
}  // namespace parpat::detail
