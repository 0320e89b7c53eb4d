// Histogram kernels (OpenCL 1.2): the classic variants and `fast`, built after
// histogram_rules.cl, which holds the options, the slot rules and the 64-bit count helpers, and
// histogram_sink.cl, where `fast` counts.

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

// ---- `fast` ----
// `fast` counts rows (histogram_rules.cl's slot_of_row: 0 below the range, 1 + b for bin b,
// bins + 1 above it, bins + 2 NaN, and with HI_ROW hi's row before those two), mapped to slots
// where a count leaves local memory. COUNT_VALUES counts the values themselves: 1 for 1-byte
// input (mapped to slots through the merge table at the flush), 2 for 16-bit input (a row per
// value of its window, window_row, mapped through the row → slot table, VALUE_SLOTS).
#if COUNT_VALUES == 2
#define VALUE_SLOTS table
#else
#define VALUE_SLOTS 0
#endif

// A value's row: *exact false leaves a candidate that corrected_row() settles (only the float
// rules, RULE 3 and 5, ever need it).
uint quick_row(T x, RULE_PARAMS, bool* exact) {
#if COUNT_VALUES == 1
  *exact = true;
  return (uint)x;
#else
  return QUICK_ROW(x, exact);
#endif
}

// The row of a value whose quick candidate was not exact. The last value corrected and its row
// are kept (memo): data sitting on an edge (all-equal data often does) pays for one correction,
// not one per value.
uint corrected_row(T x, uint candidate, RULE_PARAMS, T* memo_value, uint* memo_row) {
  if (!(x == *memo_value)) {
    *memo_row = CORRECTED_ROW(x, candidate);
    *memo_value = x;
  }
  return *memo_row;
}

// The exact row of one value.
uint value_row(T x, RULE_PARAMS, T* memo_value, uint* memo_row) {
  bool exact;
  const uint r = quick_row(x, RULE_ARGS, &exact);
  return exact ? r : corrected_row(x, r, RULE_ARGS, memo_value, memo_row);
}

// The row a value's row is counted in: itself when the pass covers every row (`whole`), else its
// place in the pass's range (≥ range, so not counted, outside it).
uint row_of(uint r, uint first, const bool whole) {
  return whole ? r : r - first;
}

// Whether every value of a 16-byte vector has the same bits (so the same row).
bool same_values(uint4 w) {
  bool words = w.x == w.y && w.y == w.z && w.z == w.w;
  if (sizeof(T) == 1) return words && w.x == (w.x & 0xFFu) * 0x01010101u;
  if (sizeof(T) == 2) return words && w.x == (w.x & 0xFFFFu) * 0x00010001u;
  if (sizeof(T) == 8) return w.x == w.z && w.y == w.w;
  return words;
}

// The VEC rows of one 16-byte vector, without branches; the rare inexact float candidates are
// corrected once per vector. RULE 4 decodes the two 16-bit values of each word together.
void vector_rows(uint4 w, RULE_PARAMS, uint* row, T* memo_value, uint* memo_row) {
#if COUNT_VALUES == 1
  uint words[4];
  vstore4(w, 0, words);
#pragma unroll
  for (int k = 0; k < 16; ++k)
    row[k] = (words[k >> 2] >> ((k & 3) * 8)) & 0xFFu;
#elif COUNT_VALUES == 2
  // The window's offsets, and a lane's rows outside it only for a vector that has such values.
  uint words[4];
  vstore4(w, 0, words);
  bool outside = false;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint2 offsets = word_offsets(words[k], window.x);
    row[2 * k] = offsets.x;
    row[2 * k + 1] = offsets.y;
    outside |= max(offsets.x, offsets.y) >= window.y;
  }
  if (VALUE_WINDOW && outside) {
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      row[k] = outside_row(row[k], window);
  }
#elif RULE == 4
  uint words[4];
  vstore4(w, 0, words);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    float low_value, high_value;
    decode16(words[k], &low_value, &high_value);
    row[2 * k] = even16_row(low_value, RULE_ARGS);
    row[2 * k + 1] = even16_row(high_value, RULE_ARGS);
  }
#else
  T values[VEC];
  VSTORE(AS_VTYPE(w), 0, values);
  bool exact[VEC], all_exact = true;
#pragma unroll
  for (int k = 0; k < VEC; ++k) {
    row[k] = quick_row(values[k], RULE_ARGS, &exact[k]);
    all_exact &= exact[k];
  }
  if (!all_exact) {
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      if (!exact[k]) row[k] = corrected_row(values[k], row[k], RULE_ARGS, memo_value, memo_row);
  }
#endif
}

// Counts one vector. With `runs` (global counting, or local with RUNS) a cheap test per vector —
// does it continue the work-item's run, or begin and end on one row? — sends skewed data through
// the run, a vector of equal rows in one step; OpenCL 1.2 has no warp vote, so each work-item
// decides for itself.
void count_vector(uint4 w, RULE_PARAMS, const bool runs, SINK_PARAMS, uint* run_row,
                  uint* run_count, T* memo_value, uint* memo_row) {
  uint rows[VEC];
  vector_rows(w, RULE_ARGS, rows, memo_value, memo_row);
#pragma unroll
  for (int k = 0; k < VEC; ++k)
    rows[k] = row_of(rows[k], first, whole);
  if (runs && (rows[0] == *run_row || rows[0] == rows[VEC - 1])) {
    bool equal = true;
#pragma unroll
    for (int k = 1; k < VEC; ++k)
      equal &= rows[k] == rows[0];
    if (equal) {
      run_add(SINK_ARGS, run_row, run_count, rows[0], VEC);
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k)
        run_add(SINK_ARGS, run_row, run_count, rows[k], 1);
    }
    return;
  }
  sink_add_ones(SINK_ARGS, rows);
}

// Vector v of input whose values lie `spacing` elements apart: value k is the element
// (v − l)·VEC + k·32 + l (l = v mod 32) of the view, so that 32 work-items reading consecutive
// vectors read 32 consecutive elements at a time; the whole groups of 32 vectors cover the view's
// first elements once each.
uint4 gathered(__global const T* values, long v, long spacing) {
  const long l = v & 31, first = (v - l) * VEC + l;
  T parts[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k)
    parts[k] = values[(first + k * 32) * spacing];
  return as_uint4(VLOAD(0, parts));
}

// The fast kernels' main loop: work-item `item` of `stride` reads 16-byte vectors, UNROLL of
// them in flight, grid-stride. A round whose vectors all hold one value (all-equal data, long
// runs: one test per round, so spread data pays little for it) places that value once and adds
// the round to the work-item's run; other rounds place every value without branches and add it
// to the sink (`whole`: the pass is every row, never outside). The remainder vectors are counted
// one by one, then the values after the last whole vector. `spacing` > 1: the n values are
// in[0], in[spacing], ... (a view; OpenCL's step() takes the shorter name), gathered into vectors
// in whole groups of 32.
void count_values(__global const uint4* in, long n, long spacing, RULE_PARAMS, SINK_PARAMS,
                  long item, long stride) {
  const bool runs = to_global || RUNS;
  const bool stepped = spacing != 1;
  __global const T* values = (__global const T*)in;
  const long vectors = stepped ? n / (32 * VEC) * 32 : n / VEC;
  uint run_row = range, run_count = 0;
  // The memo starts on 0 and its row.
  T memo_value = 0;
  bool zero_exact;
  uint memo_row = quick_row(memo_value, RULE_ARGS, &zero_exact);
  if (!zero_exact) memo_row = CORRECTED_ROW(memo_value, memo_row);
  long v = item;
  for (; v + (UNROLL - 1) * stride < vectors; v += UNROLL * stride) {
    uint4 w[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      w[u] = stepped ? gathered(values, v + u * stride, spacing) : in[v + u * stride];
    bool one_value = same_values(w[0]);
    if (one_value) {
#pragma unroll
      for (int u = 1; u < UNROLL; ++u)
        one_value &= all(w[u] == w[0]);
    }
    if (one_value) {
      T values[VEC];
      VSTORE(AS_VTYPE(w[0]), 0, values);
      const uint r = value_row(values[0], RULE_ARGS, &memo_value, &memo_row);
      run_add(SINK_ARGS, &run_row, &run_count, row_of(r, first, whole), UNROLL * VEC);
      continue;
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      count_vector(w[u], RULE_ARGS, runs, SINK_ARGS, &run_row, &run_count, &memo_value, &memo_row);
  }
  for (; v < vectors; v += stride)
    count_vector(stepped ? gathered(values, v, spacing) : in[v], RULE_ARGS, runs, SINK_ARGS,
                 &run_row, &run_count, &memo_value, &memo_row);
  if (run_count) sink_add(SINK_ARGS, run_row, run_count);
  for (long i = vectors * VEC + item; i < n; i += stride) {
    const uint r = value_row(values[i * spacing], RULE_ARGS, &memo_value, &memo_row);
    sink_add(SINK_ARGS, row_of(r, first, whole), 1);
  }
}

// Counts into one local histogram per group, striped or packed, then adds each row (and the
// packed rows' hot-row table) to the 64-bit counts at its slot. Rows beyond local memory are
// split into `passes` ranges of `span` rows counted side by side: group g counts range
// g % passes over chunk g / passes of the input (the host launches a multiple of `passes`
// groups), so the groups of one chunk run together and all but the first read it from L2, and
// count only the values of their range (a skipped atomic per other value; WHOLE: one range of
// every row, nothing to skip). For COUNT_VALUES 1 (always WHOLE) `hist` holds 256 more counters
// where values are merged into slots: table[v] is value v's merge cell, table[256 + cell] the
// cell's slot.
__kernel void fast_local(__global const uint4* in, long n, long spacing, RULE_PARAMS, uint passes,
                         uint span, uint counted, __local uint* hist, __global ulong* counts) {
  const uint slot_bins = counted - ROWS_PAST_BINS;  // counted rows (unused with COUNT_VALUES)
  const uint first = (get_group_id(0) % passes) * span;
  const uint range = first < counted ? min(span, counted - first) : 0;
#if PACKED
  const uint words = packed_words(range) + 3 * HOT_ENTRIES;
#else
  const uint words = striped_words(range);
#endif
  for (uint i = get_local_id(0); i < words + (COUNT_VALUES == 1 ? 256 : 0); i += get_local_size(0))
    hist[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const long chunks = get_num_groups(0) / passes;
  const long item = (get_group_id(0) / passes) * get_local_size(0) + get_local_id(0);
  __local uint* sink = PACKED ? hist : hist + (get_local_id(0) & (COLUMNS - 1));
  count_values(in, n, spacing, RULE_ARGS, false, WHOLE, sink, counts, first, range, slot_bins,
               VALUE_SLOTS, item, chunks * get_local_size(0));
  barrier(CLK_LOCAL_MEM_FENCE);
#if COUNT_VALUES == 1
  __local uint* merged = hist + words;
  for (uint value = get_local_id(0); value < range; value += get_local_size(0)) {
    uint total = column_total(hist, value);
    if (total) atomic_add(merged + table[value], total);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint cell = get_local_id(0); cell < 256; cell += get_local_size(0))
    if (merged[cell]) add_count(counts, table[256 + cell], merged[cell]);
#else
  flush_rows(hist, first, range, slot_bins, VALUE_SLOTS, counts);
#endif
#if HOT_ENTRIES
  flush_hot_rows(hist, counts, first, range, slot_bins, VALUE_SLOTS);
#endif
}

// Rows beyond the ranges' limit: straight into the 64-bit global counts (at each row's slot),
// with the per-vector test and register runs for skewed data.
__kernel void fast_global(__global const uint4* in, long n, long spacing, RULE_PARAMS, uint counted,
                          __global ulong* counts) {
  count_values(in, n, spacing, RULE_ARGS, true, true, 0, counts, 0, NO_INDEX,
               counted - ROWS_PAST_BINS, VALUE_SLOTS, get_global_id(0), get_global_size(0));
}

#if COUNT_VALUES == 2 && PACKED && WHOLE && !VALUE_WINDOW && FIELDS * FIELD_BITS < 32
// 16-bit input counted per value (a row per bit pattern) in one range of packed fields (NVIDIA:
// int16 and uint16 in 5-bit fields, six to a word, 65536 rows in 43.7 KiB): fast_local's work
// for that layout (and its arguments) in a kernel of few registers (32 on NVIDIA), in groups of
// VALUES16_GROUP, so that two groups of 1024 share a multiprocessor and hide the wait of local
// atomics that return their word. Each work-item reads one 16-byte vector at a time, grid-stride
// (gathered from a view): a vector of one value goes to the work-item's register run; any other
// adds its 8 values with one returning atomic each, with no branch between them: an add that
// carried out of a field is logged (its word and carries) and settled after the vector
// (settle_fields), so the settling code is not repeated for each value. The rows and the
// hot-row table then go to their counts as fast_local's do.
#define VALUES16_SINK false, true, hist, counts, 0, counted, counted - 3, VALUE_SLOTS
__kernel __attribute__((reqd_work_group_size(VALUES16_GROUP, 1, 1))) void fast_values16(
    __global const uint4* in, long n, long spacing, RULE_PARAMS, uint passes, uint span,
    uint counted, __local uint* hist, __global ulong* counts) {
  const uint words = packed_words(counted) + 3 * HOT_ENTRIES;
  for (uint i = get_local_id(0); i < words; i += get_local_size(0))
    hist[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __global const ushort* values = (__global const ushort*)in;
  const bool stepped = spacing != 1;
  const long vectors = stepped ? n / (32 * VEC) * 32 : n / VEC;
  uint run_row = counted, run_count = 0;
  for (long v = get_global_id(0); v < vectors; v += get_global_size(0)) {
    const uint4 w = stepped ? gathered((__global const T*)in, v, spacing) : in[v];
    if (same_values(w)) {
      run_add(VALUES16_SINK, &run_row, &run_count, w.x & 0xFFFFu, VEC);
      continue;
    }
    const uint halves[4] = {w.x, w.y, w.z, w.w};
    uint logged_word[VEC], logged_carries[VEC], logged = 0;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      const uint r = (halves[k / 2] >> (16 * (k % 2))) & 0xFFFFu;
      const uint addend = field_addend(r, 1);
      const uint carries = carries_of(word_add(hist, r / FIELDS, addend), addend);
      if (carries) {
        logged_word[logged] = r / FIELDS;
        logged_carries[logged++] = carries;
      }
    }
    for (uint i = 0; i < logged; ++i)
      settle_fields(VALUES16_SINK, logged_word[i] * FIELDS, logged_carries[i]);
  }
  if (run_count) sink_add(VALUES16_SINK, run_row, run_count);
  for (long i = vectors * VEC + get_global_id(0); i < n; i += get_global_size(0))
    sink_add(VALUES16_SINK, values[i * spacing], 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  flush_rows(hist, 0, counted, counted - 3, VALUE_SLOTS, counts);
#if HOT_ENTRIES
  flush_hot_rows(hist, counts, 0, counted, counted - 3, VALUE_SLOTS);
#endif
}
#undef VALUES16_SINK
#endif

#if DENSE_VALUES
// 16-bit input counted per value in local memory (DENSE_VALUES): fast_local adds each row's
// count to a table of the rows (add_counted), in turn, so a warp's adds fall on neighbouring
// words whatever the slots (at 2^20 bins they lie 16 apart, a sector each), and no row waits for
// its slot's lookup. Here each work-item takes a stretch of the table's rows and adds each run of
// rows of one slot (bins wider than a value) to that slot's count once.
#if DENSE_VALUES == 32
#define DENSE_ROW uint
#else
#define DENSE_ROW ulong
#endif
__kernel void spread_values(__global const DENSE_ROW* rows, uint counted, RULE_PARAMS,
                            __global ulong* counts) {
  const uint items = (uint)get_global_size(0);
  const uint stretch = (counted + items - 1) / items;
  const uint begin = min(counted, (uint)get_global_id(0) * stretch);
  const uint end = min(counted, begin + stretch);
  uint run_slot = NO_INDEX;
  ulong run = 0;
  for (uint r = begin; r < end; ++r) {
    const ulong total = rows[r];
    if (!total) continue;
    const uint s = table[r];
    if (s != run_slot) {
      if (run) add_count(counts, run_slot, run);
      run_slot = s;
      run = 0;
    }
    run += total;
  }
  if (run) add_count(counts, run_slot, run);
}
#endif
