// Joint histogram kernels (numpy.histogramdd; OpenCL 1.2, cl_khr_fp64). A sample's slot is the
// C-order index of its coordinates' bins, then one slot for the samples in no bin (a coordinate
// outside its range, or NaN). Coordinate d of sample i is c0[i·DIMS + d] of one (N, DIMS) array
// (INTERLEAVED) or c<d>[i] of DIMS arrays; it is compared as a double. Each axis is six doubles of
// `axes` (lo, hi, step, norm, bins, offset of its edges in `edges`, −1 for even bins): even bins
// take the candidate (x − lo)·norm corrected against the exact edges i·step + lo (FP_CONTRACT off:
// no fused multiply-add changes an edge), explicit edges a binary search.
// Two programs share this file. The counting one (JOINT_WEIGHTED 0) is built after
// histogram_rules.cl and histogram_sink.cl and counts slot s as row s + 1 (row 0: the samples in
// no bin, so slot_of_row maps rows back) in `fast`'s sink — lane-striped 32-bit local counters,
// packed fields in ranges of rows counted side by side, or the 64-bit global counts — laid out
// as for 1-D input of as many rows (opencl_layout.cpp); groups are sized so none sees 2^31
// samples:
//  - joint_count: any dtype, dimension count and bins, one sample at a time in a grid-stride loop
//    (each group's stride over its chunk of the input, as fast_local's ranges need);
//  - joint_pairs: 2-D float32 samples with even bins on both axes (PAIRS), read as 16-byte
//    vectors, UNROLL units in flight (a unit: one float4 of an (N, 2) array, two samples, or one
//    float4 of each of two arrays, four); each coordinate's bin by the float rule
//    (float_quick_row), one near an edge settled against the float64 edges; register runs for
//    skewed data where the layout asks for them (RUNS).
// The weighted one (JOINT_WEIGHTED 1) is built after histogram_add_f64.cl:
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
#ifndef JOINT_WEIGHTED
#define JOINT_WEIGHTED 0
#endif
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define COORDINATES                                                                       \
  __global const T *c0, __global const T *c1, __global const T *c2, __global const T *c3, \
      __global const T *c4, __global const T *c5, __global const T *c6, __global const T *c7

#if INTERLEAVED
#define COORD(i, d) c0[(i)*DIMS + (d)]
#else
#define COORD(i, d)   \
  ((d) == 0   ? c0[i] \
   : (d) == 1 ? c1[i] \
   : (d) == 2 ? c2[i] \
   : (d) == 3 ? c3[i] \
   : (d) == 4 ? c4[i] \
   : (d) == 5 ? c5[i] \
   : (d) == 6 ? c6[i] \
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

#if !JOINT_WEIGHTED
// This group's range of rows and its place among the groups that read the same chunk of the
// input: group g counts range g % passes of chunk g / passes.
#define GROUP_RANGE                                                                                \
  const uint slot_bins = counted - 1;                                                              \
  const uint first = (get_group_id(0) % passes) * span;                                            \
  const uint range = LOCAL_COUNTS ? (first < counted ? min(span, counted - first) : 0) : NO_INDEX; \
  const long stride = (get_num_groups(0) / passes) * get_local_size(0);                            \
  const long item = (get_group_id(0) / passes) * get_local_size(0) + get_local_id(0)

// Zeroes the group's local counters (LOCAL_COUNTS) and returns its sink.
__local uint* open_sink(__local uint* hist, uint range) {
#if LOCAL_COUNTS
#if PACKED
  const uint words = packed_words(range) + 3 * HOT_ENTRIES;
#else
  const uint words = striped_words(range);
#endif
  for (uint i = get_local_id(0); i < words; i += get_local_size(0))
    hist[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  return PACKED ? hist : hist + (get_local_id(0) & (COLUMNS - 1));
}

// Adds the group's local counters to the 64-bit counts (LOCAL_COUNTS).
void close_sink(__local uint* hist, uint first, uint range, uint slot_bins,
                __global ulong* counts) {
#if LOCAL_COUNTS
  barrier(CLK_LOCAL_MEM_FENCE);
  flush_rows(hist, first, range, slot_bins, 0, counts);
#if HOT_ENTRIES
  flush_hot_rows(hist, counts, first, range, slot_bins, 0);
#endif
#endif
}

#define JOINT_SINK_ARGS !LOCAL_COUNTS, WHOLE, sink, counts, first, range, slot_bins, 0

__kernel void joint_count(COORDINATES, long n, __constant const double* axes,
                          __global const double* edges, uint passes, uint span, uint counted,
                          __local uint* hist, __global ulong* counts) {
  GROUP_RANGE;
  const uint outside = slot_bins;
  __local uint* sink = open_sink(hist, range);
  uint run_row = range, run_count = 0;
  for (long i = item; i < n; i += stride) {
    const uint s = SAMPLE_SLOT(i);
    const uint r = (s == outside ? 0 : s + 1) - first;
    if (RUNS) {
      run_add(JOINT_SINK_ARGS, &run_row, &run_count, r, 1);
    } else {
      sink_add(JOINT_SINK_ARGS, r, 1);
    }
  }
  if (run_count) sink_add(JOINT_SINK_ARGS, run_row, run_count);
  close_sink(hist, first, range, slot_bins, counts);
}

#if PAIRS
#define PAIR_PARAMS                                                                      \
  float lo0, float norm0, float delta0, int bins0, float lo1, float norm1, float delta1, \
      int bins1, __constant const double *axes, __global const double *edges
#define PAIR_ARGS lo0, norm0, delta0, bins0, lo1, norm1, delta1, bins1, axes, edges

// The row of a coordinate on one float32 axis of even bins: 1 + its bin, 0 outside the axis or
// NaN. The float rule's row where it is exact, else the float64 axis (axis_bin).
uint axis_row(float x, float lo, float norm, float delta, int bins, __constant const double* axis,
              __global const double* edges) {
  bool exact;
  const uint r = float_quick_row(x, lo, norm, delta, bins, &exact);
  if (exact) return r <= (uint)bins ? r : 0;
  const uint b = axis_bin((double)x, axis, edges);
  return b < (uint)bins ? b + 1 : 0;
}

// The row of sample (x, y): 1 + its slot, 0 in no bin.
uint pair_row(float x, float y, PAIR_PARAMS) {
  const uint rx = axis_row(x, lo0, norm0, delta0, bins0, axes, edges);
  const uint ry = axis_row(y, lo1, norm1, delta1, bins1, axes + 6, edges);
  return rx && ry ? (rx - 1) * (uint)bins1 + ry : 0;
}

// Counts one unit's VEC samples: through the work-item's run where it continues the run or
// begins and ends on one row (RUNS), else one add each.
void count_unit(float4 a, float4 b, PAIR_PARAMS, SINK_PARAMS, uint* run_row, uint* run_count) {
  uint rows[VEC];
#if INTERLEAVED
  rows[0] = pair_row(a.x, a.y, PAIR_ARGS);
  rows[1] = pair_row(a.z, a.w, PAIR_ARGS);
#else
  rows[0] = pair_row(a.x, b.x, PAIR_ARGS);
  rows[1] = pair_row(a.y, b.y, PAIR_ARGS);
  rows[2] = pair_row(a.z, b.z, PAIR_ARGS);
  rows[3] = pair_row(a.w, b.w, PAIR_ARGS);
#endif
#pragma unroll
  for (int k = 0; k < VEC; ++k)
    rows[k] -= first;
  if (RUNS && (rows[0] == *run_row || rows[0] == rows[VEC - 1])) {
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      run_add(SINK_ARGS, run_row, run_count, rows[k], 1);
    return;
  }
  sink_add_ones(SINK_ARGS, rows);
}

// xs: the (N, 2) array, or the first coordinates; ys: the second coordinates (two arrays).
__kernel void joint_pairs(__global const float4* xs, __global const float4* ys, long n, PAIR_PARAMS,
                          uint passes, uint span, uint counted, __local uint* hist,
                          __global ulong* counts) {
  GROUP_RANGE;
  __local uint* sink = open_sink(hist, range);
  uint run_row = range, run_count = 0;
  const long units = n / VEC;
  long v = item;
  for (; v + (UNROLL - 1) * stride < units; v += UNROLL * stride) {
    float4 a[UNROLL], b[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      a[u] = xs[v + u * stride];
      b[u] = INTERLEAVED ? a[u] : ys[v + u * stride];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      count_unit(a[u], b[u], PAIR_ARGS, JOINT_SINK_ARGS, &run_row, &run_count);
  }
  for (; v < units; v += stride) {
    const float4 a = xs[v];
    count_unit(a, INTERLEAVED ? a : ys[v], PAIR_ARGS, JOINT_SINK_ARGS, &run_row, &run_count);
  }
  if (run_count) sink_add(JOINT_SINK_ARGS, run_row, run_count);
  __global const float* x = (__global const float*)xs;
  __global const float* y = (__global const float*)ys;
  for (long i = units * VEC + item; i < n; i += stride) {
    const uint r =
        INTERLEAVED ? pair_row(x[2 * i], x[2 * i + 1], PAIR_ARGS) : pair_row(x[i], y[i], PAIR_ARGS);
    sink_add(JOINT_SINK_ARGS, r - first, 1);
  }
  close_sink(hist, first, range, slot_bins, counts);
}
#endif
#else
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
#endif
