// Histogram kernels (OpenCL 1.2). A value maps to a slot — bins 0 .. N−1, then underflow,
// overflow and NaN — by one rule chosen at build time: RULE 0 a value → slot table (uint8 and
// uint16 input, filled on the host by the reference), RULE 1 even bins (a float64 candidate
// (x − lo)·norm corrected against the exact edges i·step + lo; FP_CONTRACT is off so no fused
// multiply-add changes an edge), RULE 2 a binary search over explicit float64 edges.
// Counts are 64-bit: atom_add where cl_khr_int64_base_atomics exists (INT64_ATOMICS=1), else
// two 32-bit words with a carry (correct for counters that are only read at the end).
//  - global_atomic: a contiguous section per work-item, global atomics;
//  - interleaved: grid-stride (coalesced) reads, global atomics;
//  - privatized / aggregated: a 32-bit histogram per group in local memory, added to the global
//    counts at the end; aggregated counts a run of equal slots before one local atomic;
//  - fast_local: 16-byte vector loads, REPLICAS local sub-histograms per group (work-item i uses
//    copy i % REPLICAS) against same-address contention, run aggregation per work-item, and a
//    slot range [first, first + range) so the host can make passes when the slots exceed local
//    memory; fast_global: the same loads and run aggregation into global counts.
// Groups are sized by the host so none sees 2^31 values: the 32-bit local counts cannot wrap.
#pragma OPENCL FP_CONTRACT OFF

#ifndef T
#define T float
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef RULE
#define RULE 1
#endif
#ifndef INT64_ATOMICS
#define INT64_ATOMICS 1
#endif

#if RULE != 0
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b
#define VTYPE CAT(T, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)

#if INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
void add_count(__global ulong* counts, uint slot, ulong v) {
  atom_add(counts + slot, v);
}
#else
void add_count(__global ulong* counts, uint slot, ulong v) {
  __global uint* words = (__global uint*)(counts + slot);  // little-endian: low word first
  uint low = (uint)v, high = (uint)(v >> 32);
  uint old = atomic_add(words, low);
  if (old + low < old) high += 1;  // the low word wrapped: carry into the high word
  if (high) atomic_add(words + 1, high);
}
#endif

#if RULE == 0
#define RULE_PARAMS __global const uint *table
#define SLOT(x) table[x]
#elif RULE == 1
#define RULE_PARAMS long bins, double lo, double hi, double step, double norm
#define SLOT(x) even_slot((double)(x), bins, lo, hi, step, norm)
double even_edge(long i, double lo, double step) {
  double scaled = (double)i * step;
  return scaled + lo;
}
uint even_slot(double x, long bins, double lo, double hi, double step, double norm) {
  if (!(x >= lo)) return (uint)(isnan(x) ? bins + 2 : bins);
  if (x > hi) return (uint)(bins + 1);
  double t = (x - lo) * norm;
  long c = t < (double)bins ? (long)t : bins - 1;
  while (c > 0 && x < even_edge(c, lo, step)) --c;
  while (c < bins - 1 && x >= even_edge(c + 1, lo, step)) ++c;
  return (uint)c;
}
#else
#define RULE_PARAMS __global const double *edges, long bins
#define SLOT(x) edges_slot((double)(x), edges, bins)
uint edges_slot(double x, __global const double* edges, long bins) {
  if (!(x >= edges[0])) return (uint)(isnan(x) ? bins + 2 : bins);
  if (x > edges[bins]) return (uint)(bins + 1);
  long below = 0, above = bins;
  while (above - below > 1) {
    long mid = below + (above - below) / 2;
    if (edges[mid] <= x)
      below = mid;
    else
      above = mid;
  }
  return (uint)below;
}
#endif

__kernel void global_atomic(__global const T* in, long n, RULE_PARAMS, __global ulong* counts) {
  long threads = get_global_size(0), t = get_global_id(0);
  long per = (n + threads - 1) / threads;
  long begin = t * per, end = min(n, begin + per);
  for (long i = begin; i < end; ++i) add_count(counts, SLOT(in[i]), 1);
}

__kernel void interleaved(__global const T* in, long n, RULE_PARAMS, __global ulong* counts) {
  long stride = get_global_size(0);
  for (long i = get_global_id(0); i < n; i += stride) add_count(counts, SLOT(in[i]), 1);
}

// Adds `replicas` local copies of `range` slots to counts[first ..]: one atomic per non-empty slot.
void flush(__local const uint* hist, uint range, uint replicas, uint first,
           __global ulong* counts) {
  for (uint s = get_local_id(0); s < range; s += get_local_size(0)) {
    ulong sum = 0;
    for (uint r = 0; r < replicas; ++r) sum += hist[r * range + s];
    if (sum) add_count(counts, first + s, sum);
  }
}

__kernel void privatized(__global const T* in, long n, RULE_PARAMS, uint slots,
                         __local uint* hist, __global ulong* counts) {
  for (uint s = get_local_id(0); s < slots; s += get_local_size(0)) hist[s] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  long stride = get_global_size(0);
  for (long i = get_global_id(0); i < n; i += stride) atomic_inc(hist + SLOT(in[i]));
  barrier(CLK_LOCAL_MEM_FENCE);
  flush(hist, slots, 1, 0, counts);
}

__kernel void aggregated(__global const T* in, long n, RULE_PARAMS, uint slots,
                         __local uint* hist, __global ulong* counts) {
  for (uint s = get_local_id(0); s < slots; s += get_local_size(0)) hist[s] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  long stride = get_global_size(0);
  uint run_slot = 0xFFFFFFFFu, run = 0;
  for (long i = get_global_id(0); i < n; i += stride) {
    uint s = SLOT(in[i]);
    if (s == run_slot) {
      ++run;
    } else {
      if (run) atomic_add(hist + run_slot, run);
      run_slot = s;
      run = 1;
    }
  }
  if (run) atomic_add(hist + run_slot, run);
  barrier(CLK_LOCAL_MEM_FENCE);
  flush(hist, slots, 1, 0, counts);
}

__kernel void fast_local(__global const T* in, long n, RULE_PARAMS, uint first, uint range,
                         uint replicas, __local uint* hist, __global ulong* counts) {
  for (uint s = get_local_id(0); s < range * replicas; s += get_local_size(0)) hist[s] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local uint* mine = hist + (get_local_id(0) % replicas) * range;
  long stride = get_global_size(0), vectors = n / VEC;
  uint run_slot = 0xFFFFFFFFu, run = 0;
  for (long v = get_global_id(0); v < vectors; v += stride) {
    T values[VEC];
    VSTORE(VLOAD(v, in), 0, values);
    for (int k = 0; k < VEC; ++k) {
      uint s = SLOT(values[k]) - first;
      if (s == run_slot) {
        ++run;
      } else {
        if (run && run_slot < range) atomic_add(mine + run_slot, run);
        run_slot = s;
        run = 1;
      }
    }
  }
  for (long i = vectors * VEC + get_global_id(0); i < n; i += stride) {
    uint s = SLOT(in[i]) - first;
    if (s < range) atomic_inc(mine + s);
  }
  if (run && run_slot < range) atomic_add(mine + run_slot, run);
  barrier(CLK_LOCAL_MEM_FENCE);
  flush(hist, range, replicas, first, counts);
}

__kernel void fast_global(__global const T* in, long n, RULE_PARAMS, __global ulong* counts) {
  long stride = get_global_size(0), vectors = n / VEC;
  uint run_slot = 0xFFFFFFFFu;
  ulong run = 0;
  for (long v = get_global_id(0); v < vectors; v += stride) {
    T values[VEC];
    VSTORE(VLOAD(v, in), 0, values);
    for (int k = 0; k < VEC; ++k) {
      uint s = SLOT(values[k]);
      if (s == run_slot) {
        ++run;
      } else {
        if (run) add_count(counts, run_slot, run);
        run_slot = s;
        run = 1;
      }
    }
  }
  if (run) add_count(counts, run_slot, run);
  for (long i = vectors * VEC + get_global_id(0); i < n; i += stride)
    add_count(counts, SLOT(in[i]), 1);
}
