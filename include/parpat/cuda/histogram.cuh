// parpat/cuda/histogram.cuh — the histogram's raw-pointer CUDA layer, in CUB's manner: device
// pointers, a stream and caller-owned workspace; nothing is allocated and nothing waits.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "parpat/dtype.hpp"

namespace parpat::cuda {

// Bytes of workspace histogram_even needs for `bins` bins of input of `dtype`: the value → bin
// table of bool, int8 and uint8 (1 KiB) and of int16 and uint16 (256 KiB) input, 0 for the
// wider types.
std::size_t histogram_workspace_bytes(DType dtype, std::int64_t bins);

// Enqueues on `stream` the histogram (variant `fast`) of the n values at d_in on the current
// device into d_counts: bins + 3 uint64 counters — the bins, then underflow, overflow and NaN —
// with DESIGN.md §2's even bins over [lo, hi] (numpy.histogram's edges and rules). d_counts is
// overwritten. Throws parpat::Error for bad arguments or a failing launch.
void histogram_even(const void* d_in, DType dtype, std::int64_t n, std::int64_t bins, double lo,
                    double hi, unsigned long long* d_counts, void* d_workspace,
                    std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace parpat::cuda
