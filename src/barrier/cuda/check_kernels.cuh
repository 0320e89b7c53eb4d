// The kernels every CUDA barrier method runs: the classic stencil, the stress test that counts
// early releases, and the latency loop, each templated on the method's device-side barrier and
// the handle it is made from (the classic workspace, or the public barrier's GridBarrier).
#pragma once

#include "barrier/cuda/words.cuh"

namespace parpat::detail {
// Private to barrier/cuda.cu, the one file that includes it.
namespace {

// The stencil and stress kernels are held to 32 registers (__launch_bounds__(1024, 2)), so that
// 16 blocks of 128 threads fit on an SM of 64K registers as the latency kernel does by itself:
// the safe grid of a method is the least over its three kernels.
template <class Barrier, class Handle>
__global__ void __launch_bounds__(1024, 2)
    stencil_kernel(Handle handle, unsigned int* a, unsigned int n, long long steps) {
  Barrier barrier{handle};
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int right = i + 1 < n ? i + 1 : i + 1 - n;
  unsigned int right2 = i + 2 < n ? i + 2 : i + 2 - n;
  for (long long s = 0; s < steps; ++s) {
    unsigned int t = a[i] + a[right] + a[right2];
    if (!barrier.sync()) return;
    a[i] = t;
    if (!barrier.sync()) return;
  }
}

// The last thread of each block publishes the round (not thread 0, which arrives for the block
// in most methods, so the barrier must also publish its block's other threads' writes); after
// the barrier every thread checks the block after it and the block half-way round, which must
// hold this round or the next.
template <class Barrier, class Handle>
__global__ void __launch_bounds__(1024, 2)
    stress_kernel(Handle handle, unsigned int* slots, unsigned long long* early, long long rounds) {
  Barrier barrier{handle};
  unsigned int next = (blockIdx.x + 1) % gridDim.x;
  unsigned int far = (blockIdx.x + gridDim.x / 2) % gridDim.x;
  unsigned long long seen = 0;
  for (long long r = 1; r <= rounds; ++r) {
    unsigned int round = static_cast<unsigned int>(r);
    if (threadIdx.x == blockDim.x - 1) gb::store_relaxed(slots + blockIdx.x, round);
    if (!barrier.sync()) break;
    seen += (gb::load_relaxed(slots + next) - round > 1u) ? 1 : 0;
    seen += (gb::load_relaxed(slots + far) - round > 1u) ? 1 : 0;
  }
  if (seen) atomicAdd(early, seen);
}

template <class Barrier, class Handle>
__global__ void latency_kernel(Handle handle, int barriers) {
  Barrier barrier{handle};
  for (int k = 0; k < barriers; ++k)
    if (!barrier.sync()) return;
}

__global__ void stencil_step(const unsigned int* a, unsigned int* b, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int right = i + 1 < n ? i + 1 : i + 1 - n;
  unsigned int right2 = i + 2 < n ? i + 2 : i + 2 - n;
  b[i] = a[i] + a[right] + a[right2];
}

__global__ void stress_publish(unsigned int* slots, unsigned int round) {
  if (threadIdx.x == 0) slots[blockIdx.x] = round;
}

__global__ void stress_check(const unsigned int* slots, unsigned int round,
                             unsigned long long* early) {
  unsigned int next = (blockIdx.x + 1) % gridDim.x;
  unsigned int far = (blockIdx.x + gridDim.x / 2) % gridDim.x;
  unsigned long long seen = (slots[next] != round ? 1 : 0) + (slots[far] != round ? 1 : 0);
  if (seen) atomicAdd(early, seen);
}

__global__ void empty_kernel() {}

}  // namespace
}  // namespace parpat::detail
