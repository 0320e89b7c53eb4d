// OpenCL histogram `fast`: how a problem is laid out in a group's local memory (opencl.cpp
// launches it, histogram.cl counts in it). Separate from the launch so tests can check the
// layout each problem gets on a given device: a slip here changes speed, never the counts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "histogram/tuning.hpp"

namespace parpat::detail {

// Values (or samples) one group counts at most: its 32-bit local counters cannot wrap.
constexpr std::int64_t kMaxValuesPerGroup = std::int64_t{1} << 30;

// Local memory one group may use: what the device reports, at most 48 KiB (NVIDIA's limit
// per group under OpenCL).
inline std::uint64_t local_budget(const DeviceInfo& d) {
  return std::min<std::uint64_t>(d.local_memory, 48u << 10);
}

// 16-bit input counted per value counts in local memory only the values that can fall in a bin
// (its window) and, for the others, a row each for those above the range, NaN and those below
// it, three rows for each of kOutsideLanes lanes so that data mostly outside the range does not
// queue on one counter: float16 over [0, 1] takes 15362 + 96 rows, not 65536. A value's key
// orders the values (the bits for uint16, the sign bit flipped for int16, sign-magnitude made
// monotone for float16 and bfloat16); row r < rows is key base + r, and past the window, in key
// order from base (mod 2^16), come the values above the range (to above_end), NaN (to nan_end),
// then those below it: rows + 3·(lane mod kOutsideLanes) + 0, 1 or 2. `slots` holds each row's
// slot. Where the window would be every key, or the values do not fall in that order (never for
// these dtypes' keys, but checked for every value on the host), the rows are the values' bits
// themselves (`by_bits`).
constexpr std::uint32_t kOutsideLanes = 32;
struct ValueWindow {
  bool by_bits = true;
  std::uint32_t base = 0, rows = 65536, above_end = 65536, nan_end = 65536;
  std::vector<std::uint32_t> slots;  // a slot for each of counted() rows
  std::uint32_t counted() const { return by_bits ? 65536u : rows + 3 * kOutsideLanes; }
};

// The window of 16-bit input p: its keys, row of each value and slot of each row.
ValueWindow value_window(const HistogramProblem& p);
// The values of window w (of dtype t) in a row per value's bits.
ValueWindow by_bits(const ValueWindow& w, DType t);
// The key of 16-bit value `bits` of dtype t, and the row the window counts it in on work-item
// `lane` (histogram.cl's window_row).
std::uint32_t value_key(DType t, std::uint32_t bits);
std::uint32_t window_row(const ValueWindow& w, DType t, std::uint32_t bits, std::uint32_t lane);

// The words of `rows` lane-striped 32-bit rows in `columns` columns: whole groups of a turn of the
// 32 banks each, as permuted rows take them (histogram_sink.cl's striped_words).
std::uint64_t striped_words(std::uint64_t rows, std::uint32_t columns);

// How `fast` lays out its local histogram: counted indices (256 values for 1-byte input, the
// window of 16-bit input past Even16Rule's bins, else the rows), lane-striped columns, slot ranges
// counted side by side ("passes") when the slots exceed local memory — in packed counters when
// 32-bit ones would need more than one range — or global counting past max_passes ranges.
struct FastLayout {
  // Count per value, map values to slots at the flush: 1-byte input (counted 256), 16-bit
  // input (counted: the rows of its window).
  bool count_values = false;
  std::uint32_t counted = 0;  // rows (bins + 3) or values
  bool values16 = false;      // 16-bit input counted per value
  ValueWindow window;         // values16: which values have rows
  std::uint32_t columns = 1, passes = 1, range = 0;
  std::uint32_t field_bits = 0;   // packed counters' width (16, 8, 5 or 4); 0: 32-bit striped
  std::uint32_t hot_entries = 0;  // the packed rows' hot-row table (narrow fields)
  bool global = false, runs = true;
  // Striped rows permuted in groups of a turn of the banks (histogram_sink.cl's striped_place):
  // float16 and bfloat16, whose values crowd rows a power of two apart.
  bool permuted_rows = false;
  // Striped rows padded to a stride of columns + 1 words (histogram_sink.cl's PADDED_ROWS):
  // bfloat16 in 8 columns.
  bool padded_rows = false;
  std::size_t local_bytes = 0;
  // Fields of 5 or 4 bits in local memory: 65536 rows in one range, wrapping often.
  bool narrow_fields() const { return !global && field_bits != 0 && field_bits < 8; }
};

// The layout of `fast` for problem p on a device, under its tuning policies, where its rule
// places values in `rows` rows (the slots; one more with Even16Rule's hi row).
FastLayout fast_layout(const HistogramProblem& p, const DeviceInfo& info,
                       const HistogramFastPolicy& fast, const HistogramOpenclPolicy& opencl,
                       std::uint32_t rows);

// Groups a compute unit for layout f counting n values (or samples) in local memory. Striped
// rows and fields of 8 or 16 bits: histogram.fast.groups_per_cu. Fields of 5 or 4 bits (65536
// rows in one range): each group flushes every row, so fewer groups flush less, but the more
// values a group counts the more often such narrow fields wrap; a group counts about
// histogram.opencl.packed_fill_percent of a field's capacity a row (uniform data), the power of
// two nearest, from the resident grid (histogram.opencl.global_groups_per_cu) to
// histogram.fast.groups_per_cu.
std::int64_t local_groups_per_cu(const FastLayout& f, std::int64_t n, const DeviceInfo& info,
                                 const HistogramFastPolicy& fast,
                                 const HistogramOpenclPolicy& opencl);

// The 16-byte vectors a work-item of layout f keeps in flight on input of dtype t: 4-byte input
// histogram.fast.vectors_32bit (histogram.opencl.narrow_vectors_32bit in 5- or 4-bit fields),
// 16-bit input in such fields histogram.opencl.narrow_vectors_16bit, other input
// histogram.fast.vectors.
int vectors_in_flight(const FastLayout& f, DType t, const HistogramFastPolicy& fast,
                      const HistogramOpenclPolicy& opencl);

// The layout of `rows` rows counted as rows (the joint histogram's slots, each a row): the one
// float32 input of as many rows gets.
FastLayout fast_rows_layout(std::uint32_t rows, const DeviceInfo& info,
                            const HistogramFastPolicy& fast, const HistogramOpenclPolicy& opencl);

}  // namespace parpat::detail
