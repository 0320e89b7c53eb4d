// parpat/cuda/reduce.hpp — the `fast` reduction on raw device pointers, for CUDA users who own
// their memory and streams (the shape of CUB's DeviceReduce).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "parpat/reduce.hpp"

namespace parpat::cuda {

// Reduces `n` elements of `dtype` at `d_in` into `*d_value` (reduce_result_dtype(dtype, op))
// and, for arg ops, `*d_index`. Call once with `d_workspace == nullptr` to get the workspace
// size in `workspace_bytes`; the workspace must be zeroed (cudaMemset) before its first call,
// and each call leaves it ready for the next one on the same stream, whatever its size, dtype
// or op (one workspace of the largest size serves them all). Asynchronous on `stream`.
// Throws parpat::Error for n == 0 with min/max/arg ops (sum/prod write the identity).
void reduce(const void* d_in, DType dtype, std::int64_t n, ReduceOp op, void* d_value,
            std::int64_t* d_index, void* d_workspace, std::size_t& workspace_bytes,
            cudaStream_t stream = nullptr);

}  // namespace parpat::cuda
