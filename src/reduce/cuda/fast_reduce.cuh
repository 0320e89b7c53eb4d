// The host side of the CUDA reduce `fast` (the algorithm is described atop reduce/cuda.cu): the
// plan sizes its grid, partials and ticket counters once per shape, and loads the kernel it
// will launch, so a plan's first run() pays no module loading; run() only enqueues.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "reduce/cuda/classic_plans.cuh"
#include "reduce/cuda/fast_plan.cuh"
#include "reduce/cuda/kernels_axis.cuh"
#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
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
    this->cuda_.activate();  // the module loads, and the plan is made, on this plan's device
    const auto& info = d.info();
    const ReduceFastPolicy policy = tuned<ReduceFastPolicy>(info);
    // The first use of a module loads it (lazy loading): here, so that the first run() times
    // only its kernels. The module holds every kernel of this dtype (by_dtype.hpp).
    cudaFuncAttributes loaded{};
    PARPAT_CUDA(cudaFuncGetAttributes(&loaded, fast_all<T, Op, false>));
    if (is_moments_op<Op>::value && !s.raw_moments)
      moments_ = Buffer(d, s.outputs() * sizeof(Moments));
    if (s.axis == Axis::all) {
      if (s.contiguous()) {
        plan_ = fast_plan<T, Op>(policy, info, s.size());
        plan_for_device<T, Op>(plan_, policy, s.size(), this->cuda_.ordinal());
      } else if (s.col_step != 1) {
        plan_.grid = stepped_grid(info, policy.blocks_per_cu, s.cols);
      } else
        plan_.grid = static_cast<int>(std::clamp<std::int64_t>(s.rows, 1, info.compute_units * 4));
      partials_ = Buffer(d, plan_.grid * sizeof(Acc));
      counters_ = this->zeroed(sizeof(unsigned));
    } else if (s.axis == Axis::rows) {
      rows_grid_ = rows_grid(info, policy.rows_blocks_per_cu, s.rows);
    } else if (s.axis == Axis::cols) {
      bool vec = s.col_step == 1 && (s.row_stride * sizeof(T)) % 16 == 0;
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
    this->cuda_.activate();
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
      } else if (s.col_step != 1) {
        fast_all_stepped<T, Op><<<plan_.grid, kFastBlock, 0, stream>>>(x, s.cols, s.col_step,
                                                                       partials, counter, out, idx);
        check_launch("fast_all_stepped");
      } else {
        fast_all_strided<T, Op, kFastBlock><<<plan_.grid, kFastBlock, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, partials, counter, out, idx);
        check_launch("fast_all_strided");
      }
    } else if (s.axis == Axis::rows) {
      if (s.cols <= 32) {
        rows_by_thread<T, Op><<<ceil_div(s.rows, 256), 256, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, s.col_step, out, idx);
        check_launch("rows_by_thread");
      } else if (s.cols <= 2048) {
        rows_by_warp<T, Op><<<ceil_div(s.rows * kWarp, 256), 256, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, s.col_step, out, idx);
        check_launch("rows_by_warp");
      } else {
        int grid = rows_grid_;
        bool vec = s.col_step == 1 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
                   (s.row_stride * sizeof(T)) % 16 == 0;
        if (vec) {
          rows_by_block<T, Op, kRowsBlock, true><<<grid, kRowsBlock, 0, stream>>>(
              x, s.rows, s.cols, s.row_stride, s.col_step, out, idx);
        } else {
          rows_by_block<T, Op, kRowsBlock, false><<<grid, kRowsBlock, 0, stream>>>(
              x, s.rows, s.cols, s.row_stride, s.col_step, out, idx);
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
            x, s.rows, s.cols, s.row_stride, s.col_step, chunk_rows_, partials, counters, out, idx);
      } else {
        dim3 narrow(static_cast<unsigned>(ceil_div(s.cols, kColsBlock)),
                    static_cast<unsigned>(chunks_));
        cols_chunked<T, Op, kColsBlock, 1><<<narrow, kColsBlock, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, s.col_step, chunk_rows_, partials, counters, out, idx);
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

  // The grid of fast_all_stepped over n elements: one wave of kFastBlock-thread blocks (`per_cu`
  // per SM as far as occupancy allows), never more blocks than a batch of loads a thread fills.
  static int stepped_grid(const DeviceInfo& info, int per_cu, std::int64_t n) {
    int resident = 0;
    PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, fast_all_stepped<T, Op>,
                                                              kFastBlock, 0));
    const std::int64_t fill = static_cast<std::int64_t>(std::max(info.compute_units, 1)) *
                              std::clamp(resident, 1, per_cu);
    return static_cast<int>(std::clamp<std::int64_t>(
        ceil_div(n, static_cast<std::int64_t>(kFastBlock) * kFastUnroll), 1, fill));
  }

  FastPlan plan_;  // axis all
  int rows_grid_ = 1;
  int width_ = 1;
  std::int64_t col_tiles_ = 1, chunks_ = 1, chunk_rows_ = 1;
  Buffer partials_, counters_;
  Buffer moments_;  // moment ops: each output's Moments before the statistic
};

}  // namespace parpat::detail
