// Vendor baselines timed in the same process: CUB device-wide primitives. Built only with CUDA.
#pragma once

#include <cstdint>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/reduce.hpp"

namespace parpat::bench {

// Median milliseconds of CUB's DeviceReduce (Sum, Min, Max, ArgMin, ArgMax) over `inputs`
// (rotated), each of `n` elements, `reps` timed runs; its temporary storage is allocated once,
// outside the timing. Returns 0 when CUB has no equivalent of `op`.
double cub_reduce_ms(const Device& device, DType dtype, ReduceOp op,
                     const std::vector<Array>& inputs, int reps);

// CUB DeviceSegmentedReduce over the rows of a contiguous rows × cols matrix (axis rows).
double cub_segmented_reduce_ms(const Device& device, DType dtype, ReduceOp op, const Array& input,
                               int reps);

bool cub_available();

}  // namespace parpat::bench
