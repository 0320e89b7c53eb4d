// Joint histogram kernels (numpy.histogramdd; OpenCL 1.2, cl_khr_fp64, built after
// histogram_add_f64.cl). A sample's slot is the C-order index of its coordinates' bins, then one
// slot for the samples in no bin (a coordinate outside its range, or NaN). Coordinate d of sample
// i is c0[i·DIMS + d] of one (N, DIMS) array (INTERLEAVED) or c<d>[i] of DIMS arrays; it is
// compared as a double. Each axis is six doubles of `axes` (lo, hi, step, norm, bins, offset of
// its edges in `edges`, −1 for even bins): even bins take the candidate (x − lo)·norm corrected
// against the exact edges i·step + lo (FP_CONTRACT off: no fused multiply-add changes an edge),
// explicit edges a binary search.
//  - joint_count: a grid-stride loop (2-D float32 samples of one array (PAIRS) two to a float4
//    load, the tail one at a time); 32-bit counters per slot in local memory lane-striped over
//    COLUMNS copies (LOCAL_COUNTS; added to the 64-bit global counts at the end), else 64-bit
//    global atomics. Groups are sized so none sees 2^31 samples.
//  - joint_weighted: the float64 weights (W) of a run of equal slots summed in a register, then
//    added to the sums of histogram_add_f64.cl (local with LOCAL_SUMS, else global).
#pragma OPENCL FP_CONTRACT OFF

#ifndef T
#define T float
#endif
#ifndef BOOL_INPUT
#define BOOL_INPUT 0
#endif
#ifndef DIMS
#define DIMS 2
#endif
#ifndef INTERLEAVED
#define INTERLEAVED 1
#endif
#ifndef LOCAL_COUNTS
#define LOCAL_COUNTS 1
#endif
#ifndef W
#define W double
#endif
#ifndef PAIRS
#define PAIRS 0
#endif

#define COORDINATES                                                                        \
  __global const T *c0, __global const T *c1, __global const T *c2, __global const T *c3, \
      __global const T *c4, __global const T *c5, __global const T *c6, __global const T *c7

#if INTERLEAVED
#define COORD(i, d) c0[(i) * DIMS + (d)]
#else
#define COORD(i, d)                                                           \
  ((d) == 0   ? c0[i]                                                         \
   : (d) == 1 ? c1[i]                                                         \
   : (d) == 2 ? c2[i]                                                         \
   : (d) == 3 ? c3[i]                                                         \
   : (d) == 4 ? c4[i]                                                         \
   : (d) == 5 ? c5[i]                                                         \
   : (d) == 6 ? c6[i]                                                         \
              : c7[i])
#endif

// The bin of x on one axis; `bins` when x is outside the axis or NaN. Bins fit in 32 bits
// (at most 2^26), so the bin arithmetic is 32-bit.
uint axis_bin(double x, __constant const double* axis, __global const double* edges) {
  const uint bins = (uint)axis[4];
  const double offset = axis[5];
  if (offset < 0) {
    const double lo = axis[0], hi = axis[1], step = axis[2], norm = axis[3];
    if (!(x >= lo) || x > hi) return bins;
    const double t = (x - lo) * norm;
    uint c = t < (double)bins ? (uint)t : bins - 1;
    while (c > 0 && x < (double)c * step + lo)
      --c;
    while (c + 1 < bins && x >= (double)(c + 1) * step + lo)
      ++c;
    return c;
  }
  __global const double* e = edges + (uint)offset;
  if (!(x >= e[0]) || x > e[bins]) return bins;
  uint below = 0, above = bins;
  while (above - below > 1) {
    const uint mid = below + (above - below) / 2;
    if (e[mid] <= x) {
      below = mid;
    } else {
      above = mid;
    }
  }
  return below;
}

double coordinate(T v) {
#if BOOL_INPUT
  return v != 0 ? 1.0 : 0.0;
#else
  return (double)v;
#endif
}

// The slot of coordinates x[0 .. DIMS): `outside` when one is in no bin.
uint slot_of(const double* x, __constant const double* axes, __global const double* edges,
             uint outside) {
  uint slot = 0;
  bool inside = true;
  for (int d = 0; d < DIMS; ++d) {
    const uint bins = (uint)axes[6 * d + 4];
    const uint b = axis_bin(x[d], axes + 6 * d, edges);
    inside = inside && b < bins;
    slot = slot * bins + b;
  }
  return inside ? slot : outside;
}

// The slot of sample i.
uint sample_slot(long i, COORDINATES, __constant const double* axes, __global const double* edges,
                 uint outside) {
  double x[DIMS];
  for (int d = 0; d < DIMS; ++d)
    x[d] = coordinate(COORD(i, d));
  return slot_of(x, axes, edges, outside);
}

#define SAMPLE_SLOT(i) sample_slot(i, c0, c1, c2, c3, c4, c5, c6, c7, axes, edges, outside)

// With NVIDIA_PTX (set by the host on NVIDIA only) a local count is the hardware's reduction on a
// 32-bit shared-window address, as the CUDA kernels add: no old value comes back.
#if NVIDIA_PTX
void count_local(__local uint* counter) {
  asm volatile("red.shared.add.u32 [%0], 1;" ::"r"((uint)(size_t)counter) : "memory");
}
#else
void count_local(__local uint* counter) {
  atomic_inc(counter);
}
#endif

// Counts slot s: in the work-item's column of the local counters, or globally.
#if LOCAL_COUNTS
#define COUNT(s) count_local(column + (s) * COLUMNS)
#else
#define COUNT(s) atom_inc(counts + (s))
#endif

__kernel void joint_count(COORDINATES, long n, __constant const double* axes,
                          __global const double* edges, uint outside, __local uint* hist,
                          __global ulong* counts) {
  const uint slots = outside + 1;
#if LOCAL_COUNTS
  for (uint k = get_local_id(0); k < slots * COLUMNS; k += get_local_size(0))
    hist[k] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local uint* column = hist + get_local_id(0) % 32 % COLUMNS;
#endif
  const long stride = get_global_size(0);
  long i = get_global_id(0);
#if PAIRS
  // 2-D float samples of one (N, 2) array, two to a float4 load.
  for (; 2 * i + 1 < n; i += stride) {
    const float4 v = vload4(i, c0);
    const double a[2] = {v.x, v.y}, b[2] = {v.z, v.w};
    COUNT(slot_of(a, axes, edges, outside));
    COUNT(slot_of(b, axes, edges, outside));
  }
  i = 2 * (n / 2) + get_global_id(0);
#endif
  for (; i < n; i += stride)
    COUNT(SAMPLE_SLOT(i));
#if LOCAL_COUNTS
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint r = get_local_id(0); r < slots; r += get_local_size(0)) {
    ulong sum = 0;
    for (uint c = 0; c < COLUMNS; ++c)
      sum += hist[r * COLUMNS + c];
    if (sum) atom_add(counts + r, sum);
  }
#endif
}

__kernel void joint_weighted(COORDINATES, long n, __constant const double* axes,
                             __global const double* edges, uint outside, __global const W* w,
                             __local ulong* part, __global ulong* sums) {
  const uint slots = outside + 1;
  zero_sums(part, slots);
  uint run_slot = NO_RUN;
  double run = 0;
  const long stride = get_global_size(0);
  for (long i = get_global_id(0); i < n; i += stride)
    run_add(SAMPLE_SLOT(i), (double)w[i], &run_slot, &run, part, sums);
  finish_sums(run_slot, run, part, slots, sums);
}
