// The shared part of the OpenCL histogram program (histogram.cl holds the kernels). A value maps to
// a slot — bins 0 .. N−1, then underflow, overflow and NaN — by one rule chosen at build time:
// RULE 0 a value → slot table (bool and 1- or 2-byte integers, read as uchar/ushort, the table
// filled on the host by the reference; `fast`'s counting kernels read a table of rows), RULE 1
// even bins (a float64 candidate (x − lo)·norm corrected against the exact edges i·step + lo;
// integers converted to the nearest float64), RULE 2 a binary search over explicit float64 edges,
// and the rules of `fast`, which place a value in rows (slot_of_row): RULE 3 even bins for float32
// input (and 16- and 32-bit input, DTYPE16 and INT32_FLOAT below) in float arithmetic (the
// candidate floor((x − lo)·norm) taken when its fractional part is at least `delta` from an
// integer — histogram_internal.hpp's FloatEvenRule — else settled against the float64 edges
// themselves with FLOAT_EDGES, or against the float thresholds, the smallest float ≥ each edge,
// on devices without cl_khr_fp64), RULE 4 Even16Rule (16-bit input, one multiply-add), RULE 5
// Float64EvenRule (float64) and RULE 6 IntegerShiftRule (4- and 8-byte integers). FP_CONTRACT is
// off so no fused multiply-add changes an edge or a candidate.
// Counts are 64-bit: atom_add where cl_khr_int64_base_atomics exists (INT64_ATOMICS=1), else
// two 32-bit words with a carry (correct for counters that are only read at the end).
//  - global_atomic: a contiguous section per work-item, global atomics;
//  - interleaved: grid-stride (coalesced) reads, global atomics;
//  - privatized / aggregated: a 32-bit histogram per group in local memory, added to the global
//    counts at the end; aggregated counts a run of equal slots before one local atomic;
//  - fast_local: 16-byte loads (UNROLL of them in flight per work-item), the rows of a vector
//    without branches, counted into one local histogram per group: 32-bit counters lane-striped
//    over COLUMNS columns (a bank per lane), or packed counters of FIELD_BITS bits (16, 8, 5 or
//    4: 2, 4, 6 or 8 to a word, so more rows per range; a carry out of a field is moved to the
//    global counts, through a small table of hot rows for the narrow fields). 1-byte input
//    (COUNT_VALUES 1) is counted per value, whatever the bins, and so are 16-bit values past
//    histogram.fast.per_value16_min_bins bins (COUNT_VALUES 2: with VALUE_WINDOW the values of a
//    window that holds those in the bins, and rows for above, NaN and below); the values are
//    mapped to slots only when the group flushes. A round of vectors that all hold one value is
//    counted in one step through a register run; with RUNS a cheap test per vector sends skewed
//    data through that run too. Rows beyond local memory are split into ranges counted side by side
//    by groups sharing an input chunk;
//  - fast_global: the same loop, counting into the global counts, always with the runs.
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
#ifndef PERMUTED_ROWS
#define PERMUTED_ROWS 0
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
#ifndef WHOLE
#define WHOLE 0
#endif
#ifndef FIELD_BITS
#define FIELD_BITS 0
#endif
#ifndef HOT_ENTRIES
#define HOT_ENTRIES 0
#endif
#define PACKED (FIELD_BITS != 0)
#if PACKED
#define FIELDS (32 / FIELD_BITS)
#define FIELD_LIMIT (1u << FIELD_BITS)
#endif
#ifndef FLOAT_EDGES
#define FLOAT_EDGES 0
#endif
#ifndef NVIDIA_PTX
#define NVIDIA_PTX 0
#endif
// 16-bit input (read as ushort bits): DTYPE16 1 uint16, 2 int16, 3 float16, 4 bfloat16; RULE 3
// and RULE 4 take each value as the float it is exactly.
#ifndef DTYPE16
#define DTYPE16 0
#endif
#ifndef VALUE_WINDOW
#define VALUE_WINDOW 0
#endif
// RULE 3 on 32-bit integers (INT32_FLOAT 1: int, 2: uint; needs FLOAT_EDGES): those of magnitude
// up to 2^24 are exactly floats; a larger one is never taken as exact and is placed by the
// float64 edges whole.
#ifndef INT32_FLOAT
#define INT32_FLOAT 0
#endif
#if INT32_FLOAT == 1
#define EXACTLY_FLOAT(x) ((uint)(x) + (1u << 24) <= (2u << 24))
#elif INT32_FLOAT == 2
#define EXACTLY_FLOAT(x) ((x) <= (1u << 24))
#else
#define EXACTLY_FLOAT(x) true
#endif
// binary16 bits → float, exact (its subnormals are normal floats).
float half_value(uint h) {
#if NVIDIA_PTX
  float v;
  asm("{.reg .b16 h; cvt.u16.u32 h, %1; cvt.f32.f16 %0, h;}" : "=f"(v) : "r"(h));
  return v;
#else
  const uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, f = h & 0x3FFu;
  const float magnitude =
      e == 0 ? (float)f * 5.9604644775390625e-8f
             : as_float(e == 0x1F ? 0x7F800000u | (f << 13) : ((e + 112) << 23) | (f << 13));
  return as_float(as_uint(magnitude) | sign);
#endif
}
#if DTYPE16 == 2
#define FLOAT_VALUE(x) ((float)(short)(x))
#elif DTYPE16 == 3
#define FLOAT_VALUE(x) half_value(x)
#elif DTYPE16 == 4
#define FLOAT_VALUE(x) as_float((uint)(x) << 16)
#else
#define FLOAT_VALUE(x) ((float)(x))
#endif

#if RULE == 1 || RULE == 2 || (RULE == 3 && FLOAT_EDGES) || RULE == 5
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b
#define VTYPE CAT(T, VEC)
#define AS_VTYPE CAT(as_, VTYPE)
#define VSTORE CAT(vstore, VEC)
#define VLOAD CAT(vload, VEC)

#define NO_INDEX 0xFFFFFFFFu

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

#if RULE == 1 || (RULE == 3 && FLOAT_EDGES) || RULE == 5
// Even edge i, as numpy.linspace makes it: i·step + lo, rounded twice.
double even_edge(long i, double lo, double step) {
  double scaled = (double)i * step;
  return scaled + lo;
}
// The bin of in-range x from a candidate c in [0, bins): moved until edge c ≤ x < edge c + 1.
long even_settle(double x, long c, long bins, double lo, double step) {
  while (c > 0 && x < even_edge(c, lo, step))
    --c;
  while (c < bins - 1 && x >= even_edge(c + 1, lo, step))
    ++c;
  return c;
}
#endif

// `fast` counts rows, not slots: row 0 below the range, 1 + b for bin b, bins + 1 above it and
// bins + 2 NaN, the order in which clamping a value's position in the range places it. HI_ROW
// (RULE 4 only, Even16Rule::hi_row): hi has a row of its own, bins + 1, counted in the last bin,
// and the rows past it move one further (ROWS_PAST_BINS: the rows beyond the bins).
#ifndef HI_ROW
#define HI_ROW 0
#endif
#define ROWS_PAST_BINS (3 + HI_ROW)
uint slot_of_row(uint r, uint bins) {
  if (r == 0) return bins;
  if (r <= bins) return r - 1;
  return HI_ROW ? (r == bins + 1 ? bins - 1 : r - 1) : r;
}
uint row_of_slot(uint s, uint bins) {
  return s == bins ? 0 : (s < bins ? s + 1 : s);
}

// x clamped to [low, high], NaN kept NaN: two comparisons (not fmin/fmax, which drop a NaN), or
// with NVIDIA_PTX min.NaN and max.NaN (sm_80 and later, as redux.sync), one instruction each as in
// CUDA's rules: for bfloat16 at 4096 bins they took NVIDIA's OpenCL from 1.28x CUDA's time to
// 1.12x (histogram-opencl-clamp).
float clamp_keep_nan(float x, float low, float high) {
#if NVIDIA_PTX
  asm("min.NaN.f32 %0, %0, %1;" : "+f"(x) : "f"(high));
  asm("max.NaN.f32 %0, %0, %1;" : "+f"(x) : "f"(low));
  return x;
#else
  x = x < low ? low : x;
  return x > high ? high : x;
#endif
}

// floor(c) + 1 of −0.5 ≤ c ≤ 2^22 + 0.5, and floor(c) in *below; NaN gives row 0. With NVIDIA_PTX
// without the conversion unit: c + 2^23 + 1 rounded toward zero leaves floor(c) + 1 in the low
// mantissa bits.
uint float_floor_row(float c, float* below) {
#if NVIDIA_PTX
  float shifted;
  asm("add.rz.f32 %0, %1, 0f4B000001;" : "=f"(shifted) : "f"(c));
  *below = shifted - 8388609.0f;
  return isnan(c) ? 0 : as_uint(shifted) - 0x4B000000u;
#else
  *below = floor(c);
  return isnan(c) ? 0 : (uint)((int)*below + 1);
#endif
}

// The float rule in rows (fast, RULE 3, and the joint histogram's float32 axes): t = (x − lo)·norm
// clamped to [−0.5, bins + 0.5] (NaN kept), row floor(t) + 1, exact when t's fraction lies in
// (delta, 1 − delta) and t is not bins (hi under exact arithmetic): inside the range as
// float_quick; below it t < 0 (the roundings keep the sign) or t = 0 (fraction 0: never exact);
// above it t > bins − delta; NaN fails both tests.
uint float_quick_row(float x, float lo, float norm, float delta, int bins, bool* exact) {
  const float t = (x - lo) * norm;
  const float c = clamp_keep_nan(t, -0.5f, (float)bins + 0.5f);
  float below;
  const uint row = float_floor_row(c, &below);
  const float frac = c - below;
  *exact = (frac > delta) & (frac < 1.0f - delta) & (c != (float)bins);
  return row;
}
#if RULE == 0 && COUNT_VALUES == 2
// 16-bit input counted per value: the row of each value, its bits, or with VALUE_WINDOW its row in
// the window (opencl_layout.hpp's ValueWindow: base, rows, above_end and nan_end, and past the
// window three rows for each of 32 lanes), and table[row] the row's slot. The key orders the
// values: the bits of uint16, int16's with the sign bit flipped, float16's and bfloat16's
// sign-magnitude made monotone. The two values of a 32-bit word are keyed together (word_offsets:
// their keys' distances past the window's base, low and high); an offset at or past the window's
// rows takes its lane's row outside (outside_row), which the caller asks for only where a value
// lies outside.
uint2 word_offsets(uint word, uint base) {
#if VALUE_WINDOW
#if DTYPE16 >= 3
  const uint keys = word ^ (((word >> 15) & 0x00010001u) * 0x7FFFu | 0x80008000u);
#elif DTYPE16 == 2
  const uint keys = word ^ 0x80008000u;
#else
  const uint keys = word;
#endif
  return (uint2)((keys - base) & 0xFFFFu, (keys - (base << 16)) >> 16);
#else
  return (uint2)(word & 0xFFFFu, word >> 16);
#endif
}
uint outside_row(uint offset, uint4 window) {
  return offset < window.y
             ? offset
             : window.y + 3 * (get_local_id(0) & 31u) + (offset >= window.z) + (offset >= window.w);
}
uint window_row(uint bits, uint4 window) {
#if VALUE_WINDOW
  return outside_row(word_offsets(bits, window.x).x, window);
#else
  return bits;
#endif
}
#define RULE_PARAMS __global const uint *table, uint4 window
#define RULE_ARGS table, window
#define SLOT(x) table[window_row((x), window)]
#define QUICK_ROW(x, exact) (*(exact) = true, window_row((x), window))
#elif RULE == 0
#define RULE_PARAMS __global const uint* table
#define RULE_ARGS table
#define SLOT(x) table[x]
// `fast`'s counting kernels read a table of rows instead (ClBinRule's `rows`).
#define QUICK_ROW(x, exact) (*(exact) = true, table[x])
#elif RULE == 1
#define RULE_PARAMS long bins, double lo, double hi, double step, double norm
#define RULE_ARGS bins, lo, hi, step, norm
#define SLOT(x) even_slot((double)(x), bins, lo, hi, step, norm)
#define QUICK_ROW(x, exact) (*(exact) = true, row_of_slot(SLOT(x), (uint)bins))
uint even_slot(double x, long bins, double lo, double hi, double step, double norm) {
  if (!(x >= lo)) return (uint)(isnan(x) ? bins + 2 : bins);
  if (x > hi) return (uint)(bins + 1);
  double t = (x - lo) * norm;
  return (uint)even_settle(x, t < (double)bins ? (long)t : bins - 1, bins, lo, step);
}
#elif RULE == 2
#define RULE_PARAMS __global const double *edges, long bins
#define RULE_ARGS edges, bins
#define SLOT(x) edges_slot((double)(x), edges, bins)
#define QUICK_ROW(x, exact) (*(exact) = true, row_of_slot(SLOT(x), (uint)bins))
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
#elif RULE == 3
// lo_up: the smallest float ≥ lo; hi_down: the largest float ≤ hi (float comparisons decide
// the range exactly). A candidate that is not exact is settled against the float64 edges
// (FLOAT_EDGES: edge_lo and edge_hi are lo and hi in float64, step the float64 bin width; a few
// float64 operations, no load) or against thresholds[i], the smallest float ≥ edge i: for float
// x, x ≥ edge i ⟺ x ≥ thresholds[i].
#if FLOAT_EDGES
#define RULE_PARAMS                                                                        \
  float lo_up, float hi_down, float lo, float norm, float delta, int bins, double edge_lo, \
      double step, double edge_hi
#define RULE_ARGS lo_up, hi_down, lo, norm, delta, bins, edge_lo, step, edge_hi
#if INT32_FLOAT
#define FLOAT_CORRECTED(x, c) int_corrected((x), (c), bins, edge_lo, step, edge_hi)
// The slot of a 32-bit integer from a candidate: settled from it when x is exactly a float,
// else found whole from the float64 edges (a candidate from (x − lo) / step, then settled).
uint int_corrected(T x, int c, int bins, double edge_lo, double step, double edge_hi) {
  const double v = (double)x;
  if (EXACTLY_FLOAT(x)) return (uint)even_settle(v, clamp(c, 0, bins - 1), bins, edge_lo, step);
  if (v < edge_lo) return (uint)bins;
  if (v > edge_hi) return (uint)bins + 1;
  const double t = (v - edge_lo) / step;
  return (uint)even_settle(v, t < (double)bins ? (long)t : bins - 1, bins, edge_lo, step);
}
#else
#define FLOAT_CORRECTED(x, c) \
  (uint) even_settle((double)FLOAT_VALUE(x), clamp((c), 0, bins - 1), bins, edge_lo, step)
#endif
#else
#define RULE_PARAMS                                                        \
  float lo_up, float hi_down, float lo, float norm, float delta, int bins, \
      __global const float *thresholds
#define RULE_ARGS lo_up, hi_down, lo, norm, delta, bins, thresholds
#define FLOAT_CORRECTED(x, c) float_corrected(FLOAT_VALUE(x), (c), bins, thresholds)
// The slot of in-range x from any candidate c: moved until threshold[c] ≤ x < threshold[c + 1].
uint float_corrected(float x, int c, int bins, __global const float* thresholds) {
  c = clamp(c, 0, bins - 1);
  while (c > 0 && x < thresholds[c])
    --c;
  while (c < bins - 1 && x >= thresholds[c + 1])
    ++c;
  return (uint)c;
}
#endif
#if INT32_FLOAT
#define SLOT(x) int_even_slot((x), RULE_ARGS)
#else
#define SLOT(x) float_even_slot((x), RULE_ARGS)
#endif
// The slot of x without branches when *exact comes back true; otherwise a candidate that
// FLOAT_CORRECTED settles (the fast kernels correct the rare inexact values of a whole vector
// at once).
uint float_quick(float x, float lo_up, float hi_down, float lo, float norm, float delta, int bins,
                 bool* exact) {
  float t = (x - lo) * norm;
  bool inside = (x >= lo_up) & (x <= hi_down);
  t = (inside & (t > 0.0f)) ? t : 0.0f;  // NaN and infinities never reach the floor
#if NVIDIA_PTX
  // floor(t) for 0 ≤ t < 2^23 without the conversion unit: adding 2^23 rounded toward zero
  // leaves floor(t) in the low mantissa bits.
  float shifted;
  asm("add.rz.f32 %0, %1, 0f4B000000;" : "=f"(shifted) : "f"(t));
  int c = as_int(shifted) - 0x4B000000;
  float frac = t - (shifted - 8388608.0f);
#else
  int c = (int)t;  // bins ≤ 2^22, so t fits
  float frac = t - (float)c;
#endif
  *exact = !inside | (((uint)c < (uint)bins) & (frac > delta) & (frac < 1.0f - delta));
  uint outside = x < lo_up ? (uint)bins : (x > hi_down ? (uint)bins + 1 : (uint)bins + 2);
  return inside ? (uint)c : outside;
}
// x as read: FLOAT_VALUE decodes it for the quick slot, FLOAT_CORRECTED on its own for the float64
// edges or the thresholds.
uint float_even_slot(T x, RULE_PARAMS) {
  bool exact;
  uint s = float_quick(FLOAT_VALUE(x), lo_up, hi_down, lo, norm, delta, bins, &exact);
  return exact ? s : FLOAT_CORRECTED(x, (int)s);
}
#if INT32_FLOAT
uint int_even_slot(T x, RULE_PARAMS) {
  bool exact;
  uint s = float_quick(FLOAT_VALUE(x), lo_up, hi_down, lo, norm, delta, bins, &exact);
  return exact && EXACTLY_FLOAT(x) ? s : FLOAT_CORRECTED(x, (int)s);
}
#endif
// The row of a value whose quick row was not exact: NaN, the range's ends and the bins settled
// exactly (the float64 edges or the thresholds), from the candidate row.
uint float_corrected_row(T x, uint candidate, RULE_PARAMS) {
#if FLOAT_EDGES
#if INT32_FLOAT
  const double v = (double)x;  // exact; beyond 2^24 the float candidate is not
#else
  const double v = (double)FLOAT_VALUE(x);
#endif
  if (!(v >= edge_lo)) return isnan(v) ? (uint)bins + 2 : 0;
  if (v > edge_hi) return (uint)bins + 1;
  long c = clamp((int)candidate - 1, 0, bins - 1);
  if (!EXACTLY_FLOAT(x)) {
    const double t = (v - edge_lo) / step;
    c = t < (double)bins ? (long)t : bins - 1;
  }
  return (uint)even_settle(v, c, bins, edge_lo, step) + 1;
#else
  const float v = FLOAT_VALUE(x);
  if (isnan(v)) return (uint)bins + 2;
  if (v < lo_up) return 0;
  if (v > hi_down) return (uint)bins + 1;
  return float_corrected(v, (int)candidate - 1, bins, thresholds) + 1;
#endif
}
uint rule3_quick_row(T x, RULE_PARAMS, bool* exact) {
  const uint r = float_quick_row(FLOAT_VALUE(x), lo, norm, delta, bins, exact);
  *exact = *exact && EXACTLY_FLOAT(x);
  return r;
}
#define QUICK_ROW(x, exact) rule3_quick_row((x), RULE_ARGS, (exact))
#define CORRECTED_ROW(x, c) float_corrected_row((x), (c), RULE_ARGS)
#elif RULE == 4
// Even16Rule (16-bit input with even bins, checked on the host for every value of the dtype):
// the row floor(u + whole_part) + 1 of u = x·scale + fraction (one rounding) clamped to [low,
// high], NaN in the last row; hi itself in the last bin (EVEN16_HI: a value of the dtype equals
// hi and has no row of its own, HI_ROW, so each value is tested). DTYPE16 decodes the
// bits: 1 uint16, 2 int16, 3 float16, 4 bfloat16; integers in two instructions without the
// conversion unit (the low bits of a float of exponent 23, less 2^23; int16 biased by 2^15).
#define RULE_PARAMS                                                                    \
  float scale, float fraction, float low, float high, float shift, float hi, int bins, \
      int whole_part
#define RULE_ARGS scale, fraction, low, high, shift, hi, bins, whole_part
// The two values of a 32-bit word (the low half first) as floats.
void decode16(uint word, float* low_value, float* high_value) {
#if DTYPE16 == 3
#if NVIDIA_PTX
  asm("{.reg .b16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h;}"
      : "=f"(*low_value), "=f"(*high_value)
      : "r"(word));
#else
  *low_value = half_value(word & 0xFFFFu);
  *high_value = half_value(word >> 16);
#endif
#elif DTYPE16 == 4
  *low_value = as_float(word << 16);
  *high_value = as_float(word & 0xFFFF0000u);
#else
  const uint biased = DTYPE16 == 2 ? word ^ 0x80008000u : word;
  const float bias = DTYPE16 == 2 ? 8421376.0f : 8388608.0f;  // 2^23 (+ 2^15)
  *low_value = as_float((biased & 0xFFFFu) | 0x4B000000u) - bias;
  *high_value = as_float((biased >> 16) | 0x4B000000u) - bias;
#endif
}
uint even16_row(float x, RULE_PARAMS) {
  const float u = clamp_keep_nan(fma(x, scale, fraction), low, high);
#if NVIDIA_PTX
  float shifted;
  asm("add.rz.f32 %0, %1, %2;" : "=f"(shifted) : "f"(u), "f"(shift));
  uint r = as_uint(shifted) - 0x4B000000u;
#if DTYPE16 >= 3
  r = min(r, (uint)bins + ROWS_PAST_BINS - 1);  // NaN's bits exceed every row
#endif
#else
  const uint r =
      isnan(u) ? (uint)bins + ROWS_PAST_BINS - 1 : (uint)((int)floor(u) + whole_part + 1);
#endif
#if EVEN16_HI
  return x == hi ? (uint)bins : r;
#else
  return r;
#endif
}
uint even16_value_row(ushort bits, RULE_PARAMS) {
  float value, unused;
  decode16(bits, &value, &unused);
  return even16_row(value, RULE_ARGS);
}
#define QUICK_ROW(x, exact) (*(exact) = true, even16_value_row((x), RULE_ARGS))
#define SLOT(x) slot_of_row(even16_value_row((x), RULE_ARGS), (uint)bins)
#elif RULE == 5
// Float64EvenRule (float64 with even bins): the float rule's rows in float64 arithmetic, t =
// (x − lo)·norm within delta of exact; the rest — values next to an edge, hi, NaN — settled
// against the float64 edges as RULE 1 places every value.
#define RULE_PARAMS double lo, double norm, double delta, int bins, double hi, double step
#define RULE_ARGS lo, norm, delta, bins, hi, step
uint double_quick_row(double x, RULE_PARAMS, bool* exact) {
  const double t = (x - lo) * norm;
  const double top = (double)bins + 0.5;
  double c = t < -0.5 ? -0.5 : t;  // NaN stays NaN
  c = c > top ? top : c;
#if NVIDIA_PTX
  // floor(c) + 1 in the low word of c + 2^52 + 1 rounded toward zero.
  double shifted;
  asm("add.rz.f64 %0, %1, 0d4330000000000001;" : "=d"(shifted) : "d"(c));
  const uint row = as_uint2(shifted).x;
  const double below = shifted - 4503599627370497.0;
#else
  const double below = floor(c);
  const uint row = isnan(c) ? 0 : (uint)((long)below + 1);
#endif
  const double frac = c - below;
  *exact = (frac > delta) & (frac < 1.0 - delta) & (c != (double)bins);
  return row;
}
uint double_corrected_row(double x, uint candidate, RULE_PARAMS) {
  if (!(x >= lo)) return isnan(x) ? (uint)bins + 2 : 0;
  if (x > hi) return (uint)bins + 1;
  return (uint)even_settle(x, clamp((int)candidate - 1, 0, bins - 1), bins, lo, step) + 1;
}
uint double_row(double x, RULE_PARAMS) {
  bool exact;
  const uint r = double_quick_row(x, RULE_ARGS, &exact);
  return exact ? r : double_corrected_row(x, r, RULE_ARGS);
}
#define QUICK_ROW(x, exact) double_quick_row((x), RULE_ARGS, (exact))
#define CORRECTED_ROW(x, c) double_corrected_row((x), (c), RULE_ARGS)
#define SLOT(x) slot_of_row(double_row((x), RULE_ARGS), (uint)bins)
#elif RULE == 6
// IntegerShiftRule (4- and 8-byte integers, power-of-two bin widths over an integer range within
// ±2^24): x clamped in its own type to [below, above] (lo − 1 and hi + 1 held to the dtype's
// range), row ((x − lo)·2^left >> right) + 1 clamped to [0, bins + 1], hi itself in the last bin;
// exact by construction, integer arithmetic alone.
#define RULE_PARAMS int lo, int hi, int bins, int left, int right, int below, int above
#define RULE_ARGS lo, hi, bins, left, right, below, above
uint int_shift_row(T x, RULE_PARAMS) {
  const int c = x < (T)below ? below : (x > (T)above ? above : (int)x);
  const int r = clamp(((c - lo) * (1 << left) >> right) + 1, 0, bins + 1);
  return (uint)(r - (c == hi));
}
#define QUICK_ROW(x, exact) (*(exact) = true, int_shift_row((x), RULE_ARGS))
#define SLOT(x) slot_of_row(int_shift_row((x), RULE_ARGS), (uint)bins)
#endif
#ifndef CORRECTED_ROW
#define CORRECTED_ROW(x, c) (c)  // every row of the rule is exact
#endif
