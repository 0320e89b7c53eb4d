// Reduce kernels of every OpenCL variant for one (element type, operator), chosen by -D options:
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
#define ELEMV PASTE(ELEM, VW)

#ifdef ARG_OP
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
  bool a_nan = a.value != a.value, b_nan = b.value != b.value;
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return a.index < b.index ? a : b;
    return a_nan ? a : b;
  }
  if (a.value < b.value) return a;
  if (b.value < a.value) return b;
  return a.index < b.index ? a : b;
}

ACC arg_max(ACC a, ACC b) {
  bool a_nan = a.value != a.value, b_nan = b.value != b.value;
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
  return (v < best) | ((v != v) & (best == best));
}

bool beats_max(ELEM v, ELEM best) {
  return (v > best) | ((v != v) & (best == best));
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
#else
// A NaN anywhere wins (x != x is false for integers, so these serve every type).
ACC min_nan(ACC a, ACC b) {
  if (a != a) return a;
  if (b != b) return b;
  return b < a ? b : a;
}

ACC max_nan(ACC a, ACC b) {
  if (a != a) return a;
  if (b != b) return b;
  return b > a ? b : a;
}
#endif

#define IDENTITY_SCALAR ((ACC)(IDENTITY_VALUE))
#define IDENTITY_ARG make_arg((ELEM)(IDENTITY_VALUE), LONG_MAX)
#define LOAD_SCALAR(v, i) ((ACC)(v))
#define LOAD_ARG(v, i) make_arg((v), (i))
#define COMBINE_SUM(a, b) ((a) + (b))
#define COMBINE_PROD(a, b) ((a) * (b))
#define COMBINE_MIN(a, b) min_nan((a), (b))
#define COMBINE_MAX(a, b) max_nan((a), (b))
#define COMBINE_ARGMIN(a, b) arg_min((a), (b))
#define COMBINE_ARGMAX(a, b) arg_max((a), (b))
#if defined(ARG_OP) && defined(ARG_MIN)
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

void store_result(__global RES* values, __global long* indices, long o, ACC a) {
  values[o] = RESULT(a);
#ifdef ARG_OP
  indices[o] = a.index;
#endif
}

// A partial written by another group of this launch: volatile, so it is read from memory.
ACC load_partial(__global ACC* partials, long k) {
#ifdef ARG_OP
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

// Appends the lanes of one vector (flattened indices index, index + 1, ...) in order. A uint8
// sum adds the 16 lanes in 32 bits first (at most 16 · 255) and widens once. An arg op finds the
// vector's best lane first, comparing values only (a strictly better value or the first NaN
// replaces it, so the first of equals stays), and appends that one lane: one 64-bit index select
// per vector instead of one per lane, the same pair as appending the lanes in order.
ACC fold_vector(ACC acc, ELEMV v, long index) {
  ELEM lanes[VW];
  PASTE(vstore, VW)(v, 0, lanes);
#if defined(VECTOR_PRESUM)
  uint sum = 0;
#pragma unroll
  for (int j = 0; j < VW; ++j)
    sum += lanes[j];
  return acc + sum;
#elif defined(ARG_OP)
  ELEM best = lanes[0];
  int lane = 0;
#pragma unroll
  for (int j = 1; j < VW; ++j) {
    bool better = BEATS(lanes[j], best);
    best = better ? lanes[j] : best;
    lane = better ? j : lane;
  }
  return APPEND(acc, best, index + lane);
#else
#pragma unroll
  for (int j = 0; j < VW; ++j)
    acc = APPEND(acc, lanes[j], index + j);
  return acc;
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
ACC fold_span(__global const ELEM* p, long len, long base, long w, long workers, ACC acc) {
  long head = (long)((16 - ((size_t)p & 15)) & 15) / (long)sizeof(ELEM);
  if (head > len) head = len;
  long vectors = (len - head) / VW;
  for (long j = w; j < head; j += workers)
    acc = APPEND(acc, p[j], base + j);
  __global const ELEMV* body = (__global const ELEMV*)(p + head);
  long body_base = base + head;
  long v = w;
  for (; v + (FAST_UNROLL - 1) * workers < vectors; v += FAST_UNROLL * workers) {
    ELEMV x[FAST_UNROLL];
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u)
      x[u] = body[v + u * workers];
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u)
      acc = fold_vector(acc, x[u], body_base + (v + u * workers) * VW);
  }
  if (v < vectors) {
    // Fewer than FAST_UNROLL vectors left: still one batch of (predicated) loads in flight.
    ELEMV x[FAST_UNROLL];
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u)
      x[u] = v + u * workers < vectors ? body[v + u * workers] : (ELEMV)(0);
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u)
      if (v + u * workers < vectors)
        acc = fold_vector(acc, x[u], body_base + (v + u * workers) * VW);
  }
  for (long j = head + vectors * VW + w; j < len; j += workers)
    acc = APPEND(acc, p[j], base + j);
  return acc;
}

// The last pass of tree and serial (one group / one work-item left) writes the result.
void emit(__global ACC* partials, __global RES* values, __global long* indices, long slot,
          bool last_pass, ACC acc) {
  if (last_pass)
    store_result(values, indices, 0, acc);
  else
    partials[slot] = acc;
}

// ---- tree --------------------------------------------------------------------------------------

__kernel __attribute__((reqd_work_group_size(TREE_BLOCK, 1, 1))) void tree_first(
    __global const ELEM* in, long n, long cols, long pad, __global ACC* partials,
    __global RES* values, __global long* indices) {
  __local ACC scratch[TREE_BLOCK];
  long i = get_global_id(0);
  ACC acc = i < n ? LOAD(in[element_offset(i, cols, pad)], i) : IDENTITY;
  acc = group_reduce(scratch, acc, get_local_id(0), TREE_BLOCK);
  if (get_local_id(0) == 0)
    emit(partials, values, indices, get_group_id(0), get_num_groups(0) == 1, acc);
}

__kernel __attribute__((reqd_work_group_size(TREE_BLOCK, 1, 1))) void tree_next(
    __global const ACC* in, long n, __global ACC* partials, __global RES* values,
    __global long* indices) {
  __local ACC scratch[TREE_BLOCK];
  long i = get_global_id(0);
  ACC acc = i < n ? in[i] : IDENTITY;
  acc = group_reduce(scratch, acc, get_local_id(0), TREE_BLOCK);
  if (get_local_id(0) == 0)
    emit(partials, values, indices, get_group_id(0), get_num_groups(0) == 1, acc);
}

// ---- serial ------------------------------------------------------------------------------------

__kernel __attribute__((reqd_work_group_size(SERIAL_BLOCK, 1, 1))) void serial_first(
    __global const ELEM* in, long n, long cols, long pad, __global ACC* partials,
    __global RES* values, __global long* indices) {
  long t = get_global_id(0);
  long begin = t * SERIAL_ITEMS;
  if (begin >= n) return;
  long end = min(n, begin + SERIAL_ITEMS);
  ACC acc = IDENTITY;
  long row = begin / cols, col = begin - row * cols;
  __global const ELEM* p = in + element_offset(begin, cols, pad);
  for (long i = begin; i < end; ++i) {
    acc = COMBINE(acc, LOAD(*p, i));
    ++p;
    if (++col == cols) {
      col = 0;
      p += pad;
    }
  }
  emit(partials, values, indices, t, n <= SERIAL_ITEMS, acc);
}

__kernel __attribute__((reqd_work_group_size(SERIAL_BLOCK, 1, 1))) void serial_next(
    __global const ACC* in, long n, __global ACC* partials, __global RES* values,
    __global long* indices) {
  long t = get_global_id(0);
  long begin = t * SERIAL_ITEMS;
  if (begin >= n) return;
  long end = min(n, begin + SERIAL_ITEMS);
  ACC acc = IDENTITY;
  for (long i = begin; i < end; ++i)
    acc = COMBINE(acc, in[i]);
  emit(partials, values, indices, t, n <= SERIAL_ITEMS, acc);
}

// ---- gridstride --------------------------------------------------------------------------------

__kernel __attribute__((reqd_work_group_size(GRIDSTRIDE_BLOCK, 1, 1))) void gridstride_partials(
    __global const ELEM* in, long n, long cols, long pad, __global ACC* partials) {
  __local ACC scratch[GRIDSTRIDE_BLOCK];
  ACC acc = IDENTITY;
  for (long i = get_global_id(0); i < n; i += get_global_size(0))
    acc = COMBINE(acc, LOAD(in[element_offset(i, cols, pad)], i));
  acc = group_reduce(scratch, acc, get_local_id(0), GRIDSTRIDE_BLOCK);
  if (get_local_id(0) == 0) partials[get_group_id(0)] = acc;
}

// One group folds `count` partials in a fixed order and writes the result.
__kernel __attribute__((reqd_work_group_size(GRIDSTRIDE_BLOCK, 1, 1))) void gridstride_finish(
    __global const ACC* partials, long count, __global RES* values, __global long* indices) {
  __local ACC scratch[GRIDSTRIDE_BLOCK];
  uint lid = get_local_id(0);
  ACC acc = IDENTITY;
  for (long k = lid; k < count; k += GRIDSTRIDE_BLOCK)
    acc = COMBINE(acc, partials[k]);
  acc = group_reduce(scratch, acc, lid, GRIDSTRIDE_BLOCK);
  if (lid == 0) store_result(values, indices, 0, acc);
}

// ---- atomic ------------------------------------------------------------------------------------

#ifdef ACC_BITS
#define AS_(type, x) as_##type(x)
#define AS(type, x) AS_(type, x)
#ifdef ATOMIC_64
#define CMPXCHG atom_cmpxchg
#else
#define CMPXCHG atomic_cmpxchg
#endif

__kernel void atomic_reset(__global ACC_BITS* target) {
  *target = AS(ACC_BITS, IDENTITY);
}

__kernel __attribute__((reqd_work_group_size(ATOMIC_BLOCK, 1, 1))) void atomic_fold(
    __global const ELEM* in, long n, long cols, long pad, volatile __global ACC_BITS* target) {
  __local ACC scratch[ATOMIC_BLOCK];
  ACC acc = IDENTITY;
  for (long i = get_global_id(0); i < n; i += get_global_size(0))
    acc = COMBINE(acc, LOAD(in[element_offset(i, cols, pad)], i));
  acc = group_reduce(scratch, acc, get_local_id(0), ATOMIC_BLOCK);
  if (get_local_id(0) != 0) return;
  ACC_BITS seen = *target, expected;
  do {
    expected = seen;
    ACC_BITS desired = AS(ACC_BITS, COMBINE(AS(ACC, expected), acc));
    if (desired == expected) break;
    seen = CMPXCHG(target, expected, desired);
  } while (seen != expected);
}

__kernel void atomic_result(__global const ACC_BITS* target, __global RES* values) {
  values[0] = RESULT(AS(ACC, *target));
}
#endif

// ---- fast --------------------------------------------------------------------------------------

// The input is read-only and never aliases an output (`restrict`): NVIDIA's compiler may then
// read it through the non-coherent read-only path.

// Axis all. `counter` is 0 before the launch and is left 0 by the last group. Strided 2-D input
// is swept row by row (vector loads within rows) unless its rows are narrower than a group.
__kernel __attribute__((reqd_work_group_size(FAST_BLOCK, 1, 1))) void fast_all(
    __global const ELEM* restrict in, long n, long cols, long pad, __global ACC* partials,
    volatile __global uint* counter, __global RES* values, __global long* indices) {
  __local ACC scratch[FAST_BLOCK];
  __local int is_last;
  uint lid = get_local_id(0);
  ACC acc = IDENTITY;
  long rows = n / cols, groups_in_grid = get_num_groups(0);
  if (pad == 0) {
    acc = fold_span(in, n, 0, get_global_id(0), get_global_size(0), acc);
  } else if (rows < groups_in_grid) {
    // Few long rows: the whole grid sweeps each row.
    for (long r = 0; r < rows; ++r)
      acc = fold_span(in + r * (cols + pad), cols, r * cols, get_global_id(0), get_global_size(0),
                      acc);
  } else if (cols >= FAST_BLOCK) {
    // Many rows as wide as a group: a group sweeps one row at a time.
    for (long r = get_group_id(0); r < rows; r += groups_in_grid)
      acc = fold_span(in + r * (cols + pad), cols, r * cols, lid, FAST_BLOCK, acc);
  } else {
    // Many narrow rows: flat indices, scalar loads.
    for (long i = get_global_id(0); i < n; i += get_global_size(0))
      acc = APPEND(acc, in[element_offset(i, cols, pad)], i);
  }
  acc = slice_reduce(scratch, acc, lid, FAST_BLOCK);
  if (groups_in_grid == 1) {
    if (lid == 0) store_result(values, indices, 0, acc);
    return;
  }
  if (lid == 0) {
    partials[get_group_id(0)] = acc;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    is_last = atomic_inc(counter) == groups_in_grid - 1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!is_last) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  ACC total = IDENTITY;
  for (long k = lid; k < groups_in_grid; k += FAST_BLOCK)
    total = COMBINE(total, load_partial(partials, k));
  total = slice_reduce(scratch, total, lid, FAST_BLOCK);
  if (lid == 0) {
    store_result(values, indices, 0, total);
    *counter = 0;
  }
}

// Axis rows: slices of `slice` work-items (a power of two) each fold one row; groups take
// FAST_ROWS_BLOCK / slice rows at a time, grid-stride over the rows.
__kernel __attribute__((reqd_work_group_size(FAST_ROWS_BLOCK, 1, 1))) void fast_rows(
    __global const ELEM* restrict in, long rows, long cols, long row_stride, uint slice,
    __global RES* values, __global long* indices) {
  __local ACC scratch[FAST_ROWS_BLOCK];
  uint lid = get_local_id(0);
  uint lane = lid & (slice - 1);
  long rows_per_group = FAST_ROWS_BLOCK / slice;
  for (long first = get_group_id(0) * rows_per_group; first < rows;
       first += get_num_groups(0) * rows_per_group) {
    long r = first + lid / slice;
    ACC acc = IDENTITY;
    if (r < rows) acc = fold_span(in + r * row_stride, cols, 0, lane, slice, acc);
    acc = slice_reduce(scratch, acc, lid, slice);
    if (lane == 0 && r < rows) store_result(values, indices, r, acc);
  }
}

// Axis cols: a group covers a tile of `tile` consecutive columns (a power of two; work-item x
// owns column x, so loads are coalesced) and FAST_BLOCK / tile work-items down each column over
// one chunk of rows. Groups are numbered tile-fastest. With several chunks, each writes its
// partials and the last group of a column tile combines them in chunk order.
__kernel __attribute__((reqd_work_group_size(FAST_BLOCK, 1, 1))) void fast_cols(
    __global const ELEM* restrict in, long rows, long cols, long row_stride, uint tile, long chunks,
    long rows_per_chunk, __global ACC* partials, volatile __global uint* counters,
    __global RES* values, __global long* indices) {
  __local ACC scratch[FAST_BLOCK];
  __local int is_last;
  uint lid = get_local_id(0);
  uint x = lid & (tile - 1), y = lid / tile, height = FAST_BLOCK / tile;
  long tiles = (cols + tile - 1) / tile;
  long tile_index = get_group_id(0) % tiles, chunk = get_group_id(0) / tiles;
  long c = tile_index * tile + x;
  long r_end = min(rows, (chunk + 1) * rows_per_chunk);
  ACC acc = IDENTITY;
  if (c < cols) {
    __global const ELEM* column = in + c;
    long r = chunk * rows_per_chunk + y;
    // Four rows' loads in flight before they are combined.
    for (; r + 3 * height < r_end; r += 4 * height) {
      ELEM a = column[r * row_stride], b = column[(r + height) * row_stride],
           d = column[(r + 2 * height) * row_stride], e = column[(r + 3 * height) * row_stride];
      acc = APPEND(acc, a, r);
      acc = APPEND(acc, b, r + height);
      acc = APPEND(acc, d, r + 2 * height);
      acc = APPEND(acc, e, r + 3 * height);
    }
    for (; r < r_end; r += height)
      acc = APPEND(acc, column[r * row_stride], r);
  }
  scratch[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = height / 2; s > 0; s >>= 1) {
    if (y < s) scratch[lid] = COMBINE(scratch[lid], scratch[lid + s * tile]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  bool owner = y == 0 && c < cols;
  if (chunks == 1) {
    if (owner) store_result(values, indices, c, scratch[lid]);
    return;
  }
  if (owner) partials[chunk * cols + c] = scratch[lid];
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (lid == 0) is_last = atomic_inc(counters + tile_index) == chunks - 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!is_last) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  if (owner) {
    ACC total = load_partial(partials, c);
    for (long k = 1; k < chunks; ++k)
      total = COMBINE(total, load_partial(partials, k * cols + c));
    store_result(values, indices, c, total);
  }
  if (lid == 0) counters[tile_index] = 0;
}

// Appends row r's lanes of a strip to the strip's per-column accumulators.
void append_strip(ACC* acc, ELEMV v, long r) {
  ELEM lanes[VW];
  PASTE(vstore, VW)(v, 0, lanes);
  for (int k = 0; k < VW; ++k)
    acc[k] = APPEND(acc[k], lanes[k], r);
}

// Axis cols with 16-byte aligned rows: work-item x of a group owns the strip of VW consecutive
// columns at (tile · FAST_COLS_BLOCK + x) · VW, so a warp reads 512 contiguous bytes of a row
// with one 16-byte load per work-item; each group folds one chunk of rows down its strips with
// FAST_UNROLL rows' loads in flight. Groups are numbered tile-fastest. With several chunks, each
// writes its partials [chunk][column] and the last group of a column tile combines them in chunk
// order.
__kernel __attribute__((reqd_work_group_size(FAST_COLS_BLOCK, 1, 1))) void fast_cols_strips(
    __global const ELEM* restrict in, long rows, long cols, long row_stride, long chunks,
    long rows_per_chunk, __global ACC* partials, volatile __global uint* counters,
    __global RES* values, __global long* indices) {
  __local int is_last;
  uint lid = get_local_id(0);
  long strips = (cols + VW - 1) / VW;
  long tiles = (strips + FAST_COLS_BLOCK - 1) / FAST_COLS_BLOCK;
  long tile_index = get_group_id(0) % tiles, chunk = get_group_id(0) / tiles;
  long c0 = (tile_index * FAST_COLS_BLOCK + lid) * VW;
  long r = chunk * rows_per_chunk, r_end = min(rows, r + rows_per_chunk);
  ACC acc[VW];
  for (int k = 0; k < VW; ++k)
    acc[k] = IDENTITY;
  if (c0 + VW <= cols) {
    __global const ELEM* strip = in + c0;
    for (; r + FAST_UNROLL <= r_end; r += FAST_UNROLL) {
      ELEMV x[FAST_UNROLL];
#pragma unroll
      for (int u = 0; u < FAST_UNROLL; ++u)
        x[u] = *(__global const ELEMV*)(strip + (r + u) * row_stride);
#pragma unroll
      for (int u = 0; u < FAST_UNROLL; ++u)
        append_strip(acc, x[u], r + u);
    }
    if (r < r_end) {
      // Fewer than FAST_UNROLL rows left: one batch of (predicated) loads in flight.
      ELEMV x[FAST_UNROLL];
#pragma unroll
      for (int u = 0; u < FAST_UNROLL; ++u)
        x[u] = r + u < r_end ? *(__global const ELEMV*)(strip + (r + u) * row_stride) : (ELEMV)(0);
#pragma unroll
      for (int u = 0; u < FAST_UNROLL; ++u)
        if (r + u < r_end) append_strip(acc, x[u], r + u);
    }
  } else if (c0 < cols) {
    // The last strip of a row whose width is not a multiple of VW.
    for (; r < r_end; ++r)
      for (int k = 0; k < VW; ++k)
        if (c0 + k < cols) acc[k] = APPEND(acc[k], in[r * row_stride + c0 + k], r);
  }
  if (chunks == 1) {
    for (int k = 0; k < VW; ++k)
      if (c0 + k < cols) store_result(values, indices, c0 + k, acc[k]);
    return;
  }
  for (int k = 0; k < VW; ++k)
    if (c0 + k < cols) partials[chunk * cols + c0 + k] = acc[k];
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (lid == 0) is_last = atomic_inc(counters + tile_index) == chunks - 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!is_last) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  if (c0 < cols) {
    // Chunk by chunk, the strip's columns' loads in flight together.
    for (int k = 0; k < VW; ++k)
      acc[k] = c0 + k < cols ? load_partial(partials, c0 + k) : IDENTITY;
    for (long ch = 1; ch < chunks; ++ch)
      for (int k = 0; k < VW; ++k)
        if (c0 + k < cols) acc[k] = COMBINE(acc[k], load_partial(partials, ch * cols + c0 + k));
    for (int k = 0; k < VW; ++k)
      if (c0 + k < cols) store_result(values, indices, c0 + k, acc[k]);
  }
  if (lid == 0) counters[tile_index] = 0;
}
