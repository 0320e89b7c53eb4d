// Where CUDA histogram `fast` counts: a lane-striped shared histogram, packed 16-bit shared
// counters with exact carries (each add checked, or drained by headroom), or the 64-bit global
// counts; and the per-thread runs of equal slots that turn skewed data into one atomic per run.
#pragma once

#include "histogram/cuda/rules.cuh"

namespace parpat::detail {
// Private to histogram/cuda.cu, the one file that includes it.
namespace {

// Where `fast` counts. Row `range` of a pass takes the values outside it.
//  - StripedSink: 32-bit shared counters, row r of lane l at place(r)·row_words + l mod columns
//    (StripedRows, below).
//  - PackedSink: 16-bit shared counters, two rows to a word, for twice the rows in one pass.
//    Every atomic returns the word it changed, so the one add that carries a row out of its
//    half is known exactly: it moves 2^16 to the row's 64-bit count and takes back the 1 that
//    spilled into the neighbour (or, out of the top half, the 2^16 the word lost).
//  - DrainedPackedSink: the same counters, a vector's adds unchecked, exact by draining rows
//    between windows of values (below).
//  - GlobalSink: the 64-bit global counts themselves (each row at its slot); the discard row is
//    skipped.
//
// How the rows of a lane-striped histogram (StripedSink) are stored: row r of column c at
// place(r)·row_words + c.
//  - in order: place(r) = r, row_words = columns.
//  - permuted: place(r) = r ^ ((r >> shift) & mask), its low bits (its place in one turn of the 32
//    banks, an aligned group of 32 / columns rows; mask = 32 / columns − 1) xor-ed with bits above
//    them. Rows a power of two apart would otherwise share a bank, and data that crowds such rows
//    (bfloat16 in [0, 1) over 4096 bins: half the values on 128 rows 16 apart) queued its lanes
//    on it, 7.6 lanes a bank against 3.3 for spread data with 4 columns; permuted they spread as
//    any rows do (H100, 2^29 values, µs: bfloat16 uniform 537 -> 357, normal 563 -> 357; float32,
//    float16 and int16 within 1 %). The bits xor-ed in start at the group's size, or higher where
//    the crowded rows lie further apart (`gap_log2`: rows 2^gap_log2 apart, and any closer,
//    differ in them). With 32 columns the groups are single rows and the permutation is the
//    identity. Two instructions a value.
//  - skewed: place(r) = r + (r >> gap_log2), one spare row after each run of 2^gap_log2 rows, so
//    rows 2^gap_log2 apart (and any power of two further) step through the banks of their column
//    one turn at a time. A shift and an add a value; for bfloat16 in 8 columns, where a padded odd
//    stride (9 words a row) left its crowded rows on 2 banks a column and the permutation cost two
//    instructions (H200, 2^29 values in [0, 1) at 4096 bins, µs, uniform / normal: padded 281.6 /
//    262.9, skewed 263.6 / 263.5 and 265.7 / 261.8, 95-96 % of the read peak; modelled, the most
//    lanes of a warp on one bank: 3.44 -> 2.94; histogram-cuda-skewed-rows).
enum class RowOrder { in_order, permuted, skewed };

struct StripedRows {
  unsigned columns, shift = 0, mask, row_words;
  RowOrder order;
  // Rows in order save the permutation's two instructions a value: 1-byte input (counted per
  // value, always in 32 columns) and the joint histogram (two coordinates' bins seldom crowd rows
  // a power of two apart).
  __host__ __device__ StripedRows(unsigned columns, RowOrder order, unsigned gap_log2 = 0)
      : columns(columns), row_words(columns), order(order) {
    while ((columns << shift) < 32)
      ++shift;
    mask = order == RowOrder::permuted ? (1u << shift) - 1 : 0u;
    shift = order == RowOrder::skewed ? gap_log2 : (shift > gap_log2 ? shift : gap_log2);
  }
  // Row r's place, the order a compile-time choice (the kernels' sinks) or not (the flush).
  template <RowOrder kOrder>
  __device__ unsigned place_in(unsigned r) const {
    if constexpr (kOrder == RowOrder::permuted) return r ^ ((r >> shift) & mask);
    if constexpr (kOrder == RowOrder::skewed) return r + (r >> shift);
    return r;
  }
  __device__ unsigned place(unsigned r) const {
    return order == RowOrder::skewed ? place_in<RowOrder::skewed>(r)
                                     : place_in<RowOrder::permuted>(r);
  }
  // The words of `rows` rows: whole groups where permuted, so every row's place lies inside, and
  // the spare rows where skewed.
  __host__ __device__ unsigned long long words(unsigned long long rows) const {
    if (order == RowOrder::skewed) return (rows + (rows >> shift) + 1) * row_words;
    const unsigned group = mask + 1;
    return (rows + group - 1) / group * group * row_words;
  }
};

// Whether `fast` may reorder the striped rows of T (FastConfig::order says where it does): all
// input but 1-byte input.
template <class T>
constexpr bool kPermutedRows = sizeof(T) != 1;
// Skewed rows: 16-bit input alone (bfloat16), so no other kernel is built with them.
template <class T>
constexpr bool kSkewedRows = sizeof(T) == 2;

template <RowOrder kOrder>
struct StripedSink {
  StripedRows rows;
  unsigned base;    // shared-window address of this lane's column in row 0
  unsigned stride;  // bytes from one row to the next
  __device__ StripedSink(unsigned* hist, StripedRows rows, unsigned column)
      : rows(rows),
        base(unsigned(__cvta_generic_to_shared(hist + column))),
        stride(rows.row_words * 4) {}
  __device__ void add(unsigned r, unsigned n) const {
    // A 32-bit shared address: one multiply-add per value, no generic-to-shared conversion.
    const unsigned place = rows.place_in<kOrder>(r);
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(base + place * stride), "r"(n) : "memory");
  }
};

struct PackedSink {
  unsigned words;              // shared-window address of the counters
  unsigned long long* counts;  // the 64-bit counts, by slot
  unsigned first, range;       // the pass's rows
  RowSlots slots;
  __device__ PackedSink(unsigned* hist, unsigned long long* counts, unsigned first, unsigned range,
                        RowSlots slots)
      : words(unsigned(__cvta_generic_to_shared(hist))),
        counts(counts),
        first(first),
        range(range),
        slots(slots) {}
  __device__ void add(unsigned r, unsigned n) const {
    const unsigned addend = n << (16 * (r & 1));
    const unsigned old = atomic_add(r, addend);
    if (carried(r, n, addend, old)) settle(r, n, addend, old);
  }
  // Adds 1 to each row: the K atomics go out back to back and their old words are checked
  // after, so a vector waits for shared memory once, not once per value behind a branch.
  template <int K>
  __device__ void add_ones(const unsigned (&rows)[K]) const {
    unsigned old[K];
#pragma unroll
    for (int k = 0; k < K; ++k)
      old[k] = atomic_add(rows[k], 1u << (16 * (rows[k] & 1)));
    bool any = false;
#pragma unroll
    for (int k = 0; k < K; ++k)
      any |= carried(rows[k], 1, 1u << (16 * (rows[k] & 1)), old[k]);
    if (!any) return;
#pragma unroll
    for (int k = 0; k < K; ++k)
      settle(rows[k], 1, 1u << (16 * (rows[k] & 1)), old[k]);
  }

 protected:
  __device__ void take(unsigned r, unsigned long long v) const {
    if (r < range) atomicAdd(counts + slots.of(first + r), v);
  }

 private:
  __device__ unsigned atomic_add(unsigned r, unsigned addend) const {
    unsigned old;
    asm volatile("atom.shared.add.u32 %0, [%1], %2;"
                 : "=r"(old)
                 : "r"(words + r / 2 * 4), "r"(addend)
                 : "memory");
    return old;
  }
  // Whether adding n to row r's half of the word `old` carried out of that half.
  __device__ static bool carried(unsigned r, unsigned n, unsigned addend, unsigned old) {
    return (r & 1) ? old + addend < old : (old & 0xFFFFu) + n > 0xFFFFu;
  }
  __device__ void settle(unsigned r, unsigned n, unsigned addend, unsigned old) const {
    const bool wrapped = old + addend < old;  // the word's top half overflowed
    if (!(r & 1) && (old & 0xFFFFu) + n > 0xFFFFu) {
      take(r, 0x10000ull);
      take(r + 1, ~0ull);  // the carry is not the neighbour's
    }
    if (wrapped) take(r | 1, 0x10000ull);
  }
};

// PackedSink whose vectors add without looking at the words they change: plain shared reds, so
// no thread waits for an atomic's old word. It stays exact by headroom: the block counts in
// windows of at most kDrainWindow values, and at each window's end (every thread between
// barriers) drain() moves every 16-bit row of kDrainAbove or more into its 64-bit count. A row
// starts a window below kDrainAbove, so the window's adds (at most one per value, runs included:
// the kernel flushes them before each drain) keep it below kDrainAbove + kDrainWindow = 2^16.
// Single adds (runs, leftovers) still go through PackedSink::add, which settles its own carries.
constexpr unsigned kDrainAbove = 1u << 12;
constexpr unsigned kDrainWindow = (1u << 16) - kDrainAbove;

struct DrainedPackedSink : PackedSink {
  unsigned* hist;  // the words again, for the drain's plain loads and stores
  unsigned word_count;
  __device__ DrainedPackedSink(unsigned* hist, unsigned long long* counts, unsigned first,
                               unsigned range, RowSlots slots)
      : PackedSink(hist, counts, first, range, slots), hist(hist), word_count((range + 2) / 2) {}
  template <int K>
  __device__ void add_ones(const unsigned (&rows)[K]) const {
#pragma unroll
    for (int k = 0; k < K; ++k)
      asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(words + rows[k] / 2 * 4),
                   "r"(1u << (16 * (rows[k] & 1)))
                   : "memory");
  }
  // Every thread of the block calls it between barriers (no add in flight). Four words a load;
  // a word whose rows are both below kDrainAbove costs one test.
  __device__ void drain() const {
    constexpr unsigned kHigh = (0xFFFFu & ~(kDrainAbove - 1)) * 0x10001u;  // bits ≥ kDrainAbove
    const unsigned quads = word_count / 4;
    for (unsigned q = threadIdx.x; q < quads; q += blockDim.x) {
      const uint4 w = reinterpret_cast<const uint4*>(hist)[q];
      if (((w.x | w.y | w.z | w.w) & kHigh) == 0) continue;
      drain_word(4 * q);
      drain_word(4 * q + 1);
      drain_word(4 * q + 2);
      drain_word(4 * q + 3);
    }
    for (unsigned i = quads * 4 + threadIdx.x; i < word_count; i += blockDim.x)
      drain_word(i);
  }

 private:
  __device__ void drain_word(unsigned i) const {
    const unsigned word = hist[i];
    const unsigned low = word & 0xFFFFu, high = word >> 16;
    unsigned kept = word;
    if (low >= kDrainAbove) {
      take(2 * i, low);
      kept -= low;
    }
    if (high >= kDrainAbove) {
      take(2 * i + 1, high);
      kept -= high << 16;
    }
    if (kept != word) hist[i] = kept;
  }
};

struct GlobalSink {
  unsigned long long* counts;
  unsigned discard;
  RowSlots slots;
  __device__ void add(unsigned r, unsigned n) const {
    if (r != discard) atomicAdd(counts + slots.of(r), (unsigned long long)n);
  }
};

// Row r's count in a block's shared histogram: its 16-bit field of the packed words, or the sum
// of its lane-striped columns at its place (from a rotated column, so the threads of a warp hit
// other banks).
template <bool kPacked>
__device__ unsigned long long shared_row_count(const unsigned* hist, unsigned r,
                                               const StripedRows& rows) {
  if constexpr (kPacked) {
    return (hist[r / 2] >> (16 * (r & 1))) & 0xFFFFu;
  } else {
    const unsigned columns = rows.columns, place = rows.place(r);
    unsigned long long sum = 0;
    for (unsigned c = 0; c < columns; ++c)
      sum += hist[place * rows.row_words + (c + r) % columns];
    return sum;
  }
}

// Adds 1 to each of a vector's rows: one add each, except where the sink batches them
// (PackedSink::add_ones).
template <class Sink, int K>
__device__ void add_ones(const Sink& sink, const unsigned (&rows)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k)
    sink.add(rows[k], 1);
}
template <int K>
__device__ void add_ones(const PackedSink& sink, const unsigned (&rows)[K]) {
  sink.add_ones(rows);
}
template <int K>
__device__ void add_ones(const DrainedPackedSink& sink, const unsigned (&rows)[K]) {
  sink.add_ones(rows);
}

// One thread's run of equal rows, counted with one add when the row changes (or reaches 2^15,
// which keeps a packed add below 2^16).
template <class Sink>
struct Run {
  unsigned row, count = 0;
  __device__ explicit Run(unsigned discard) : row(discard) {}
  __device__ void add(unsigned r, unsigned n, const Sink& sink) {
    if (r == row && count < 0x8000u) {
      count += n;
      return;
    }
    flush(sink);
    row = r;
    count = n;
  }
  __device__ void flush(const Sink& sink) {
    if (count) sink.add(row, count);
    count = 0;
  }
};

// Whether every value of a 16-byte vector of T has the same bits (so the same slot).
}  // namespace
}  // namespace parpat::detail
