// The definitions behind by_dtype.hpp. A generated unit includes this file and names its dtype
// with PARPAT_CUDA_DTYPE_INSTANCES(T), which instantiates every variant's kernels for T.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "reduce/cuda/by_dtype.hpp"
#include "reduce/cuda/classic_plans.cuh"
#include "reduce/cuda/fast_reduce.cuh"
#include "reduce/reduce_ops.hpp"

namespace parpat::detail {

template <class T>
std::unique_ptr<ReduceKernel> make_cuda_reduce(CudaReduceVariant variant, const Device& device,
                                               const ReduceShape& shape) {
  // fast takes every op of reduce_ops.hpp; the classic variants the six basic ones.
  if (variant == CudaReduceVariant::fast)
    return visit_reduce_op<T>(shape.op, [&](auto op) -> std::unique_ptr<ReduceKernel> {
      return std::make_unique<FastReduce<T, decltype(op)>>(device, shape);
    });
  return visit_basic_reduce_op<T>(shape.op, [&](auto op) -> std::unique_ptr<ReduceKernel> {
    using Op = decltype(op);
    switch (variant) {
      case CudaReduceVariant::tree:
        return std::make_unique<TreeReduce<T, Op>>(device, shape);
      case CudaReduceVariant::serial:
        return std::make_unique<SerialReduce<T, Op>>(device, shape);
      case CudaReduceVariant::gridstride:
        return std::make_unique<GridStrideReduce<T, Op>>(device, shape);
      case CudaReduceVariant::atomic:
      case CudaReduceVariant::fast:
        break;
    }
    return std::make_unique<AtomicReduce<T, Op>>(device, shape);
  });
}

template <class T>
void raw_cuda_reduce(const DeviceInfo& info, int ordinal, const void* d_in, std::int64_t n,
                     ReduceOp op, void* d_value, std::int64_t* d_index, void* d_workspace,
                     std::size_t& workspace_bytes, cudaStream_t stream) {
  visit_basic_reduce_op<T>(op, [&](auto o) {
    using Op = decltype(o);
    using Acc = typename Op::Acc;
    const ReduceFastPolicy policy = tuned<ReduceFastPolicy>(info);
    FastPlan plan = fast_plan<T, Op>(policy, info, n);
    plan_for_device<T, Op>(plan, policy, n, ordinal);
    // The ticket counter first, at the same place for every call, so that a workspace serves
    // calls of any size in turn: the last block of each call leaves it zeroed. The partials
    // follow; each call writes its own before it reads them.
    constexpr std::size_t partials_at = 256;
    std::size_t need = partials_at + plan.grid * sizeof(Acc);
    if (!d_workspace) {
      workspace_bytes = need;
      return;
    }
    if (workspace_bytes < need) throw_invalid("reduce workspace is too small");
    if (n == 0) {
      typename Op::Result v = Op::result(Op::identity());
      PARPAT_CUDA(cudaMemcpyAsync(d_value, &v, sizeof v, cudaMemcpyHostToDevice, stream));
      PARPAT_CUDA(cudaStreamSynchronize(stream));
      return;
    }
    auto* base = static_cast<unsigned char*>(d_workspace);
    auto addr = reinterpret_cast<std::uintptr_t>(d_in);
    std::int64_t head = std::min<std::int64_t>(n, ((16 - addr % 16) % 16) / sizeof(T));
    launch_fast_all<T, Op>(plan, stream, static_cast<const T*>(d_in), n, head,
                           reinterpret_cast<Acc*>(base + partials_at),
                           reinterpret_cast<unsigned*>(base),
                           static_cast<typename Op::Result*>(d_value), d_index);
  });
}

}  // namespace parpat::detail

#define PARPAT_CUDA_DTYPE_INSTANCES(T)                                                        \
  template std::unique_ptr<parpat::detail::ReduceKernel> parpat::detail::make_cuda_reduce<T>( \
      parpat::detail::CudaReduceVariant, const parpat::Device&,                               \
      const parpat::detail::ReduceShape&);                                                    \
  template void parpat::detail::raw_cuda_reduce<T>(                                           \
      const parpat::DeviceInfo&, int, const void*, std::int64_t, parpat::ReduceOp, void*,     \
      std::int64_t*, void*, std::size_t&, cudaStream_t);
