// The shared part of the OpenCL reduce program (reduce.cl holds the kernels), for one (element
// type, operator), chosen by -D options:
// ELEM (element type), VW (elements per 16-byte vector), ACC and RES (accumulator and result
// types; arg ops define ARG_OP and get a {value, index} struct), IDENTITY_VALUE, and IDENTITY /
// LOAD / COMBINE / RESULT naming one of the macro families below. The accumulator algebra is the
// one of reduce_ops.hpp: 64-bit wrapping integer sums and products, double float sums and
// products, NaN-propagating min/max, first-NaN / first-extreme / smallest-index arg ops; combine
// is associative and commutative, so every tree order below gives the same value.
//   tree        one element per work-item, halving tree in local memory, one partial per group;
//               the host repeats passes over the partials until one group remains.
//   serial      each work-item folds SERIAL_ITEMS consecutive elements in registers; passes again.
//   gridstride  a fixed grid folds a grid-stride loop in registers, trees in local memory, and
//               one group finishes the per-group partials in a second launch.
//   atomic      like gridstride, but each group merges its result into one global accumulator
//               with a compare-and-swap loop on its bit pattern (ACC_BITS defined).
//   fast        16-byte vector loads from an aligned body (scalar head and tail), eight loads
//               in flight per work-item, a fixed grid; each work-item visits its elements in
//               increasing index order, so arg ops append without index comparisons. The last
//               group to arrive (counted with atomic_inc after a global fence) combines the
//               partials in group order, so the result is the same bit for bit on every run.
//               Axis rows gives each row a slice of work-items; axis cols gives each work-item a
//               16-byte strip of columns (a warp reads 512 contiguous bytes of a row; one column
//               per work-item when rows are not 16-byte aligned) and a chunk of rows, and the
//               last group of a column tile combines the chunks in chunk order.
// Element positions: flat index i of a rows × cols input with row_stride = cols + pad lies at
// i + (i / cols) * pad.

#if defined(USE_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if defined(ATOMIC_64)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

// Whether x (an element, or an accumulator of the element type) is NaN: never for integer input
// (INTEGER_INPUT), said outright so that no conversion is left in the compares of arg ops; a
// float NaN stays one converted to float. (x != x would serve too, but compilers flag it as a
// self-comparison for integer types.)
#ifdef INTEGER_INPUT
#define IS_NAN(x) false
#else
#define IS_NAN(x) isnan((float)(x))
#endif

#ifndef ELEM
#define ELEM float
#define VW 4
#define ACC float
#define RES float
#define IDENTITY_VALUE 0
#define IDENTITY IDENTITY_SCALAR
#define LOAD LOAD_SCALAR
#define COMBINE COMBINE_SUM
#define RESULT RESULT_CAST
#endif

// Work-group sizes (powers of two) and items per work-item; the host passes the tuned values.
#ifndef TREE_BLOCK
#define TREE_BLOCK 256
#endif
#ifndef SERIAL_BLOCK
#define SERIAL_BLOCK 256
#endif
#ifndef SERIAL_ITEMS
#define SERIAL_ITEMS 64
#endif
#ifndef GRIDSTRIDE_BLOCK
#define GRIDSTRIDE_BLOCK 256
#endif
#ifndef ATOMIC_BLOCK
#define ATOMIC_BLOCK 256
#endif
#ifndef FAST_BLOCK
#define FAST_BLOCK 256
#endif
#ifndef FAST_ROWS_BLOCK
#define FAST_ROWS_BLOCK 256
#endif
#ifndef FAST_COLS_BLOCK
#define FAST_COLS_BLOCK 128
#endif
// 16-byte loads each work-item of `fast` keeps in flight.
#define FAST_UNROLL 8

#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
#define STOREV PASTE(STORE, VW)

// 16-bit float input (FLOAT16_INPUT, BFLOAT16_INPUT; ELEM is then float): elements are stored as
// their bits (STORE ushort) and WIDEN converts each one exactly as it is loaded. A 16-bit float
// result (FLOAT16_RESULT, BFLOAT16_RESULT; RES is then the accumulator's float type) is stored
// as bits too (OUT ushort), rounded once by NARROW, to nearest even, from the result itself.
// Other types store ELEM and RES as they are.

// binary16 bits -> float (exact, subnormals included): the device's own conversion through
// vload_half, which needs no cl_khr_fp16, rather than decoding the fields by hand.
float float16_value(ushort h) {
  return vload_half(0, (const __private half*)&h);
}

float bfloat16_value(ushort h) {
  return as_float((uint)h << 16);
}

// The bits of the binary16 value nearest to the float or double whose bits are `bits` (`width`
// 32 or 64, `frac_bits` 23 or 52), ties to even: the rule of parpat/float16.hpp. Subnormal
// sources lie far below binary16's range and give zero.
ushort float16_round(ulong bits, int width, int frac_bits) {
  int exp_max = (1 << (width - 1 - frac_bits)) - 1, bias = exp_max / 2;
  uint sign = (uint)(bits >> (width - 16)) & 0x8000u;
  int exp = (int)((bits >> frac_bits) & (ulong)exp_max);
  ulong frac = bits & ((1UL << frac_bits) - 1);
  if (exp == exp_max) return (ushort)(sign | 0x7c00u | (frac != 0 ? 0x200u : 0u));
  int e = exp - bias;
  if (exp == 0 || e < -25) return (ushort)sign;
  if (e > 15) return (ushort)(sign | 0x7c00u);
  ulong significand = frac | (1UL << frac_bits);
  int shift = frac_bits - 10 + (e < -14 ? -14 - e : 0);
  ulong kept = significand >> shift, rest = significand & ((1UL << shift) - 1);
  ulong midpoint = 1UL << (shift - 1);
  uint up = (rest > midpoint || (rest == midpoint && (kept & 1))) ? 1u : 0u;
  uint magnitude = e < -14 ? (uint)kept + up : ((uint)(e + 15) << 10) + ((uint)kept & 0x3ffu) + up;
  return (ushort)(sign | magnitude);
}

ushort float16_from_float(float v) {
  return float16_round(as_uint(v), 32, 23);
}

// float -> bfloat16 is the float's upper half, rounded to nearest even (subnormals included).
ushort bfloat16_from_float(float v) {
  uint b = as_uint(v);
  if (isnan(v)) return (ushort)((b >> 16) | 0x40u);
  return (ushort)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

#if defined(USE_FP64)
ushort float16_from_double(double v) {
  return float16_round(as_ulong(v), 64, 52);
}

// double -> bfloat16 through the rule of float16_round with bfloat16's 8 exponent and 7
// fraction bits: the largest finite 2^127 * (2 - 2^-7), subnormals down to 2^-133.
ushort bfloat16_from_double(double v) {
  ulong bits = as_ulong(v);
  uint sign = (uint)(bits >> 48) & 0x8000u;
  int exp = (int)((bits >> 52) & 0x7ff);
  ulong frac = bits & ((1UL << 52) - 1);
  if (exp == 0x7ff) return (ushort)(sign | 0x7f80u | (frac != 0 ? 0x40u : 0u));
  int e = exp - 1023;
  if (exp == 0 || e < -134) return (ushort)sign;
  if (e > 127) return (ushort)(sign | 0x7f80u);
  ulong significand = frac | (1UL << 52);
  int shift = 45 + (e < -126 ? -126 - e : 0);
  ulong kept = significand >> shift, rest = significand & ((1UL << shift) - 1);
  ulong midpoint = 1UL << (shift - 1);
  uint up = (rest > midpoint || (rest == midpoint && (kept & 1))) ? 1u : 0u;
  uint magnitude = e < -126 ? (uint)kept + up : ((uint)(e + 127) << 7) + ((uint)kept & 0x7fu) + up;
  return (ushort)(sign | magnitude);
}
#define FROM_REAL(kind) kind##_from_double
#else
#define FROM_REAL(kind) kind##_from_float
#endif

#if defined(FLOAT16_INPUT)
#define STORE ushort
#define WIDEN(x) float16_value(x)
#elif defined(BFLOAT16_INPUT)
#define STORE ushort
#define WIDEN(x) bfloat16_value(x)
#else
#define STORE ELEM
#define WIDEN(x) (x)
#endif
#if defined(FLOAT16_RESULT)
#define OUT ushort
#define NARROW(x) FROM_REAL(float16)(x)
#elif defined(BFLOAT16_RESULT)
#define OUT ushort
#define NARROW(x) FROM_REAL(bfloat16)(x)
#else
#define OUT RES
#define NARROW(x) (x)
#endif

// The lanes of a 16-byte vector as ELEM values, indexed with constants only so that a compiler
// can keep them in registers. 1-byte lanes are cut from the vector's four 32-bit words by shifts
// (lane 0 the low byte of word 0 on a little-endian device): NVIDIA's compiler loads a char16
// that is taken apart lane by lane as four 4-byte loads (ld.global.v4.u8), but a vector used as
// words as one 16-byte load. 2-byte lanes (two 8-byte loads) measured faster from the union.
void unpack_vector(STOREV v, ELEM* lanes) {
#if VW == 16 && defined(__ENDIAN_LITTLE__)
  uint4 words = as_uint4(v);
  uint word[4] = {words.s0, words.s1, words.s2, words.s3};
#pragma unroll
  for (int j = 0; j < VW; ++j)
    lanes[j] = WIDEN((STORE)(word[j / 4] >> (8 * (j % 4))));
#else
  union {
    STOREV vector;
    STORE lane[VW];
  } raw;
  raw.vector = v;
#pragma unroll
  for (int j = 0; j < VW; ++j)
    lanes[j] = WIDEN(raw.lane[j]);
#endif
}

#ifdef MOMENTS
// n elements with s = sum(x - shift) and q = sum((x - shift)^2), the layout of reduce_ops.hpp's
// Moments: elements accumulate against the first one seen; merges take Chan's update into
// shift = mean, s = 0, q = M2. MEAN_ONLY keeps a plain sum in s (shift and q stay 0), so that
// infinities give numpy's mean. SKIP_NAN (the nan forms) passes over NaN elements.
typedef struct {
  double n, shift, s, q;
} moments;
#define ACC moments

moments make_moments(double n, double shift, double s, double q) {
  moments m;
  m.n = n;
  m.shift = shift;
  m.s = s;
  m.q = q;
  return m;
}

double moments_mean(moments m) {
  return m.shift + m.s / m.n;
}

double moments_m2(moments m) {
  return m.q - m.s * (m.s / m.n);
}

bool skipped(ELEM v) {
#ifdef SKIP_NAN
  return IS_NAN(v);
#else
  return false;
#endif
}

moments moments_combine(moments a, moments b) {
#ifdef MEAN_ONLY
  return make_moments(a.n + b.n, 0, a.s + b.s, 0);
#else
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  double n = a.n + b.n, mean_a = moments_mean(a), delta = moments_mean(b) - mean_a;
  return make_moments(n, mean_a + delta * (b.n / n), 0,
                      moments_m2(a) + moments_m2(b) + delta * delta * (a.n * (b.n / n)));
#endif
}

moments moments_append(moments a, ELEM v) {
  if (skipped(v)) return a;
#ifdef MEAN_ONLY
  return make_moments(a.n + 1, 0, a.s + (double)v, 0);
#else
  if (a.n == 0) return make_moments(1, (double)v, 0, 0 * (double)v);  // NaN M2 for NaN or inf
  double d = (double)v - a.shift;
  return make_moments(a.n + 1, a.shift, a.s + d, fma(d, d, a.q));
#endif
}

#if defined(STATISTIC)
// mean (0), var (1) or std (2) as numpy gives it: var divides M2 by max(n - DDOF, 0); the nan
// forms give NaN whenever n - DDOF <= 0; no element at all gives NaN.
double finish_moments(moments m) {
  if (STATISTIC == 0) return moments_mean(m);
  double dof = m.n - (double)(DDOF);
#ifdef NAN_STATISTIC
  if (dof <= 0) return NAN;
#endif
  if (m.n == 0) return NAN;
  double var = moments_m2(m) / (dof > 0 ? dof : 0.0);
  return STATISTIC == 2 ? sqrt(var) : var;
}
#endif
#elif defined(ARG_OP)
typedef struct {
  ELEM value;
  long index;
} arg_acc;
#define ACC arg_acc

ACC make_arg(ELEM v, long i) {
  ACC a;
  a.value = v;
  a.index = i;
  return a;
}

// The first NaN wins; otherwise the extreme value, the smaller index on ties.
ACC arg_min(ACC a, ACC b) {
  bool a_nan = IS_NAN(a.value), b_nan = IS_NAN(b.value);
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return a.index < b.index ? a : b;
    return a_nan ? a : b;
  }
  if (a.value < b.value) return a;
  if (b.value < a.value) return b;
  return a.index < b.index ? a : b;
}

ACC arg_max(ACC a, ACC b) {
  bool a_nan = IS_NAN(a.value), b_nan = IS_NAN(b.value);
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return a.index < b.index ? a : b;
    return a_nan ? a : b;
  }
  if (a.value > b.value) return a;
  if (b.value > a.value) return b;
  return a.index < b.index ? a : b;
}

// Whether element v displaces `best`, an element before it: a strictly better value, or the
// first NaN.
bool beats_min(ELEM v, ELEM best) {
  return (v < best) | (IS_NAN(v) & !IS_NAN(best));
}

bool beats_max(ELEM v, ELEM best) {
  return (v > best) | (IS_NAN(v) & !IS_NAN(best));
}

// Appends element v at index i, larger than every index already in `a` (each work-item visits
// its elements in increasing index order): only one that beats the best, or the very first
// element, replaces it, with no index comparison.
ACC arg_append_min(ACC a, ELEM v, long i) {
  return (beats_min(v, a.value) | (a.index == LONG_MAX)) ? make_arg(v, i) : a;
}

ACC arg_append_max(ACC a, ELEM v, long i) {
  return (beats_max(v, a.value) | (a.index == LONG_MAX)) ? make_arg(v, i) : a;
}

// nanargmin / nanargmax: NaN elements never count; index LONG_MAX holds nothing (an all-NaN
// input keeps it, and the host reports numpy's error).
ACC nan_arg(ACC a, ACC b, bool min_op) {
  if (a.index == LONG_MAX) return b;
  if (b.index == LONG_MAX) return a;
  if (min_op ? a.value < b.value : a.value > b.value) return a;
  if (min_op ? b.value < a.value : b.value > a.value) return b;
  return a.index < b.index ? a : b;
}

bool nan_beats(ELEM v, ELEM best, bool min_op) {
  return (!IS_NAN(v)) & ((min_op ? v < best : v > best) | IS_NAN(best));
}
#else
// A NaN anywhere wins.
ACC min_nan(ACC a, ACC b) {
  if (IS_NAN(a)) return a;
  if (IS_NAN(b)) return b;
  return b < a ? b : a;
}

ACC max_nan(ACC a, ACC b) {
  if (IS_NAN(a)) return a;
  if (IS_NAN(b)) return b;
  return b > a ? b : a;
}

// nanmin / nanmax: NaN is "nothing yet" (the identity), so an all-NaN input stays NaN.
ACC min_skip_nan(ACC a, ACC b) {
  if (IS_NAN(a)) return b;
  if (IS_NAN(b)) return a;
  return b < a ? b : a;
}

ACC max_skip_nan(ACC a, ACC b) {
  if (IS_NAN(a)) return b;
  if (IS_NAN(b)) return a;
  return b > a ? b : a;
}
#endif

#define IDENTITY_SCALAR ((ACC)(IDENTITY_VALUE))
#define IDENTITY_MOMENTS make_moments(0, 0, 0, 0)
#define LOAD_NANSUM(v, i) (IS_NAN(v) ? (ACC)(0) : (ACC)(v))
#define LOAD_NANPROD(v, i) (IS_NAN(v) ? (ACC)(1) : (ACC)(v))
#define LOAD_NONZERO(v, i) ((ACC)((v) != 0))
#define LOAD_NANARG(v, i) (IS_NAN(v) ? IDENTITY_ARG : make_arg((v), (i)))
#define COMBINE_NANMIN(a, b) min_skip_nan((a), (b))
#define COMBINE_NANMAX(a, b) max_skip_nan((a), (b))
#define COMBINE_NANARGMIN(a, b) nan_arg((a), (b), true)
#define COMBINE_NANARGMAX(a, b) nan_arg((a), (b), false)
#define IDENTITY_ARG make_arg((ELEM)(IDENTITY_VALUE), LONG_MAX)
#define LOAD_SCALAR(v, i) ((ACC)(v))
#define LOAD_ARG(v, i) make_arg((v), (i))
#define COMBINE_SUM(a, b) ((a) + (b))
#define COMBINE_OR(a, b) ((a) | (b))
#define COMBINE_AND(a, b) ((a) & (b))
#define COMBINE_PROD(a, b) ((a) * (b))
#define COMBINE_MIN(a, b) min_nan((a), (b))
#define COMBINE_MAX(a, b) max_nan((a), (b))
#define COMBINE_ARGMIN(a, b) arg_min((a), (b))
#define COMBINE_ARGMAX(a, b) arg_max((a), (b))
#if defined(MOMENTS)
#define COMBINE moments_combine
#define LOAD(v, i) moments_append(IDENTITY_MOMENTS, (v))
#define APPEND(a, v, i) moments_append((a), (v))
#elif defined(NAN_ARG)
#if defined(ARG_MIN)
#define BEATS(v, best) nan_beats((v), (best), true)
#else
#define BEATS(v, best) nan_beats((v), (best), false)
#endif
#define APPEND(a, v, i) (BEATS((v), (a).value) ? make_arg((v), (i)) : (a))
#elif defined(ARG_OP) && defined(ARG_MIN)
#define APPEND(a, v, i) arg_append_min((a), (v), (i))
#define BEATS(v, best) beats_min((v), (best))
#elif defined(ARG_OP)
#define APPEND(a, v, i) arg_append_max((a), (v), (i))
#define BEATS(v, best) beats_max((v), (best))
#elif defined(EXTREME_MIN)
// One compare and one select on the accumulator's chain, where COMBINE tests it for NaN first: a
// NaN accumulator stays (v < NaN is false) and a NaN element is taken.
#define APPEND(a, v, i) ((((v) < (a)) | ((v) != (v))) ? (ACC)(v) : (a))
#elif defined(EXTREME_MAX)
#define APPEND(a, v, i) ((((v) > (a)) | ((v) != (v))) ? (ACC)(v) : (a))
#else
#define APPEND(a, v, i) COMBINE((a), LOAD((v), (i)))
#endif
#define RESULT_CAST(a) ((RES)(a))
#define RESULT_BITS(a) as_long(a)  // uint64 accumulator of a signed sum: same bits as int64
#define RESULT_ARG(a) ((a).value)
#define RESULT_RAW(a) (a)
#define RESULT_STATISTIC(a) ((RES)finish_moments(a))

void store_result(__global OUT* values, __global long* indices, long o, ACC a) {
  values[o] = NARROW(RESULT(a));
#ifdef ARG_OP
  indices[o] = a.index;
#endif
}

// A partial written by another group of this launch: volatile, so it is read from memory.
ACC load_partial(__global ACC* partials, long k) {
#if defined(MOMENTS)
  volatile __global ACC* p = partials + k;
  return make_moments(p->n, p->shift, p->s, p->q);
#elif defined(ARG_OP)
  volatile __global ACC* p = partials + k;
  ACC a;
  a.value = p->value;
  a.index = p->index;
  return a;
#else
  return ((volatile __global ACC*)partials)[k];
#endif
}

long element_offset(long i, long cols, long pad) {
  return pad == 0 ? i : i + (i / cols) * pad;
}

// Every work-item of the group calls this with its accumulator; all get the group's combination.
// The trailing barrier lets the caller reuse `scratch` at once.
ACC group_reduce(__local ACC* scratch, ACC acc, uint lid, uint size) {
  scratch[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = size / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = COMBINE(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  ACC total = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}

// Appends the lanes of one vector (flattened indices index, index + 1, ...) in order. A sum of
// 2-byte integers adds the lanes in 32 bits first (PRESUM: int or uint; at most 8 · 65535) and
// widens once; a sum of bytes adds them within the words of the vector: the two halves of each
// word's byte pairs in 16-bit fields (at most 8 · 255 a field over the four words), signed bytes
// biased by 128 first, four lanes an add instead of one. An arg op finds the
// vector's best value first, comparing values only (a strictly better value or the first NaN
// replaces it), and looks for the first lane holding it only when that value displaces the
// accumulator: the same pair as appending the lanes in order, with no index work per lane.
ACC fold_vector(ACC acc, STOREV v, long index) {
#if defined(PRESUM) && VW == 16
  const bool signed_lanes = (ELEM)(-1) < (ELEM)0;
  uint4 words = as_uint4(v) ^ (uint4)(signed_lanes ? 0x80808080u : 0u);
  uint4 pairs = (words & 0x00ff00ffu) + ((words >> 8) & 0x00ff00ffu);
  uint fields = pairs.s0 + pairs.s1 + pairs.s2 + pairs.s3;
  int sum = (int)((fields & 0xffffu) + (fields >> 16)) - (signed_lanes ? 16 * 128 : 0);
  return acc + (ACC)(long)sum;
#else
  ELEM lanes[VW];
  unpack_vector(v, lanes);
#if defined(PRESUM)
  PRESUM sum = 0;
#pragma unroll
  for (int j = 0; j < VW; ++j)
    sum += lanes[j];
  return acc + (ACC)(long)sum;
#elif defined(ARG_OP)
  ELEM best = lanes[0];
#pragma unroll
  for (int j = 1; j < VW; ++j)
    best = BEATS(lanes[j], best) ? lanes[j] : best;
  ACC next = APPEND(acc, best, index);
  if (next.index == acc.index) return acc;
  // Rare past the first vectors of random data: the first lane holding the best value.
  int lane = 0;
#pragma unroll
  for (int j = VW - 1; j >= 0; --j)
    lane = (lanes[j] == best) | (IS_NAN(lanes[j]) & IS_NAN(best)) ? j : lane;
  next.index += lane;
  return next;
#else
#pragma unroll
  for (int j = 0; j < VW; ++j)
    acc = APPEND(acc, lanes[j], index + j);
  return acc;
#endif
#endif
}

// Combines the accumulators of each slice of `width` work-items (a power of two dividing the
// group) in eight-way steps, a third of the barriers of a halving tree; every work-item gets its
// slice's combination. The trailing barrier lets the caller reuse `scratch` at once.
ACC slice_reduce(__local ACC* scratch, ACC acc, uint lid, uint width) {
  uint lane = lid & (width - 1);
  scratch[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint active = width; active > 1;) {
    uint next = active > 8 ? active / 8 : 1;
    if (lane < next) {
      // Slots at and beyond `next` are only read at this step, so the writes below are safe.
      for (uint k = 1; k < active / next; ++k)
        acc = COMBINE(acc, scratch[lid + k * next]);
      scratch[lid] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    active = next;
  }
  acc = scratch[lid - lane];
  barrier(CLK_LOCAL_MEM_FENCE);
  return acc;
}

// Folds the contiguous run p[0, len) (flattened index base + j for p[j]) as worker `w` of
// `workers`: scalar loads up to the first 16-byte boundary, 16-byte vectors (FAST_UNROLL in
// flight), scalar tail. Each worker visits its elements in increasing index order.
ACC fold_span(__global const STORE* p, long len, long base, long w, long workers, ACC acc) {
  long head = (long)((16 - ((size_t)p & 15)) & 15) / (long)sizeof(STORE);
  if (head > len) head = len;
  long vectors = (len - head) / VW;
  for (long j = w; j < head; j += workers)
    acc = APPEND(acc, WIDEN(p[j]), base + j);
  __global const STOREV* body = (__global const STOREV*)(p + head);
  long body_base = base + head;
  long v = w;
  for (; v + (FAST_UNROLL - 1) * workers < vectors; v += FAST_UNROLL * workers) {
    STOREV x[FAST_UNROLL];
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u)
      x[u] = body[v + u * workers];
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u)
      acc = fold_vector(acc, x[u], body_base + (v + u * workers) * VW);
  }
  if (v < vectors) {
    // Fewer than FAST_UNROLL vectors left: still one batch of (predicated) loads in flight.
    STOREV x[FAST_UNROLL];
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u)
      x[u] = v + u * workers < vectors ? body[v + u * workers] : (STOREV)(0);
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u)
      if (v + u * workers < vectors)
        acc = fold_vector(acc, x[u], body_base + (v + u * workers) * VW);
  }
  for (long j = head + vectors * VW + w; j < len; j += workers)
    acc = APPEND(acc, WIDEN(p[j]), base + j);
  return acc;
}

// The last pass of tree and serial (one group / one work-item left) writes the result.
void emit(__global ACC* partials, __global OUT* values, __global long* indices, long slot,
          bool last_pass, ACC acc) {
  if (last_pass)
    store_result(values, indices, 0, acc);
  else
    partials[slot] = acc;
}
