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
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "parpat/cuda/reduce.hpp"
#include "reduce/cuda/classic_plans.cuh"
#include "reduce/cuda/fast_plan.cuh"
#include "reduce/cuda/kernels_axis.cuh"
#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {

// Each output's statistic from its Moments, one thread per output.
template <class R>
__global__ void finish_statistics(const Moments* moments, R* values, std::int64_t outputs,
                                  double ddof, Statistic stat, bool nan_op) {
  const std::int64_t o = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (o < outputs) values[o] = static_cast<R>(finish_moments(moments[o], stat, ddof, nan_op));
}

template <class T, class Op>
class FastReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;
  static constexpr int V = Vec16<T>::kCount;

 public:
  FastReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    const auto& info = d.info();
    const ReduceFastPolicy policy = tuned<ReduceFastPolicy>(info);
    if (is_moments_op<Op>::value && !s.raw_moments)
      moments_ = Buffer(d, s.outputs() * sizeof(Moments));
    if (s.axis == Axis::all) {
      if (s.contiguous()) {
        plan_ = fast_plan<T, Op>(policy, info, s.size());
        plan_for_device<T, Op>(plan_, policy, s.size(), this->cuda_.ordinal());
      } else
        plan_.grid = static_cast<int>(std::clamp<std::int64_t>(s.rows, 1, info.compute_units * 4));
      partials_ = Buffer(d, plan_.grid * sizeof(Acc));
      counters_ = this->zeroed(sizeof(unsigned));
    } else if (s.axis == Axis::rows) {
      rows_grid_ = rows_grid(info, policy.rows_blocks_per_cu, s.rows);
    } else if (s.axis == Axis::cols) {
      bool vec = (s.row_stride * sizeof(T)) % 16 == 0;
      width_ = vec ? V : 1;
      col_tiles_ = ceil_div(s.cols, static_cast<std::int64_t>(kColsBlock) * width_);
      std::int64_t fill = static_cast<std::int64_t>(info.compute_units) * 8;
      std::int64_t chunks = std::clamp<std::int64_t>(fill / col_tiles_, 1, 65535);
      chunks = std::min(chunks, ceil_div(s.rows, 16));  // at least 16 rows per chunk
      chunk_rows_ = ceil_div(s.rows, std::max<std::int64_t>(chunks, 1));
      chunks_ = ceil_div(s.rows, chunk_rows_);
      partials_ = Buffer(d, std::max<std::int64_t>(chunks_ * s.cols, 1) * sizeof(Acc));
      counters_ = this->zeroed(col_tiles_ * sizeof(unsigned));
    }
  }

  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    const auto& s = this->s_;
    auto stream = this->cuda_.stream();
    const T* x = this->input(in);
    // Moment ops fold into Moments, then a second launch writes the statistic (a streamed
    // chunk keeps the Moments).
    auto* out = this->out(moments_.bytes() ? moments_ : values);
    auto* idx = this->idx(indices);
    launch(x, out, idx, stream);
    if constexpr (is_moments_op<Op>::value) {
      if (moments_.bytes()) {
        using R = StatisticResult<T>;
        const auto outputs = s.outputs();
        finish_statistics<<<static_cast<unsigned>(ceil_div(outputs, 256)), 256, 0, stream>>>(
            static_cast<const Moments*>(moments_.handle()), static_cast<R*>(values.handle()),
            outputs, s.ddof, *statistic_of(s.op), is_nan_reduce_op(s.op));
        check_launch("finish_statistics");
      }
    }
  }

 private:
  void launch(const T* x, typename Op::Result* out, std::int64_t* idx, cudaStream_t stream) {
    const auto& s = this->s_;
    if (s.axis == Axis::all) {
      auto* partials = this->acc_buffer(partials_);
      auto* counter = static_cast<unsigned*>(counters_.handle());
      if (s.contiguous()) {
        auto addr = reinterpret_cast<std::uintptr_t>(x);
        std::int64_t head = std::min<std::int64_t>(s.size(), ((16 - addr % 16) % 16) / sizeof(T));
        launch_fast_all<T, Op>(plan_, stream, x, s.size(), head, partials, counter, out, idx);
      } else {
        fast_all_strided<T, Op, kFastBlock><<<plan_.grid, kFastBlock, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, partials, counter, out, idx);
        check_launch("fast_all_strided");
      }
    } else if (s.axis == Axis::rows) {
      if (s.cols <= 32) {
        rows_by_thread<T, Op>
            <<<ceil_div(s.rows, 256), 256, 0, stream>>>(x, s.rows, s.cols, s.row_stride, out, idx);
        check_launch("rows_by_thread");
      } else if (s.cols <= 2048) {
        rows_by_warp<T, Op><<<ceil_div(s.rows * kWarp, 256), 256, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, out, idx);
        check_launch("rows_by_warp");
      } else {
        int grid = rows_grid_;
        bool vec =
            reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && (s.row_stride * sizeof(T)) % 16 == 0;
        if (vec) {
          rows_by_block<T, Op, kRowsBlock, true>
              <<<grid, kRowsBlock, 0, stream>>>(x, s.rows, s.cols, s.row_stride, out, idx);
        } else {
          rows_by_block<T, Op, kRowsBlock, false>
              <<<grid, kRowsBlock, 0, stream>>>(x, s.rows, s.cols, s.row_stride, out, idx);
        }
        check_launch("rows_by_block");
      }
    } else {
      dim3 grid(static_cast<unsigned>(col_tiles_), static_cast<unsigned>(chunks_));
      auto* partials = this->acc_buffer(partials_);
      auto* counters = static_cast<unsigned*>(counters_.handle());
      bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
      if (width_ == V && aligned) {
        cols_chunked<T, Op, kColsBlock, V><<<grid, kColsBlock, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, chunk_rows_, partials, counters, out, idx);
      } else {
        dim3 narrow(static_cast<unsigned>(ceil_div(s.cols, kColsBlock)),
                    static_cast<unsigned>(chunks_));
        cols_chunked<T, Op, kColsBlock, 1><<<narrow, kColsBlock, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, chunk_rows_, partials, counters, out, idx);
      }
      check_launch("cols_chunked");
    }
  }

  // The grid of rows_by_block: `per_cu` blocks per SM (ReduceFastPolicy::rows_blocks_per_cu) as
  // far as occupancy allows, each taking the same number of rows; 0 launches one block per row.
  static int rows_grid(const DeviceInfo& info, int per_cu, std::int64_t rows) {
    if (per_cu <= 0) return static_cast<int>(std::min<std::int64_t>(rows, 1 << 30));
    int resident = 0;
    PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &resident, rows_by_block<T, Op, kRowsBlock, true>, kRowsBlock, 0));
    std::int64_t fill = static_cast<std::int64_t>(std::max(info.compute_units, 1)) *
                        std::clamp(resident, 1, per_cu);
    std::int64_t per_block = ceil_div(rows, fill);
    return static_cast<int>(ceil_div(rows, per_block));
  }

  FastPlan plan_;  // axis all
  int rows_grid_ = 1;
  int width_ = 1;
  std::int64_t col_tiles_ = 1, chunks_ = 1, chunk_rows_ = 1;
  Buffer partials_, counters_;
  Buffer moments_;  // moment ops: each output's Moments before the statistic
};

namespace {

// kAllOps: every op of reduce_ops.hpp (fast); otherwise the six basic ones (classic variants).
template <template <class, class> class Kernel, bool kAllOps = false>
std::unique_ptr<ReduceKernel> make(const Device& d, const ReduceShape& s) {
  return visit_dtype(s.dtype, [&](auto t) -> std::unique_ptr<ReduceKernel> {
    using T = decltype(t);
    auto make_for = [&](auto op) -> std::unique_ptr<ReduceKernel> {
      return std::make_unique<Kernel<T, decltype(op)>>(d, s);
    };
    if constexpr (kAllOps)
      return visit_reduce_op<T>(s.op, make_for);
    else
      return visit_basic_reduce_op<T>(s.op, make_for);
  });
}

bool all_axis_only(const ReduceShape& s, const DeviceInfo&) {
  return s.axis == Axis::all && is_basic_reduce_op(s.op);
}
bool everything(const ReduceShape&, const DeviceInfo&) {
  return true;
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
       all_axis_only, make<TreeReduce>},
      {cuda_info("serial",
                 "each thread folds its own block serially (uncoalesced), host loop of passes",
                 params_of<ReduceSerialPolicy>({"block", "items"}), "axis all; the six basic ops"),
       all_axis_only, make<SerialReduce>},
      {cuda_info("gridstride",
                 "registers over a grid-stride loop, shared-memory tree, partials, second launch",
                 params_of<ReduceGridStridePolicy>({"block", "blocks_per_cu"}),
                 "axis all; the six basic ops"),
       all_axis_only, make<GridStrideReduce>},
      {cuda_info("atomic", "one pass, block results combined with atomicAdd / compare-and-swap",
                 params_of<ReduceAtomicPolicy>({"block", "blocks_per_cu"}),
                 "axis all; sum, prod, min, max (no min/max of 1- or 2-byte types, no arg ops)",
                 false),
       atomic_supports, make<AtomicReduce>},
      {cuda_info("fast",
                 "16-byte loads x8 in flight, shuffles, one launch finished by the last block",
                 "block=" + std::to_string(kFastBlock) + " " +
                     params_of<ReduceFastPolicy>({"blocks_per_cu", "single_block_bytes",
                                                  "small_block", "small_items", "cluster_bytes"}),
                 ""),
       everything, make<FastReduce, true>},
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
    using T = decltype(t);
    visit_basic_reduce_op<T>(op, [&](auto o) {
      using Op = decltype(o);
      using Acc = typename Op::Acc;
      const ReduceFastPolicy policy = tuned<ReduceFastPolicy>(info);
      FastPlan plan = fast_plan<T, Op>(policy, info, n);
      plan_for_device<T, Op>(plan, policy, n, ordinal);
      // The ticket counter first, at the same place for every call, so that a workspace
      // serves calls of any size in turn: the last block of each call leaves it zeroed. The
      // partials follow; each call writes its own before it reads them.
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
  });
}

}  // namespace parpat::cuda
