// Histogram kernels (OpenCL 1.2). A value maps to a slot — bins 0 .. N−1, then underflow,
// overflow and NaN — by one rule chosen at build time: RULE 0 a value → slot table (uint8 and
// uint16 input, filled on the host by the reference), RULE 1 even bins (a float64 candidate
// (x − lo)·norm corrected against the exact edges i·step + lo), RULE 2 a binary search over
// explicit float64 edges, RULE 3 even bins for float32 input in float arithmetic (the candidate
// floor((x − lo)·norm) taken when its fractional part is at least `delta` from an integer, else
// corrected against the float thresholds — histogram_internal.hpp's FloatEvenRule). FP_CONTRACT
// is off so no fused multiply-add changes an edge or a candidate.
// Counts are 64-bit: atom_add where cl_khr_int64_base_atomics exists (INT64_ATOMICS=1), else
// two 32-bit words with a carry (correct for counters that are only read at the end).
//  - global_atomic: a contiguous section per work-item, global atomics;
//  - interleaved: grid-stride (coalesced) reads, global atomics;
//  - privatized / aggregated: a 32-bit histogram per group in local memory, added to the global
//    counts at the end; aggregated counts a run of equal slots before one local atomic;
//  - fast_local: 16-byte loads (UNROLL of them in flight per work-item) into one lane-striped
//    local histogram per group: counter (index, column) at index·COLUMNS + column, work-item i
//    in column i % COLUMNS, so with 32 columns every lane of a warp owns a bank and equal values
//    cost no contention. uint8 input (COUNT_VALUES) is counted per value, whatever the bins, and
//    the values are mapped to slots only when the group flushes. With RUNS a cheap test per
//    vector (does it continue the work-item's run, or begin and end on one index?) sends skewed
//    data through a run of equal indices kept in registers and added with one atomic. When the
//    slots exceed local memory, groups count different slot ranges side by side over the same input
//    chunk;
//  - fast_global: the same loads and register runs, counting into the global counts.
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
#ifndef COLUMNS
#define COLUMNS 1
#endif
#ifndef RUNS
#define RUNS 1
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef COUNT_VALUES
#define COUNT_VALUES 0
#endif
#ifndef NVIDIA_PTX
#define NVIDIA_PTX 0
#endif

#if RULE == 1 || RULE == 2
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b
#define VTYPE CAT(T, VEC)
#define AS_VTYPE CAT(as_, VTYPE)
#define VSTORE CAT(vstore, VEC)

#define NO_INDEX 0xFFFFFFFFu

#if INT64_ATOMICS && NVIDIA_PTX
// NVIDIA (the fast kernels): a reduction that returns nothing, as CUDA's atomicAdd with an unused
// result compiles to, so a work-item does not wait for each add's reply.
void add_count(__global ulong* counts, uint slot, ulong v) {
  asm volatile("red.global.add.u64 [%0], %1;" ::"l"(counts + slot), "l"(v) : "memory");
}
#elif INT64_ATOMICS
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
#define RULE_PARAMS __global const uint* table
#define RULE_ARGS table
#define SLOT(x) table[x]
#elif RULE == 1
#define RULE_PARAMS long bins, double lo, double hi, double step, double norm
#define RULE_ARGS bins, lo, hi, step, norm
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
  while (c > 0 && x < even_edge(c, lo, step))
    --c;
  while (c < bins - 1 && x >= even_edge(c + 1, lo, step))
    ++c;
  return (uint)c;
}
#elif RULE == 2
#define RULE_PARAMS __global const double *edges, long bins
#define RULE_ARGS edges, bins
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
#else
#define RULE_PARAMS                                                        \
  float lo_up, float hi_down, float lo, float norm, float delta, int bins, \
      __global const float *thresholds
#define RULE_ARGS lo_up, hi_down, lo, norm, delta, bins, thresholds
#define SLOT(x) float_even_slot((x), lo_up, hi_down, lo, norm, delta, bins, thresholds)
// lo_up: the smallest float ≥ lo; hi_down: the largest float ≤ hi; thresholds[i]: the smallest
// float ≥ edge i, so float comparisons decide exactly what the float64 edges decide.
// The slot of x without branches when *exact comes back true; otherwise a candidate that
// float_corrected() settles (the fast kernels correct the rare inexact values of a whole vector
// at once).
uint float_quick(float x, float lo_up, float hi_down, float lo, float norm, float delta, int bins,
                 bool* exact) {
  float t = (x - lo) * norm;
  bool inside = (x >= lo_up) & (x <= hi_down);
  t = inside ? t : 0.0f;  // NaN and infinities never reach the conversion
  int c = (int)t;         // bins ≤ 2^22, so t fits
  float frac = t - (float)c;
  *exact = !inside | (((uint)c < (uint)bins) & (frac > delta) & (frac < 1.0f - delta));
  uint outside = x < lo_up ? (uint)bins : (x > hi_down ? (uint)bins + 1 : (uint)bins + 2);
  return inside ? (uint)c : outside;
}
// The slot of in-range x from any candidate c: moved until threshold[c] ≤ x < threshold[c + 1].
uint float_corrected(float x, int c, int bins, __global const float* thresholds) {
  c = clamp(c, 0, bins - 1);
  while (c > 0 && x < thresholds[c])
    --c;
  while (c < bins - 1 && x >= thresholds[c + 1])
    ++c;
  return (uint)c;
}
uint float_even_slot(float x, float lo_up, float hi_down, float lo, float norm, float delta,
                     int bins, __global const float* thresholds) {
  bool exact;
  uint s = float_quick(x, lo_up, hi_down, lo, norm, delta, bins, &exact);
  return exact ? s : float_corrected(x, (int)s, bins, thresholds);
}
#endif

__kernel void global_atomic(__global const T* in, long n, RULE_PARAMS, __global ulong* counts) {
  long threads = get_global_size(0), t = get_global_id(0);
  long per = (n + threads - 1) / threads;
  long begin = t * per, end = min(n, begin + per);
  for (long i = begin; i < end; ++i)
    add_count(counts, SLOT(in[i]), 1);
}

__kernel void interleaved(__global const T* in, long n, RULE_PARAMS, __global ulong* counts) {
  long stride = get_global_size(0);
  for (long i = get_global_id(0); i < n; i += stride)
    add_count(counts, SLOT(in[i]), 1);
}

// Adds the local 32-bit histogram of `slots` slots to the global counts: one atomic per
// non-empty slot.
void flush(__local const uint* hist, uint slots, __global ulong* counts) {
  for (uint s = get_local_id(0); s < slots; s += get_local_size(0))
    if (hist[s]) add_count(counts, s, hist[s]);
}

__kernel void privatized(__global const T* in, long n, RULE_PARAMS, uint slots, __local uint* hist,
                         __global ulong* counts) {
  for (uint s = get_local_id(0); s < slots; s += get_local_size(0))
    hist[s] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  long stride = get_global_size(0);
  for (long i = get_global_id(0); i < n; i += stride)
    atomic_inc(hist + SLOT(in[i]));
  barrier(CLK_LOCAL_MEM_FENCE);
  flush(hist, slots, counts);
}

__kernel void aggregated(__global const T* in, long n, RULE_PARAMS, uint slots, __local uint* hist,
                         __global ulong* counts) {
  for (uint s = get_local_id(0); s < slots; s += get_local_size(0))
    hist[s] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  long stride = get_global_size(0);
  uint run_slot = NO_INDEX, run = 0;
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
  flush(hist, slots, counts);
}

// Adds n to index `index` of a work-item's column of the striped histogram. With NVIDIA_PTX (set
// by the host for the fast kernels on NVIDIA only) the add is one red.shared on a 32-bit
// shared-window address, as the CUDA kernel does: a local pointer is 64 bits wide there, and its
// arithmetic would take more integer instructions per value in a kernel that the integer pipe
// bounds (uint8: 536 → 440 µs per GiB on an H200).
#if NVIDIA_PTX
void local_add(__local uint* column, uint index, uint n) {
  uint address = (uint)(size_t)column + index * (COLUMNS * 4);
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(address), "r"(n) : "memory");
}
#else
void local_add(__local uint* column, uint index, uint n) {
  atomic_add(column + index * COLUMNS, n);
}
#endif

// The index a value is counted under by the fast kernels: the value itself for COUNT_VALUES
// (uint8), else its slot relative to the pass's first slot (≥ range when outside the pass).
#if COUNT_VALUES
#define INDEX_OF(x) ((uint)(x))
#else
#define INDEX_OF(x) (SLOT(x) - first)
#endif

// Whether every value of a 16-byte vector has the same bits (so the same index).
bool same_values(uint4 w) {
  bool words = w.x == w.y && w.y == w.z && w.z == w.w;
  if (sizeof(T) == 1) return words && w.x == (w.x & 0xFFu) * 0x01010101u;
  if (sizeof(T) == 2) return words && w.x == (w.x & 0xFFFFu) * 0x00010001u;
  if (sizeof(T) == 8) return w.x == w.z && w.y == w.w;
  return words;
}

// The VEC indices of the values in one 16-byte vector.
void vector_indices(uint4 w, RULE_PARAMS, uint first, uint* index) {
  if (same_values(w)) {  // all-equal data and long runs: one value placed, not VEC
    T values[VEC];
    VSTORE(AS_VTYPE(w), 0, values);
#if RULE == 3
    uint one = float_even_slot(values[0], RULE_ARGS) - first;
#else
    uint one = INDEX_OF(values[0]);
#endif
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      index[k] = one;
    return;
  }
#if COUNT_VALUES
  uint words[4];
  vstore4(w, 0, words);
#pragma unroll
  for (int k = 0; k < 16; ++k)
    index[k] = (words[k >> 2] >> ((k & 3) * 8)) & 0xFFu;
#else
  T values[VEC];
  VSTORE(AS_VTYPE(w), 0, values);
#if RULE == 3
  bool exact[VEC], all_exact = true;
#pragma unroll
  for (int k = 0; k < VEC; ++k) {
    index[k] = float_quick(values[k], lo_up, hi_down, lo, norm, delta, bins, &exact[k]);
    all_exact = all_exact && exact[k];
  }
  if (!all_exact) {
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      if (!exact[k]) index[k] = float_corrected(values[k], (int)index[k], bins, thresholds);
  }
#pragma unroll
  for (int k = 0; k < VEC; ++k)
    index[k] -= first;
#else
#pragma unroll
  for (int k = 0; k < VEC; ++k)
    index[k] = INDEX_OF(values[k]);
#endif
#endif
}

bool all_equal(const uint* index) {
  bool same = true;
#pragma unroll
  for (int k = 1; k < VEC; ++k)
    same = same && index[k] == index[0];
  return same;
}

// The cheap test per vector for skewed data: the vector continues this work-item's run, or
// begins and ends on one index. Such vectors go through the run, the others are counted value
// by value.
bool skewed(const uint* index, uint run_index) {
  return index[0] == run_index || index[0] == index[VEC - 1];
}

// Counts one vector into this work-item's column of the striped histogram.
void count_local(uint4 w, RULE_PARAMS, uint first, uint range, __local uint* column,
                 uint* run_index, uint* run) {
  uint index[VEC];
  vector_indices(w, RULE_ARGS, first, index);
#if RUNS
  if (skewed(index, *run_index)) {
    if (all_equal(index) && index[0] == *run_index) {
      *run += VEC;
      return;
    }
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      if (index[k] == *run_index) {
        *run += 1;
      } else {
        if (*run_index < range) local_add(column, *run_index, *run);
        *run_index = index[k];
        *run = 1;
      }
    }
    return;
  }
#endif
#pragma unroll
  for (int k = 0; k < VEC; ++k)
    if (COUNT_VALUES || index[k] < range) local_add(column, index[k], 1);
}

// The total of one index over the columns, each lane starting at its own column so the lanes
// of a warp read different banks.
uint column_total(__local const uint* hist, uint index) {
  uint total = 0;
  for (uint c = 0; c < COLUMNS; ++c)
    total += hist[index * COLUMNS + ((c + index) & (COLUMNS - 1))];
  return total;
}

// Slots beyond local memory are split into `passes` ranges of `span` indices counted side by
// side: group g counts range g % passes over chunk g / passes of the input (the host launches a
// multiple of `passes` groups), so the groups of one chunk run together and all but the first
// read it from L2. `hist` holds range × COLUMNS counters (and, for COUNT_VALUES, 256 more where
// values are merged into slots: table[v] is value v's merge cell, table[256 + cell] the cell's
// slot).
__kernel void fast_local(__global const uint4* in, long n, RULE_PARAMS, uint passes, uint span,
                         uint counted, __local uint* hist, __global ulong* counts) {
  const uint first = (get_group_id(0) % passes) * span;
  const uint range = first < counted ? min(span, counted - first) : 0;
  const uint cells = range * COLUMNS + (COUNT_VALUES ? 256 : 0);
  for (uint i = get_local_id(0); i < cells; i += get_local_size(0))
    hist[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local uint* column = hist + (get_local_id(0) & (COLUMNS - 1));
  const long chunks = get_num_groups(0) / passes;
  const long stride = chunks * get_local_size(0), vectors = n / VEC;
  const long item = (get_group_id(0) / passes) * get_local_size(0) + get_local_id(0);
  uint run_index = NO_INDEX, run = 0;
  long v = item;
  for (; v + (UNROLL - 1) * stride < vectors; v += UNROLL * stride) {
    uint4 w[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      w[u] = in[v + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      count_local(w[u], RULE_ARGS, first, range, column, &run_index, &run);
  }
  for (; v < vectors; v += stride)
    count_local(in[v], RULE_ARGS, first, range, column, &run_index, &run);
  if (run_index < range) local_add(column, run_index, run);
  __global const T* values = (__global const T*)in;
  for (long i = vectors * VEC + item; i < n; i += stride) {
    uint index = INDEX_OF(values[i]);
    if (index < range) local_add(column, index, 1);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#if COUNT_VALUES
  __local uint* merged = hist + range * COLUMNS;
  for (uint value = get_local_id(0); value < range; value += get_local_size(0)) {
    uint total = column_total(hist, value);
    if (total) atomic_add(merged + table[value], total);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint cell = get_local_id(0); cell < 256; cell += get_local_size(0))
    if (merged[cell]) add_count(counts, table[256 + cell], merged[cell]);
#else
  for (uint s = get_local_id(0); s < range; s += get_local_size(0)) {
    uint total = column_total(hist, s);
    if (total) add_count(counts, first + s, total);
  }
#endif
}

// Adds the run to the global counts when it is not empty.
void flush_run(__global ulong* counts, uint run_slot, uint run) {
  if (run) add_count(counts, run_slot, run);
}

void count_global(uint4 w, RULE_PARAMS, __global ulong* counts, uint* run_slot, uint* run) {
  uint slot[VEC];
  vector_indices(w, RULE_ARGS, 0, slot);
  if (skewed(slot, *run_slot)) {
    if (all_equal(slot) && slot[0] == *run_slot) {
      *run += VEC;
      return;
    }
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      if (slot[k] == *run_slot) {
        *run += 1;
      } else {
        flush_run(counts, *run_slot, *run);
        *run_slot = slot[k];
        *run = 1;
      }
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < VEC; ++k)
    add_count(counts, slot[k], 1);
}

// Never built with COUNT_VALUES: the indices are slots.
__kernel void fast_global(__global const uint4* in, long n, RULE_PARAMS, __global ulong* counts) {
  const long stride = get_global_size(0), vectors = n / VEC;
  uint run_slot = NO_INDEX, run = 0;
  long v = get_global_id(0);
  for (; v + (UNROLL - 1) * stride < vectors; v += UNROLL * stride) {
    uint4 w[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      w[u] = in[v + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      count_global(w[u], RULE_ARGS, counts, &run_slot, &run);
  }
  for (; v < vectors; v += stride)
    count_global(in[v], RULE_ARGS, counts, &run_slot, &run);
  flush_run(counts, run_slot, run);
  __global const T* values = (__global const T*)in;
  for (long i = vectors * VEC + get_global_id(0); i < n; i += stride)
    add_count(counts, SLOT(values[i]), 1);
}
