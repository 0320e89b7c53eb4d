// CUDA reduce variants. All of them fold with the operators of reduce_ops.hpp, so every variant
// computes the same function; they differ only in how the work is spread over the GPU.
//
//   tree        one element per thread into shared memory, halving tree with a barrier per
//               step, one partial per block; the host loops passes over two ping-pong buffers.
//   serial      each thread folds its own contiguous block of `items` elements (uncoalesced:
//               neighbouring threads read addresses `items` apart); host loop of passes.
//   gridstride  a fixed grid accumulates in registers over a grid-stride loop (coalesced), a
//               shared-memory tree per block, per-block partials, then a second launch of one
//               block.
//   atomic      one pass; block results meet in one global accumulator through atomicAdd or a
//               compare-and-swap loop (float sums then depend on arrival order).
//   fast        one launch: 16-byte loads, eight in flight per thread, a grid sized to fill the
//               device once, warp-shuffle block reduction (min, max and the arg ops by warp-wide
//               integer reductions of an order key instead, integer sums by three warp-wide
//               32-bit adds of bit fields), per-block partials, and the last
//               block to arrive (an acquire-release ticket) folds the partials in block order;
//               on sm_90 each launch overlaps the end of the kernel before it in the stream
//               (programmatic dependent launch). Small inputs are latency-bound instead: one
//               block with no ticket when they are tiny; up to 1 MiB on sm_90 one cluster of
//               16 blocks whose results meet in block 0's shared memory at the cluster barrier;
//               else smaller blocks with a few loads per thread spread over as many SMs as the
//               data covers, so every SM makes one short round trip (fast_plan,
//               plan_for_device). The grid and every fold order are fixed per size, so the
//               result is bit-identical run to run.
//               Rows (numpy axis=1) use a thread, a warp or a block per row by row length;
//               columns (axis=0) give each thread a 16-byte strip of columns over a chunk of
//               rows, and the last chunk of a column strip to finish folds the chunks in order.
//               Strided views whose elements are a step apart (a 1-D step, or rows of a step)
//               are read in place with scalar loads, kFastUnroll in flight per thread.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "parpat/cuda/reduce.hpp"
#include "reduce/cuda/by_dtype.hpp"
#include "reduce/cuda/fold.cuh"
#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
#include "reduce/tuning.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {

namespace {

template <CudaReduceVariant kVariant>
std::unique_ptr<ReduceKernel> make(const Device& d, const ReduceShape& s) {
  return visit_dtype(s.dtype, [&](auto t) -> std::unique_ptr<ReduceKernel> {
    return make_cuda_reduce<decltype(t)>(kVariant, d, s);
  });
}

bool all_axis_only(const ReduceShape& s, const DeviceInfo&) {
  return s.axis == Axis::all && is_basic_reduce_op(s.op);
}
// fast reads steps along rows and columns, and along one row (axis all).
bool fast_supports(const ReduceShape& s, const DeviceInfo&) {
  return s.col_step == 1 || s.axis != Axis::all || s.rows == 1;
}

// Atomics need an accumulator of 4 or 8 bytes and an op without an index.
bool atomic_supports(const ReduceShape& s, const DeviceInfo&) {
  if (s.axis != Axis::all || is_arg_op(s.op) || !is_basic_reduce_op(s.op)) return false;
  bool narrow = dtype_size(s.dtype) < 4 && (s.op == ReduceOp::min || s.op == ReduceOp::max);
  return !narrow;
}

VariantInfo cuda_info(const char* name, const char* idea, std::string params, const char* limits,
                      bool deterministic = true) {
  return variant_info("reduce", Backend::cuda, name, idea, std::move(params), limits,
                      deterministic);
}

template <class Policy>
std::string params_of(std::initializer_list<const char*> names) {
  return backend_params<Policy>(Backend::cuda, names);
}

}  // namespace

std::vector<ReduceVariant> cuda_reduce_variants() {
  return {
      {cuda_info("tree",
                 "one element per thread, halving tree in shared memory, host loop of passes",
                 params_of<ReduceTreePolicy>({"block"}), "axis all; the six basic ops"),
       all_axis_only, make<CudaReduceVariant::tree>},
      {cuda_info("serial",
                 "each thread folds its own block serially (uncoalesced), host loop of passes",
                 params_of<ReduceSerialPolicy>({"block", "items"}), "axis all; the six basic ops"),
       all_axis_only, make<CudaReduceVariant::serial>},
      {cuda_info("gridstride",
                 "registers over a grid-stride loop, shared-memory tree, partials, second launch",
                 params_of<ReduceGridStridePolicy>({"block", "blocks_per_cu"}),
                 "axis all; the six basic ops"),
       all_axis_only, make<CudaReduceVariant::gridstride>},
      {cuda_info("atomic", "one pass, block results combined with atomicAdd / compare-and-swap",
                 params_of<ReduceAtomicPolicy>({"block", "blocks_per_cu"}),
                 "axis all; sum, prod, min, max (no min/max of 1- or 2-byte types, no arg ops)",
                 false),
       atomic_supports, make<CudaReduceVariant::atomic>},
      {cuda_info("fast",
                 "16-byte loads x8 in flight, shuffles, one launch finished by the last block",
                 "block=" + std::to_string(kFastBlock) + " " +
                     params_of<ReduceFastPolicy>({"blocks_per_cu", "single_block_bytes",
                                                  "small_block", "small_items", "cluster_bytes"}),
                 ""),
       fast_supports, make<CudaReduceVariant::fast>, true},
  };
}

}  // namespace parpat::detail

namespace parpat::cuda {

void reduce(const void* d_in, DType dtype, std::int64_t n, ReduceOp op, void* d_value,
            std::int64_t* d_index, void* d_workspace, std::size_t& workspace_bytes,
            cudaStream_t stream) {
  using namespace parpat::detail;
  int ordinal = 0;
  PARPAT_CUDA(cudaGetDevice(&ordinal));
  const DeviceInfo& info = cuda_device_info(ordinal);
  if (!is_basic_reduce_op(op))
    throw_invalid(
        std::string("the raw CUDA reduce takes sum, prod, min, max, argmin or argmax, not ") +
        reduce_op_name(op));
  if (n == 0 && op != ReduceOp::sum && op != ReduceOp::prod)
    throw_invalid(std::string(reduce_op_name(op)) + " of an empty array has no identity");
  visit_dtype(dtype, [&](auto t) {
    raw_cuda_reduce<decltype(t)>(info, ordinal, d_in, n, op, d_value, d_index, d_workspace,
                                 workspace_bytes, stream);
  });
}

}  // namespace parpat::cuda
