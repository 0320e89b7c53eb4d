// The PTX operations with which CUDA reduce `fast` starts early and finishes in one launch,
// shared with the floor probe (bench/floor/reduce_floor.cu) so that it measures the same ones.
#pragma once

#include <cuda_runtime.h>

namespace parpat::detail {

// A ticket that releases the block's partial and, for the last block, acquires all of them: a
// one-way fence each way instead of a sequentially consistent __threadfence on both sides,
// which kept the latency-bound sizes waiting on two full fences.
__device__ __forceinline__ unsigned take_ticket(unsigned* counter) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
               : "=r"(old)
               : "l"(__cvta_generic_to_global(counter))
               : "memory");
  return old;
}

// Programmatic dependent launch (sm_90): `fast` lets the next kernel in the stream launch while
// it runs, and waits for the kernel before it only where it first touches global memory, so a
// run of small reductions overlaps each launch with the previous kernel.
__device__ __forceinline__ void allow_next_launch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void prefetch_to_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p)));
}
__device__ __forceinline__ void wait_for_previous_kernel() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace parpat::detail
