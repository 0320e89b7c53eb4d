// Reduce kernels of every OpenCL variant (tree, serial, gridstride, atomic, fast), built after
// reduce_ops.cl, which holds the options, the accumulator algebra and the group folds they share.

// ---- tree --------------------------------------------------------------------------------------

__kernel __attribute__((reqd_work_group_size(TREE_BLOCK, 1, 1))) void tree_first(
    __global const STORE* in, long n, long cols, long pad, __global ACC* partials,
    __global OUT* values, __global long* indices) {
  __local ACC scratch[TREE_BLOCK];
  long i = get_global_id(0);
  ACC acc = i < n ? LOAD(WIDEN(in[element_offset(i, cols, pad)]), i) : IDENTITY;
  acc = group_reduce(scratch, acc, get_local_id(0), TREE_BLOCK);
  if (get_local_id(0) == 0)
    emit(partials, values, indices, get_group_id(0), get_num_groups(0) == 1, acc);
}

__kernel __attribute__((reqd_work_group_size(TREE_BLOCK, 1, 1))) void tree_next(
    __global const ACC* in, long n, __global ACC* partials, __global OUT* values,
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
    __global const STORE* in, long n, long cols, long pad, __global ACC* partials,
    __global OUT* values, __global long* indices) {
  long t = get_global_id(0);
  long begin = t * SERIAL_ITEMS;
  if (begin >= n) return;
  long end = min(n, begin + SERIAL_ITEMS);
  ACC acc = IDENTITY;
  long row = begin / cols, col = begin - row * cols;
  __global const STORE* p = in + element_offset(begin, cols, pad);
  for (long i = begin; i < end; ++i) {
    acc = COMBINE(acc, LOAD(WIDEN(*p), i));
    ++p;
    if (++col == cols) {
      col = 0;
      p += pad;
    }
  }
  emit(partials, values, indices, t, n <= SERIAL_ITEMS, acc);
}

__kernel __attribute__((reqd_work_group_size(SERIAL_BLOCK, 1, 1))) void serial_next(
    __global const ACC* in, long n, __global ACC* partials, __global OUT* values,
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
    __global const STORE* in, long n, long cols, long pad, __global ACC* partials) {
  __local ACC scratch[GRIDSTRIDE_BLOCK];
  ACC acc = IDENTITY;
  for (long i = get_global_id(0); i < n; i += get_global_size(0))
    acc = COMBINE(acc, LOAD(WIDEN(in[element_offset(i, cols, pad)]), i));
  acc = group_reduce(scratch, acc, get_local_id(0), GRIDSTRIDE_BLOCK);
  if (get_local_id(0) == 0) partials[get_group_id(0)] = acc;
}

// One group folds `count` partials in a fixed order and writes the result.
__kernel __attribute__((reqd_work_group_size(GRIDSTRIDE_BLOCK, 1, 1))) void gridstride_finish(
    __global const ACC* partials, long count, __global OUT* values, __global long* indices) {
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
    __global const STORE* in, long n, long cols, long pad, volatile __global ACC_BITS* target) {
  __local ACC scratch[ATOMIC_BLOCK];
  ACC acc = IDENTITY;
  for (long i = get_global_id(0); i < n; i += get_global_size(0))
    acc = COMBINE(acc, LOAD(WIDEN(in[element_offset(i, cols, pad)]), i));
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

__kernel void atomic_result(__global const ACC_BITS* target, __global OUT* values) {
  values[0] = NARROW(RESULT(AS(ACC, *target)));
}
#endif

// ---- fast --------------------------------------------------------------------------------------

// The input is read-only and never aliases an output (`restrict`): NVIDIA's compiler may then
// read it through the non-coherent read-only path.

// Axis all. `counter` is 0 before the launch and is left 0 by the last group. Strided 2-D input
// is swept row by row (vector loads within rows) unless its rows are narrower than a group.
__kernel __attribute__((reqd_work_group_size(FAST_BLOCK, 1, 1))) void fast_all(
    __global const STORE* restrict in, long n, long cols, long pad, __global ACC* partials,
    volatile __global uint* counter, __global OUT* values, __global long* indices) {
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
      acc = APPEND(acc, WIDEN(in[element_offset(i, cols, pad)]), i);
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
    __global const STORE* restrict in, long rows, long cols, long row_stride, uint slice,
    __global OUT* values, __global long* indices) {
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
    __global const STORE* restrict in, long rows, long cols, long row_stride, uint tile, long chunks,
    long rows_per_chunk, __global ACC* partials, volatile __global uint* counters,
    __global OUT* values, __global long* indices) {
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
    __global const STORE* column = in + c;
    long r = chunk * rows_per_chunk + y;
    // Four rows' loads in flight before they are combined.
    for (; r + 3 * height < r_end; r += 4 * height) {
      ELEM a = WIDEN(column[r * row_stride]), b = WIDEN(column[(r + height) * row_stride]),
           d = WIDEN(column[(r + 2 * height) * row_stride]),
           e = WIDEN(column[(r + 3 * height) * row_stride]);
      acc = APPEND(acc, a, r);
      acc = APPEND(acc, b, r + height);
      acc = APPEND(acc, d, r + 2 * height);
      acc = APPEND(acc, e, r + 3 * height);
    }
    for (; r < r_end; r += height)
      acc = APPEND(acc, WIDEN(column[r * row_stride]), r);
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
void append_strip(ACC* acc, STOREV v, long r) {
  ELEM lanes[VW];
  unpack_vector(v, lanes);
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
    __global const STORE* restrict in, long rows, long cols, long row_stride, long chunks,
    long rows_per_chunk, __global ACC* partials, volatile __global uint* counters,
    __global OUT* values, __global long* indices) {
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
    __global const STORE* strip = in + c0;
    for (; r + FAST_UNROLL <= r_end; r += FAST_UNROLL) {
      STOREV x[FAST_UNROLL];
#pragma unroll
      for (int u = 0; u < FAST_UNROLL; ++u)
        x[u] = *(__global const STOREV*)(strip + (r + u) * row_stride);
#pragma unroll
      for (int u = 0; u < FAST_UNROLL; ++u)
        append_strip(acc, x[u], r + u);
    }
    if (r < r_end) {
      // Fewer than FAST_UNROLL rows left: one batch of (predicated) loads in flight.
      STOREV x[FAST_UNROLL];
#pragma unroll
      for (int u = 0; u < FAST_UNROLL; ++u)
        x[u] = r + u < r_end ? *(__global const STOREV*)(strip + (r + u) * row_stride) : (STOREV)(0);
#pragma unroll
      for (int u = 0; u < FAST_UNROLL; ++u)
        if (r + u < r_end) append_strip(acc, x[u], r + u);
    }
  } else if (c0 < cols) {
    // The last strip of a row whose width is not a multiple of VW.
    for (; r < r_end; ++r)
      for (int k = 0; k < VW; ++k)
        if (c0 + k < cols) acc[k] = APPEND(acc[k], WIDEN(in[r * row_stride + c0 + k]), r);
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
