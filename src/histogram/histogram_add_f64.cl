// The float64 sums of weighted histograms (OpenCL 1.2), the part of the weighted programs that
// the one-dimensional (histogram_weighted.cl) and joint (histogram_joint.cl) kernels share: atomic
// adds (add_weight on a global sum, add_weight_local on a local one, each sum held as the bits of
// a double in a ulong; a compare-and-swap loop on those bits, cl_khr_int64_base_atomics), and a
// work-item's run of equal slots, whose summed weights go to float64 sums per slot in local
// memory lane-striped over COLUMNS copies (slot s of lane l at s·COLUMNS + l mod COLUMNS) with
// LOCAL_SUMS, else to the global sums. A group adds its local sums (a slot's copies together) to
// the global ones at the end, one add per slot that took a weight.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

#ifndef NVIDIA_PTX
#define NVIDIA_PTX 0
#endif
#ifndef COLUMNS
#define COLUMNS 1
#endif
#ifndef LOCAL_SUMS
#define LOCAL_SUMS 1
#endif

#define NO_RUN 0xFFFFFFFFu

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

// Adds v to slot s: the work-item's copy of the local sums (LOCAL_SUMS), or the global sum.
void add_sum(uint s, double v, __local ulong* part, __global ulong* sums) {
#if LOCAL_SUMS
  add_weight_local(part + s * COLUMNS + get_local_id(0) % 32 % COLUMNS, v);
#else
  add_weight(sums + s, v);
#endif
}

// Zeroes the group's local sums (LOCAL_SUMS) before any work-item adds to them.
void zero_sums(__local ulong* part, uint slots) {
#if LOCAL_SUMS
  for (uint i = get_local_id(0); i < slots * COLUMNS; i += get_local_size(0))
    part[i] = as_ulong(0.0);
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
}

// Adds weight v of slot s to the work-item's run (slot NO_RUN: none yet), adding the run first
// when the slot changes.
void run_add(uint s, double v, uint* run_slot, double* run, __local ulong* part,
             __global ulong* sums) {
  if (s == *run_slot) {
    *run += v;
    return;
  }
  if (*run_slot != NO_RUN) add_sum(*run_slot, *run, part, sums);
  *run_slot = s;
  *run = v;
}

// Adds the work-item's last run, then (LOCAL_SUMS) the group's sums to the global ones.
void finish_sums(uint run_slot, double run, __local ulong* part, uint slots,
                 __global ulong* sums) {
  if (run_slot != NO_RUN) add_sum(run_slot, run, part, sums);
#if LOCAL_SUMS
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_id(0); s < slots; s += get_local_size(0)) {
    double sum = 0;
    for (uint c = 0; c < COLUMNS; ++c)
      sum += as_double(part[s * COLUMNS + c]);
    if (sum != 0) add_weight(sums + s, sum);
  }
#endif
}
