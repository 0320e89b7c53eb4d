// Where OpenCL histogram `fast` counts (built after histogram_rules.cl, before the kernels that
// count: histogram.cl's and histogram_joint.cl's): the sink's adds, a work-item's register run of
// equal rows, a row's total in a group's local histogram and the flush of a range's rows to the
// 64-bit counts.
// Where `fast` counts (the sink): the 64-bit global counts (to_global), or in local memory the
// rows of one range (values outside it are not counted: no atomic at all, where a shared
// discard row would take the atomics of most values of a range on one word):
//  - striped (FIELD_BITS 0): 32-bit counters, row r of work-item i at
//    striped_place(r)·ROW_WORDS + i % COLUMNS (`local_sink` points at the work-item's column), so
//    with 32 columns the lanes of a warp hit their own banks and equal values cost no contention;
//    with fewer and PERMUTED_ROWS (bfloat16 below 8 columns) the rows are permuted in groups of
//    one turn of the 32 banks (striped_place), and with PADDED_ROWS (bfloat16 in 8) padded to an
//    odd stride, so that the rows a power of two apart that such data crowds do not share a bank;
//  - packed (FIELD_BITS 16, 8, 5 or 4): FIELDS counters to a 32-bit word, row r in field
//    r % FIELDS of word r / FIELDS, for more rows in one range (65536 slots fit 48 KiB in one
//    range of 5-bit fields, against three of 16-bit ones, each of which re-reads and re-places
//    every value). Every atomic returns the word it changed, so the carries of each add are
//    known exactly: a field that wrapped lost 2^FIELD_BITS, which moves to its row's 64-bit
//    count (`counts` points at the range's first), and the 1 it spilled into the field above is
//    taken back from that row's count. Adds stay below 2^FIELD_BITS (longer runs go straight to
//    the global counts), so one add wraps a field at most once.
//  - hot rows (HOT_ENTRIES, narrow fields): a narrow field wraps every few dozen adds, and on
//    skewed data the carries of a few rows would queue on a few global addresses, as would the
//    register runs of equal values (all-equal data: one per work-item), too long for a field.
//    A row that carries or ends a long run claims an entry of a small table after the words
//    (entry row % HOT_ENTRIES: tag row + 1, its number of wraps, its long runs' sum), and its
//    later carries and runs are one local atomic; the table is added to the global counts with
//    the rest. Rows whose entry another row holds go straight to the global counts.
#define SINK_PARAMS                                                                         \
  const bool to_global, const bool whole, __local uint *local_sink, __global ulong *counts, \
      uint first, uint range, uint slot_bins, __global const uint *value_slots
#define SINK_ARGS to_global, whole, local_sink, counts, first, range, slot_bins, value_slots

// Rows of the striped counters a turn of the 32 banks, and row r's place: its low bits xor-ed with
// the bits above them within its aligned group of BANK_ROWS rows (the identity with 32 columns or
// without PERMUTED_ROWS). bfloat16 in [0, 1) over 4096 bins puts half its values on 128 rows 16
// apart, in order one bank a column. The striped words of a range take whole groups, so every
// place lies inside (the host allocates whole groups either way). With PADDED_ROWS a row takes
// COLUMNS + 1 words (ROW_WORDS), an odd stride that spreads rows a power of two apart over the
// banks at no instruction a value (bfloat16 in 8 columns).
#ifndef PADDED_ROWS
#define PADDED_ROWS 0
#endif
#define ROW_WORDS (COLUMNS + PADDED_ROWS)
#define BANK_ROWS (PERMUTED_ROWS && COLUMNS < 32 ? 32 / COLUMNS : 1)
uint striped_place(uint r) {
  return r ^ ((r / BANK_ROWS) & (BANK_ROWS - 1));
}
uint striped_words(uint range) {
  return (range + BANK_ROWS - 1) / BANK_ROWS * BANK_ROWS * ROW_WORDS;
}

// With NVIDIA_PTX (set by the host on NVIDIA only) local atomics take a 32-bit shared-window
// address, as the CUDA kernel does: a local pointer is 64 bits wide there, and its arithmetic
// would take more integer instructions per value in a kernel that the integer pipe bounds.
#if NVIDIA_PTX
void local_add(__local uint* column, uint row, uint n) {
  uint address = (uint)(size_t)column + striped_place(row) * (ROW_WORDS * 4);
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(address), "r"(n) : "memory");
}
uint word_add(__local uint* words, uint index, uint addend) {
  uint old, address = (uint)(size_t)words + index * 4;
  asm volatile("atom.shared.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "r"(address), "r"(addend)
               : "memory");
  return old;
}
#else
void local_add(__local uint* column, uint row, uint n) {
  atomic_add(column + striped_place(row) * ROW_WORDS, n);
}
uint word_add(__local uint* words, uint index, uint addend) {
  return atomic_add(words + index, addend);
}
#endif

// The slot of counted row r (a value's row, or with COUNT_VALUES 2 the value itself).
uint slot_of_counted(uint r, uint bins, __global const uint* value_slots) {
  return COUNT_VALUES == 2 ? value_slots[r] : slot_of_row(r, bins);
}

// Adds v to counted row r's count: at its slot, or with DENSE_VALUES (16-bit input counted per
// value in local memory) in a table of the rows that spread_values adds to the slots (`counts`
// is that table): of 32-bit words where the input has fewer than 2^32 values (DENSE_VALUES 32:
// every row's total is below 2^32, so adds taken mod 2^32, the negative ones of settle_wraps
// too, leave it exact), else of 64-bit ones.
void add_counted(__global ulong* counts, uint r, uint slot_bins, __global const uint* value_slots,
                 ulong v) {
#if DENSE_VALUES == 32
  atomic_add((__global uint*)counts + r, (uint)v);
#elif DENSE_VALUES
  add_count(counts, r, v);
#else
  add_count(counts, slot_of_counted(r, slot_bins, value_slots), v);
#endif
}

// Adds v to the count of the pass's row r.
void add_row(SINK_PARAMS, uint r, ulong v) {
  add_counted(counts, first + r, slot_bins, value_slots, v);
}

// Adds v to row r's count where r is in the pass's range.
void take(SINK_PARAMS, uint r, ulong v) {
  if (r < range) add_row(SINK_ARGS, r, v);
}

#if PACKED
// The words of a range's packed rows; the hot-row table follows them.
uint packed_words(uint range) {
  return (range + FIELDS - 1) / FIELDS;
}

// n at row r's field of its word.
uint field_addend(uint r, uint n) {
  return n << (FIELD_BITS * (r % FIELDS));
}

// The bits where a carry out of a field lands: the lowest bit of every field but the first, and
// the first spare bit where the fields leave some (5-bit: six fields, two spare bits).
uint carry_mask(void) {
  uint mask = 0;
  for (int j = 1; j * FIELD_BITS < 32; ++j)
    mask |= 1u << (j * FIELD_BITS);
  return mask;
}

// The carries of the add old → old + addend, at the bits of carry_mask().
uint carries_of(uint old, uint addend) {
  return (old ^ addend ^ (old + addend)) & carry_mask();
}

// Whether the add old → old + addend wrapped any field (the top one out of the word).
bool carried(uint old, uint addend) {
  return carries_of(old, addend) != 0 || old + addend < old;
}

// Whether adding 1 to row r's field of `old` wrapped it: the field was full.
bool full_field(uint old, uint r) {
  return ((old >> (FIELD_BITS * (r % FIELDS))) & (FIELD_LIMIT - 1)) == FIELD_LIMIT - 1;
}

// Row r's field wrapped `times` times: its count gets 2^FIELD_BITS back per wrap, and the row
// above it in the same word gives back the 1 per wrap it received.
void settle_wraps(SINK_PARAMS, uint r, uint times) {
  take(SINK_ARGS, r, (ulong)times << FIELD_BITS);
  if (r % FIELDS + 1 < FIELDS) take(SINK_ARGS, r + 1, (ulong)0 - times);
}

#if HOT_ENTRIES
// Row r's entry of the hot-row table (tag r + 1, wraps, adds too long for a field), claimed now
// if it is free; 0 when another row holds it.
__local uint* hot_entry(__local uint* words, uint range, uint r) {
  __local uint* entry = words + packed_words(range) + 3 * (r % HOT_ENTRIES);
  const uint holder = atomic_cmpxchg(entry, 0u, r + 1);
  return holder == 0 || holder == r + 1 ? entry : 0;
}
#endif

// One wrap of row r's field: counted in the hot-row table where r holds (or now claims) its
// entry, else settled in the global counts.
void field_wrapped(SINK_PARAMS, uint r) {
#if HOT_ENTRIES
  __local uint* entry = hot_entry(local_sink, range, r);
  if (entry) {
    atomic_inc(entry + 1);
    return;
  }
#endif
  settle_wraps(SINK_ARGS, r, 1);
}

// Settles every field that the add old → old + addend at row r's field wrapped: that field and,
// through a chain of full fields, the ones above it in the word.
void settle_carries(SINK_PARAMS, uint r, uint old, uint addend) {
  const uint carries = carries_of(old, addend);
  const bool wrapped = old + addend < old;
  const uint base = r - r % FIELDS;
  for (uint j = r % FIELDS; j < FIELDS; ++j) {
    const uint out = (j + 1) * FIELD_BITS;
    if (out < 32 ? (carries >> out) & 1u : wrapped) field_wrapped(SINK_ARGS, base + j);
  }
}

// Settles the fields of the word whose first row is `base` that carried out (field j where bit
// (j + 1)·FIELD_BITS of `carries`, carries_of, is set), for fields that leave spare bits at the
// top of their word, so that none carries out of it: settle_carries for an add whose word and
// carries were kept (settle_carries keeps its own loop: sharing this one cost fast_local 6 % on
// float16, histogram-opencl-values16-kernel).
#if FIELDS * FIELD_BITS < 32
void settle_fields(SINK_PARAMS, uint base, uint carries) {
  for (uint j = 0; j < FIELDS; ++j)
    if ((carries >> ((j + 1) * FIELD_BITS)) & 1u) field_wrapped(SINK_ARGS, base + j);
}
#endif
#endif

void sink_add(SINK_PARAMS, uint r, uint n) {
  if (!whole && r >= range) return;
  if (to_global) {
    add_row(SINK_ARGS, r, n);
    return;
  }
#if PACKED
  if (n >= FIELD_LIMIT) {  // a run too long for a field: to r's hot entry, else global
#if HOT_ENTRIES
    __local uint* entry = hot_entry(local_sink, range, r);
    if (entry) {
      atomic_add(entry + 2, n);
      return;
    }
#endif
    add_row(SINK_ARGS, r, n);
    return;
  }
  const uint addend = field_addend(r, n);
  const uint old = word_add(local_sink, r / FIELDS, addend);
  if (carried(old, addend)) settle_carries(SINK_ARGS, r, old, addend);
#else
  local_add(local_sink, r, n);
#endif
}

// Adds 1 to each of a vector's rows. Packed: the VEC atomics go out back to back and their old
// words are checked after, so a vector waits for local memory once, not once per value behind a
// branch.
void sink_add_ones(SINK_PARAMS, const uint* rows) {
#if PACKED
  if (!to_global) {
    uint old[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      old[k] = whole || rows[k] < range
                   ? word_add(local_sink, rows[k] / FIELDS, field_addend(rows[k], 1))
                   : 0;  // 0: nothing carried
    bool any = false;
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      any |= full_field(old[k], rows[k]);
    if (!any) return;
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      if (full_field(old[k], rows[k]))
        settle_carries(SINK_ARGS, rows[k], old[k], field_addend(rows[k], 1));
    return;
  }
#endif
#pragma unroll
  for (int k = 0; k < VEC; ++k)
    sink_add(SINK_ARGS, rows[k], 1);
}

// A work-item's run of equal rows, counted with one add when the row changes (or reaches 2^15,
// which keeps a packed add below 2^16).
void run_add(SINK_PARAMS, uint* run_row, uint* run_count, uint r, uint n) {
  if (r == *run_row && *run_count < 0x8000u) {
    *run_count += n;
    return;
  }
  if (*run_count) sink_add(SINK_ARGS, *run_row, *run_count);
  *run_row = r;
  *run_count = n;
}

// The total of one row over the columns at its place, each lane starting at its own column so the
// lanes of a warp read different banks.
uint column_total(__local const uint* hist, uint row) {
  const uint place = striped_place(row);
  uint total = 0;
  for (uint c = 0; c < COLUMNS; ++c)
    total += hist[place * ROW_WORDS + ((c + row) & (COLUMNS - 1))];
  return total;
}

// Row r's count in a group's local histogram, packed or striped.
uint row_total(__local const uint* hist, uint r) {
#if PACKED
  return (hist[r / FIELDS] >> (FIELD_BITS * (r % FIELDS))) & (FIELD_LIMIT - 1);
#else
  return column_total(hist, r);
#endif
}

// Adds the group's rows [0, range) of the range starting at row `first` to their counts
// (add_counted: at their slots, or in the table of rows), one atomic a row with a count, the rows
// in turn so that a warp's adds fall on neighbouring words.
void flush_rows(__local const uint* hist, uint first, uint range, uint slot_bins,
                __global const uint* value_slots, __global ulong* counts) {
  for (uint r = get_local_id(0); r < range; r += get_local_size(0)) {
    const uint total = row_total(hist, r);
    if (total) add_counted(counts, first + r, slot_bins, value_slots, total);
  }
}

#if HOT_ENTRIES
// Adds the packed rows' hot-row table (after the range's words) to the 64-bit counts: each
// entry's wraps and long runs.
void flush_hot_rows(__local uint* hist, __global ulong* counts, uint first, uint range,
                    uint slot_bins, __global const uint* value_slots) {
  __local const uint* hot = hist + packed_words(range);
  for (uint e = get_local_id(0); e < HOT_ENTRIES; e += get_local_size(0)) {
    __local const uint* entry = hot + 3 * e;
    if (!entry[0]) continue;
    settle_wraps(false, WHOLE, hist, counts, first, range, slot_bins, value_slots, entry[0] - 1,
                 entry[1]);
    if (entry[2])
      take(false, WHOLE, hist, counts, first, range, slot_bins, value_slots, entry[0] - 1,
           entry[2]);
  }
}
#endif
