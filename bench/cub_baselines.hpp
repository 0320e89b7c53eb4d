// Vendor baselines timed in the same process: CUB device-wide primitives. Built only with CUDA.
#pragma once

#include <cstdint>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/reduce.hpp"

namespace parpat::bench {

class CaseTimer;

// Median milliseconds of CUB's DeviceReduce (Sum, Min, Max, ArgMin, ArgMax) over `inputs`
// (rotated), each of `n` elements, timed by the case's `timer` (one launch at a time or graph
// replays, as parpat's variants of the case); its temporary storage is allocated once, outside
// the timing, so the calls can be captured. Returns 0 when CUB has no equivalent of `op`.
double cub_reduce_ms(const Device& device, DType dtype, ReduceOp op,
                     const std::vector<Array>& inputs, CaseTimer& timer);

// CUB DeviceSegmentedReduce over the rows of a contiguous rows × cols matrix (axis rows).
double cub_segmented_reduce_ms(const Device& device, DType dtype, ReduceOp op, const Array& input,
                               CaseTimer& timer);

// Median milliseconds of CUB's DeviceHistogram::HistogramEven (32-bit counters) of `bins` bins
// over [lo, hi) on `inputs` (rotated); `temp_bytes` receives the temporary storage CUB asks
// for. Returns 0 when CUB cannot run the case (its temporary storage does not fit).
double cub_histogram_even_ms(const Device& device, DType dtype, std::int64_t bins, double lo,
                             double hi, const std::vector<Array>& inputs, int reps,
                             std::size_t& temp_bytes);

bool cub_available();

}  // namespace parpat::bench
