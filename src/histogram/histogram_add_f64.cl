// Float64 atomic adds (OpenCL 1.2), the part of the weighted histogram programs that the
// one-dimensional (histogram_weighted.cl) and joint (histogram_joint.cl) kernels share:
// add_weight on a global sum, add_weight_local on a local one, each sum held as the bits of a
// double in a ulong. A compare-and-swap loop on the sum's bits (cl_khr_int64_base_atomics).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

#ifndef NVIDIA_PTX
#define NVIDIA_PTX 0
#endif

// With NVIDIA_PTX (set by the host on NVIDIA only) the adds are the hardware's float64 reductions
// on a 32-bit shared-window or a global address, as the CUDA kernels' atomicAdd.
#if NVIDIA_PTX
void add_weight(volatile __global ulong* sum, double v) {
  asm volatile("red.global.add.f64 [%0], %1;" ::"l"((ulong)(size_t)sum), "d"(v) : "memory");
}
void add_weight_local(volatile __local ulong* sum, double v) {
  asm volatile("red.shared.add.f64 [%0], %1;" ::"r"((uint)(size_t)sum), "d"(v) : "memory");
}
#else
// The compare-and-swap loop, once per address space (OpenCL 1.2 has no generic pointers).
#define ADD_WEIGHT(name, space)                                     \
  void name(volatile space ulong* sum, double v) {                  \
    ulong seen, old = *sum;                                         \
    do {                                                            \
      seen = old;                                                   \
      old = atom_cmpxchg(sum, seen, as_ulong(as_double(seen) + v)); \
    } while (old != seen);                                          \
  }
ADD_WEIGHT(add_weight, __global)
ADD_WEIGHT(add_weight_local, __local)
#endif
