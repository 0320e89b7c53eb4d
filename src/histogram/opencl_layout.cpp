// The layout of OpenCL histogram `fast` (opencl_layout.hpp).
#include "histogram/opencl_layout.hpp"

#include <cmath>
#include <utility>

namespace parpat::detail {

namespace {

// The packed layout for `counted` rows in `room` bytes: the fewest ranges, and among layouts
// with as few the widest field (it wraps least often). 16-bit fields have no hot-row table
// (a row wraps once per 65536 adds); the narrower ones keep `hot_entries` entries of 12 bytes.
// `only` > 0 takes fields of that width alone (16, 8, 5 or 4); by default 4-bit fields are not
// taken: measured on an H100 (float32, 65536 bins, 2^28 values, µs), they matched 5-bit ones on
// uniform data (860–879 against 878) but their wraps cost 4768–5400 against 868 on the normal
// data, more than the 2679 of three 16-bit ranges.
void pick_fields(FastLayout& f, std::uint64_t counted, std::uint64_t room, int only,
                 std::uint32_t hot_entries) {
  auto passes_for = [&](std::uint64_t rows) {
    return static_cast<std::uint32_t>((counted + rows - 1) / rows);
  };
  f.passes = 0;
  for (std::uint32_t bits : {16u, 8u, 5u, 4u}) {
    if (only > 0 ? int(bits) != only : bits < 5) continue;
    const std::uint64_t hot = bits < 16 ? std::uint64_t{hot_entries} : 0;
    if (room < hot * 12 + 4) continue;
    // 16-bit: an odd number of rows, so a range's words fill the room.
    const std::uint64_t rows = bits == 16 ? room / 2 - 1 : (room - hot * 12) / 4 * (32 / bits);
    const std::uint32_t passes = passes_for(rows);
    if (f.passes == 0 || passes < f.passes) {
      f.passes = passes;
      f.field_bits = bits;
      f.hot_entries = static_cast<std::uint32_t>(hot);
    }
  }
}

// Lays f.counted rows (or values) out in `room` bytes of local memory, where `bytes`: 1-byte
// input's merge table takes the rest of the budget, `crowded_dtype`: the dtype crowds a few
// neighbouring rows and values (float16, bfloat16), `bank_crowded`: its values crowd rows a
// power of two apart (bfloat16: the 128 values of an octave), and `gap_of_four`: 4 or more apart
// (crowded_row_gap_log2).
void lay_out(FastLayout& f, std::uint64_t room, bool bytes, bool crowded_dtype, bool bank_crowded,
             bool gap_of_four, const DeviceInfo& info, const HistogramFastPolicy& fast,
             const HistogramOpenclPolicy& opencl) {
  const std::uint64_t counted = f.counted;
  std::uint32_t max_columns = 1;
  while (max_columns < 32 && int(max_columns * 2) <= fast.max_columns)
    max_columns *= 2;
  if (striped_words(counted, 1) * 4 <= room) {
    f.range = static_cast<std::uint32_t>(counted);
    f.columns = max_columns;
    while (f.columns > 1 && striped_words(counted, f.columns) * 4 > room)
      f.columns /= 2;
  } else {
    // A range's rows: 32-bit counters (in whole groups of 32 permuted rows), or 16-bit ones two
    // to a word (an odd number of rows, so its words fill the room).
    const std::uint64_t range_rows = room / 4 / 32 * 32;
    f.passes = static_cast<std::uint32_t>((counted + range_rows - 1) / range_rows);
    // Packed ranges by default where groups run side by side (GPUs); a CPU driver runs them one
    // after another, so ranges re-read the input and global counting is faster there (PoCL,
    // float32 at 65536 bins: 3 packed ranges 47.7 ms, global 9.5 ms per 2^21 values).
    if (opencl.packed == 1 || (opencl.packed == -1 && info.independent_groups)) {
      // Per value the preferred width where it fits, else (as for rows) any.
      const auto hot = static_cast<std::uint32_t>(opencl.hot_entries);
      const bool preferred = f.values16 && opencl.field_bits == 0;
      const int width = crowded_dtype ? 16 : opencl.per_value16_field_bits;
      if (preferred) pick_fields(f, counted, room, width, hot);
      if (!preferred || f.passes == 0) pick_fields(f, counted, room, opencl.field_bits, hot);
    }
    f.range = static_cast<std::uint32_t>((counted + f.passes - 1) / f.passes);
    // float16 and bfloat16 crowd a few neighbouring rows (or values), whose fields narrower than
    // 16 bits wrap over and over: global counting's register runs cost far less (H100, 2^29
    // values at 65536 bins, µs, 5-bit fields -> global: float16 uniform in [0, 1) 5079 -> 718,
    // normal 1318 -> 429; bfloat16 3816 -> 666, 3804 -> 661). Per value they take 16-bit fields.
    const bool crowded = crowded_dtype && f.field_bits != 0 && f.field_bits < 16;
    f.global = f.passes > static_cast<std::uint32_t>(fast.max_passes) || crowded;
    if (f.global) f.field_bits = f.hot_entries = 0;
  }
  // Register runs for skewed data (a test per vector decides), always in global counting.
  f.runs = f.global || int(f.columns) < fast.runs_below_columns;
  // As CUDA's (histogram.fast.permuted_rows): by default only bfloat16 in fewer than 8 columns,
  // whose rows a power of two apart would share a bank; the permutation's two instructions a
  // value cost the other input more than its banks do (H100, NVIDIA OpenCL at 4096 bins, µs, in
  // order -> permuted: bfloat16 uniform in [0, 1) 787 -> 382, normal 858 -> 383; float32 uniform
  // 439 -> 453), and bfloat16 too from 8 columns, where 4 lanes share a column (H200, 2^29
  // values at 1024 bins, µs, permuted -> in order: uniform 367.9 -> 328.7, normal 367.2 -> 334.2).
  const bool striped = !bytes && !f.global && f.field_bits == 0;
  f.permuted_rows = striped && (fast.permuted_rows == 2
                                    ? f.columns < 32
                                    : fast.permuted_rows == 1 && bank_crowded && f.columns < 8);
  // In 8 columns bfloat16's rows 4 or more apart are padded to an odd stride of 9 words (as CUDA's
  // were before its skewed rows): they spread over the banks at no instruction a value (H200, 2^29
  // values at 1024 bins, µs, uniform / normal, same call: in order 307.3 / 314.3, padded 283.1 /
  // 279.0).
  f.padded_rows = striped && fast.permuted_rows == 1 && bank_crowded && gap_of_four &&
                  f.columns == 8 && std::uint64_t{f.range} * 9 * 4 <= room;
  const std::size_t striped_bytes = f.padded_rows ? std::size_t{f.range} * (f.columns + 1) * 4
                                                  : striped_words(f.range, f.columns) * 4;
  f.local_bytes = f.global ? 0
                  : f.field_bits
                      ? (std::size_t{f.range} + 32 / f.field_bits - 1) / (32 / f.field_bits) * 4 +
                            std::size_t{f.hot_entries} * 12
                      : striped_bytes + (bytes ? std::size_t{256 * 4} : 0);
}

// Local memory for `fast`'s counters: histogram.fast.striped_kib within the device's budget.
std::uint64_t fast_budget(const DeviceInfo& info, const HistogramFastPolicy& fast) {
  return std::min<std::uint64_t>(std::uint64_t(fast.striped_kib) << 10, local_budget(info));
}

}  // namespace

std::uint64_t striped_words(std::uint64_t rows, std::uint32_t columns) {
  const std::uint64_t group = columns < 32 ? 32 / columns : 1;
  return (rows + group - 1) / group * group * columns;
}

std::uint32_t value_key(DType t, std::uint32_t bits) {
  switch (t) {
    case DType::int16:
      return bits ^ 0x8000u;
    case DType::float16:
    case DType::bfloat16:
      return bits ^ (bits & 0x8000u ? 0xFFFFu : 0x8000u);
    default:
      return bits;
  }
}

std::uint32_t window_row(const ValueWindow& w, DType t, std::uint32_t bits, std::uint32_t lane) {
  if (w.by_bits) return bits;
  const std::uint32_t r = (value_key(t, bits) - w.base) & 0xFFFFu;
  return r < w.rows ? r
                    : w.rows + 3 * (lane % kOutsideLanes) + (r >= w.above_end) + (r >= w.nan_end);
}

ValueWindow value_window(const HistogramProblem& p) {
  const std::vector<std::uint32_t> slots = slot_table(p);  // by bits
  std::vector<std::uint32_t> bits_of_key(65536);
  for (std::uint32_t bits = 0; bits < 65536; ++bits)
    bits_of_key[value_key(p.dtype, bits)] = bits;
  const auto bins = static_cast<std::uint32_t>(p.bins);
  const std::uint32_t below = bins, above = bins + 1, nan = bins + 2;
  auto slot_at = [&](std::uint32_t key) { return slots[bits_of_key[key & 0xFFFFu]]; };
  // The keys of values in a bin: from the first to the last (with none, from the first key above
  // the range).
  std::uint32_t first = 65536, last = 0;
  for (std::uint32_t key = 0; key < 65536; ++key)
    if (slot_at(key) < bins) {
      if (first == 65536) first = key;
      last = key;
    }
  if (first == 65536) {
    first = 0;
    while (first < 65536 && slot_at(first) != above)
      ++first;
    last = first - 1;
  }
  ValueWindow w;
  if (first < 65536 && last + 1 - first < 65536) {
    w.by_bits = false;
    w.base = first;
    w.rows = last + 1 - first;
    w.above_end = w.rows;
    while (w.above_end < 65536 && slot_at(w.base + w.above_end) == above)
      ++w.above_end;
    w.nan_end = w.above_end;
    while (w.nan_end < 65536 && slot_at(w.base + w.nan_end) == nan)
      ++w.nan_end;
    w.slots.resize(w.counted());
    for (std::uint32_t r = 0; r < w.rows; ++r)
      w.slots[r] = slot_at(w.base + r);
    for (std::uint32_t lane = 0; lane < kOutsideLanes; ++lane) {
      w.slots[w.rows + 3 * lane] = above;
      w.slots[w.rows + 3 * lane + 1] = nan;
      w.slots[w.rows + 3 * lane + 2] = below;
    }
    bool exact = true;
    for (std::uint32_t bits = 0; bits < 65536 && exact; ++bits)
      exact = w.slots[window_row(w, p.dtype, bits, 0)] == slots[bits];
    if (exact) return w;
  }
  ValueWindow every_value;
  every_value.slots = slots;
  return every_value;
}

ValueWindow by_bits(const ValueWindow& w, DType t) {
  ValueWindow every_value;
  every_value.slots.resize(65536);
  for (std::uint32_t bits = 0; bits < 65536; ++bits)
    every_value.slots[bits] = w.slots[window_row(w, t, bits, 0)];
  return every_value;
}

FastLayout fast_layout(const HistogramProblem& p, const DeviceInfo& info,
                       const HistogramFastPolicy& fast, const HistogramOpenclPolicy& opencl,
                       std::uint32_t rows) {
  const std::uint64_t budget = fast_budget(info, fast);
  const std::uint64_t merge_bytes = 256 * 4;
  const bool bytes =
      is_table_dtype(p.dtype) && dtype_size(p.dtype) == 1 && budget >= 256 * 4 + merge_bytes;
  // int16 and uint16 per value from per_value16_min_bins bins, float16 and bfloat16 from
  // per_value_float16_min_bins: a row per value of the window, no rule per value.
  const bool float16 = p.dtype == DType::float16 || p.dtype == DType::bfloat16;
  const bool values16 = ((p.dtype == DType::int16 || p.dtype == DType::uint16) &&
                         p.bins >= fast.per_value16_min_bins) ||
                        (float16 && p.bins >= fast.per_value_float16_min_bins);
  auto layout_with = [&](ValueWindow window) {
    FastLayout f;
    f.count_values = bytes || values16;
    f.values16 = values16;
    f.window = std::move(window);
    f.counted = bytes ? 256u : values16 ? f.window.counted() : rows;
    lay_out(f, bytes ? budget - merge_bytes : budget, bytes, float16, p.dtype == DType::bfloat16,
            crowded_row_gap_log2(p) >= 2, info, fast, opencl);
    return f;
  };
  FastLayout f = layout_with(values16 ? value_window(p) : ValueWindow{});
  // The rows outside a window take every value outside it, and fields narrower than 16 bits
  // wrap there over and over: a row per value's bits instead (H100, int16 over [0, 2^20), half
  // of the values below the range, 8-bit fields: 6114 µs in the window, 1301 by bits).
  if (values16 && !f.window.by_bits && f.field_bits != 0 && f.field_bits < 16)
    return layout_with(by_bits(f.window, p.dtype));
  return f;
}

std::int64_t local_groups_per_cu(const FastLayout& f, std::int64_t n, const DeviceInfo& info,
                                 const HistogramFastPolicy& fast,
                                 const HistogramOpenclPolicy& opencl) {
  const std::int64_t most = std::max(fast.groups_per_cu, 1);
  if (!f.narrow_fields()) return most;
  const std::int64_t least = std::min<std::int64_t>(std::max(opencl.global_groups_per_cu, 1), most);
  // Chunks whose groups count the fill a row: n / (counted · 2^bits · fill); a chunk a group for
  // each of the passes.
  const double per_row = std::ldexp(opencl.packed_fill_percent / 100.0, int(f.field_bits));
  const double wanted = double(n) / (double(f.counted) * per_row) * f.passes /
                        double(std::max(info.compute_units, 1));
  const long power = std::clamp(std::lround(std::log2(std::max(wanted, 1.0))), 0L, 20L);
  return std::clamp(std::int64_t{1} << power, least, most);
}

int vectors_in_flight(const FastLayout& f, DType t, const HistogramFastPolicy& fast,
                      const HistogramOpenclPolicy& opencl) {
  const std::size_t size = dtype_size(t);
  if (size == 4) return f.narrow_fields() ? opencl.narrow_vectors_32bit : fast.vectors_32bit;
  if (size == 2 && f.narrow_fields()) return opencl.narrow_vectors_16bit;
  return fast.vectors;
}

FastLayout fast_rows_layout(std::uint32_t rows, const DeviceInfo& info,
                            const HistogramFastPolicy& fast, const HistogramOpenclPolicy& opencl) {
  FastLayout f;
  f.counted = rows;
  lay_out(f, fast_budget(info, fast), false, false, false, false, info, fast, opencl);
  return f;
}

}  // namespace parpat::detail
