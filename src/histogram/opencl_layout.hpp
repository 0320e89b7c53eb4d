// OpenCL histogram `fast`: how a problem is laid out in a group's local memory (opencl.cpp
// launches it, histogram.cl counts in it). Separate from the launch so tests can check the
// layout each problem gets on a given device: a slip here changes speed, never the counts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

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

// How `fast` lays out its local histogram: counted indices (256 values for 1-byte input, the 65536
// values of 16-bit input past Even16Rule's bins, else the rows), lane-striped columns, slot ranges
// counted side by side ("passes") when the slots exceed local memory — in packed counters when
// 32-bit ones would need more than one range — or global counting past max_passes ranges.
struct FastLayout {
  // Count per value, map values to slots at the flush: 1-byte input (counted 256), 16-bit
  // input (counted 65536).
  bool count_values = false;
  std::uint32_t counted = 0;  // rows (bins + 3) or values
  bool values16 = false;      // 16-bit input counted per value
  std::uint32_t columns = 1, passes = 1, range = 0;
  std::uint32_t field_bits = 0;   // packed counters' width (16, 8, 5 or 4); 0: 32-bit striped
  std::uint32_t hot_entries = 0;  // the packed rows' hot-row table (narrow fields)
  bool global = false, runs = true;
  std::size_t local_bytes = 0;
};

// The layout of `fast` for problem p on a device, under its tuning policies.
FastLayout fast_layout(const HistogramProblem& p, const DeviceInfo& info,
                       const HistogramFastPolicy& fast, const HistogramOpenclPolicy& opencl);

// The layout of `rows` rows counted as rows (the joint histogram's slots, each a row): the one
// float32 input of as many rows gets.
FastLayout fast_rows_layout(std::uint32_t rows, const DeviceInfo& info,
                            const HistogramFastPolicy& fast, const HistogramOpenclPolicy& opencl);

}  // namespace parpat::detail
