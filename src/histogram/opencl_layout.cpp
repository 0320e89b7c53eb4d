// The layout of OpenCL histogram `fast` (opencl_layout.hpp).
#include "histogram/opencl_layout.hpp"

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
// input's merge table takes the rest of the budget, and `crowded`: the dtype crowds a few
// neighbouring rows (float16, bfloat16).
void lay_out(FastLayout& f, std::uint64_t room, bool bytes, bool crowded_dtype,
             const DeviceInfo& info, const HistogramFastPolicy& fast,
             const HistogramOpenclPolicy& opencl) {
  const std::uint64_t counted = f.counted;
  std::uint32_t max_columns = 1;
  while (max_columns < 32 && int(max_columns * 2) <= fast.max_columns)
    max_columns *= 2;
  if (counted * 4 <= room) {
    f.range = static_cast<std::uint32_t>(counted);
    f.columns = max_columns;
    while (f.columns > 1 && counted * f.columns * 4 > room)
      f.columns /= 2;
  } else {
    // A range's rows: 32-bit counters, or 16-bit ones two to a word (an odd number of rows, so
    // its words fill the room).
    f.passes = static_cast<std::uint32_t>((counted + room / 4 - 1) / (room / 4));
    // Packed ranges by default where groups run side by side (GPUs); a CPU driver runs them one
    // after another, so ranges re-read the input and global counting is faster there (PoCL,
    // float32 at 65536 bins: 3 packed ranges 47.7 ms, global 9.5 ms per 2^21 values).
    if (opencl.packed == 1 || (opencl.packed == -1 && info.independent_groups)) {
      // Per value the preferred width where it fits, else (as for rows) any.
      const auto hot = static_cast<std::uint32_t>(opencl.hot_entries);
      const bool preferred = f.values16 && opencl.field_bits == 0;
      if (preferred) pick_fields(f, counted, room, opencl.per_value16_field_bits, hot);
      if (!preferred || f.passes == 0) pick_fields(f, counted, room, opencl.field_bits, hot);
    }
    f.range = static_cast<std::uint32_t>((counted + f.passes - 1) / f.passes);
    // float16 and bfloat16 crowd a few neighbouring rows, whose fields narrower than 16 bits wrap
    // over and over: global counting's register runs cost far less (H100, 2^29 values at 65536
    // bins, µs, 5-bit fields -> global: float16 uniform in [0, 1) 5079 -> 718, normal 1318 ->
    // 429; bfloat16 3816 -> 666, 3804 -> 661).
    const bool crowded = crowded_dtype && f.field_bits != 0 && f.field_bits < 16;
    f.global = f.passes > static_cast<std::uint32_t>(fast.max_passes) || crowded;
    if (f.global) f.field_bits = f.hot_entries = 0;
  }
  // Register runs for skewed data (a test per vector decides), always in global counting.
  f.runs = f.global || int(f.columns) < fast.runs_below_columns;
  f.local_bytes = f.global ? 0
                  : f.field_bits
                      ? (std::size_t{f.range} + 32 / f.field_bits - 1) / (32 / f.field_bits) * 4 +
                            std::size_t{f.hot_entries} * 12
                      : std::size_t{f.range} * f.columns * 4 + (bytes ? std::size_t{256 * 4} : 0);
}

// Local memory for `fast`'s counters: histogram.fast.striped_kib within the device's budget.
std::uint64_t fast_budget(const DeviceInfo& info, const HistogramFastPolicy& fast) {
  return std::min<std::uint64_t>(std::uint64_t(fast.striped_kib) << 10, local_budget(info));
}

}  // namespace

FastLayout fast_layout(const HistogramProblem& p, const DeviceInfo& info,
                       const HistogramFastPolicy& fast, const HistogramOpenclPolicy& opencl) {
  FastLayout f;
  const std::uint64_t budget = fast_budget(info, fast);
  const std::uint64_t merge_bytes = 256 * 4;
  const bool bytes =
      is_table_dtype(p.dtype) && dtype_size(p.dtype) == 1 && budget >= 256 * 4 + merge_bytes;
  // int16 and uint16 per value from per_value16_min_bins bins: 65536 rows, no rule per value;
  // float16 and bfloat16 from per_value_float16_min_bins (never by default: their values crowd a
  // few neighbouring patterns, whose packed fields wrap; H100, float16 uniform in [0, 1), 65536
  // bins: 9601 µs per value against 6695 µs in rows).
  const bool float16 = p.dtype == DType::float16 || p.dtype == DType::bfloat16;
  const bool values16 = ((p.dtype == DType::int16 || p.dtype == DType::uint16) &&
                         p.bins >= fast.per_value16_min_bins) ||
                        (float16 && p.bins >= fast.per_value_float16_min_bins);
  f.count_values = bytes || values16;
  f.values16 = values16;
  f.counted = bytes ? 256u : values16 ? 65536u : static_cast<std::uint32_t>(p.slots());
  lay_out(f, bytes ? budget - merge_bytes : budget, bytes, float16 && !values16, info, fast,
          opencl);
  return f;
}

FastLayout fast_rows_layout(std::uint32_t rows, const DeviceInfo& info,
                            const HistogramFastPolicy& fast, const HistogramOpenclPolicy& opencl) {
  FastLayout f;
  f.counted = rows;
  lay_out(f, fast_budget(info, fast), false, false, info, fast, opencl);
  return f;
}

}  // namespace parpat::detail
