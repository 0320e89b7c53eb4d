// The CUDA reduce's plans and raw calls, compiled one dtype per translation unit (by_dtype.cuh,
// instantiated by a .cu that the build generates for each dtype). Each unit is its own CUDA
// module, so a process's first reduce loads only its dtype's kernels (all of them in one module
// took about 60 ms to load on an H100), and the units build in parallel.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "reduce/reduce_internal.hpp"

namespace parpat::detail {

enum class CudaReduceVariant { tree, serial, gridstride, atomic, fast };

// The plan of `variant` for elements of type T (the variant's own support check has passed).
template <class T>
std::unique_ptr<ReduceKernel> make_cuda_reduce(CudaReduceVariant variant, const Device& device,
                                               const ReduceShape& shape);

// parpat::cuda::reduce for elements of type T on device `ordinal` (a basic op, checked).
template <class T>
void raw_cuda_reduce(const DeviceInfo& info, int ordinal, const void* d_in, std::int64_t n,
                     ReduceOp op, void* d_value, std::int64_t* d_index, void* d_workspace,
                     std::size_t& workspace_bytes, cudaStream_t stream);

}  // namespace parpat::detail
