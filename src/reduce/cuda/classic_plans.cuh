// The host side of the classic CUDA reduce variants: each plan sizes its grid and ping-pong or
// partial buffers once (from the tuning policies), and run() only enqueues its launches.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "reduce/cuda/kernels_classic.cuh"
#include "reduce/reduce_internal.hpp"
#include "reduce/tuning.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {

// ---------------------------------------------------------------------------------------------
// Host side

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

template <class T, class Op>
class CudaReduce : public ReduceKernel {
 protected:
  using Acc = typename Op::Acc;
  using R = typename Op::Result;

  CudaReduce(const Device& d, const ReduceShape& s)
      : device_(d), cuda_(backend_cast<CudaDevice>(d)), s_(s) {}

  const T* input(const Buffer& in) const { return static_cast<const T*>(in.handle()); }
  static R* out(const Buffer& b) { return static_cast<R*>(b.handle()); }
  static std::int64_t* idx(const Buffer& b) { return static_cast<std::int64_t*>(b.handle()); }
  Acc* acc_buffer(const Buffer& b) const { return static_cast<Acc*>(b.handle()); }
  Buffer zeroed(std::size_t bytes) const {
    Buffer b(device_, bytes);
    PARPAT_CUDA(cudaMemsetAsync(b.handle(), 0, b.bytes(), cuda_.stream()));
    PARPAT_CUDA(cudaStreamSynchronize(cuda_.stream()));
    return b;
  }

  Device device_;
  CudaDevice& cuda_;
  ReduceShape s_;
};

template <class T, class Op>
class TreeReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;

 public:
  TreeReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    block_ = tuned<ReduceTreePolicy>(d.info()).block;
    std::int64_t first = ceil_div(s.size(), block_);
    a_ = Buffer(d, std::max<std::int64_t>(first, 1) * sizeof(Acc));
    b_ = Buffer(d, std::max<std::int64_t>(ceil_div(first, block_), 1) * sizeof(Acc));
  }
  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    this->cuda_.activate();
    auto stream = this->cuda_.stream();
    std::size_t smem = block_ * sizeof(Acc);
    std::int64_t n = this->s_.size();
    std::int64_t blocks = ceil_div(n, block_);
    tree_pass<T, Op, true><<<blocks, block_, smem, stream>>>(
        in.handle(), n, this->s_.cols, this->s_.row_stride, this->acc_buffer(a_), this->out(values),
        this->idx(indices));
    check_launch("tree_pass");
    const Buffer* src = &a_;
    const Buffer* dst = &b_;
    while (blocks > 1) {
      n = blocks;
      blocks = ceil_div(n, block_);
      tree_pass<T, Op, false><<<blocks, block_, smem, stream>>>(
          src->handle(), n, n, n, this->acc_buffer(*dst), this->out(values), this->idx(indices));
      check_launch("tree_pass");
      std::swap(src, dst);
    }
  }

 private:
  int block_;
  Buffer a_, b_;
};

template <class T, class Op>
class SerialReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;

 public:
  SerialReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    const ReduceSerialPolicy policy = tuned<ReduceSerialPolicy>(d.info());
    block_ = policy.block;
    items_ = policy.items;
    std::int64_t first = ceil_div(s.size(), items_);
    a_ = Buffer(d, std::max<std::int64_t>(first, 1) * sizeof(Acc));
    b_ = Buffer(d, std::max<std::int64_t>(ceil_div(first, items_), 1) * sizeof(Acc));
  }
  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    this->cuda_.activate();
    auto stream = this->cuda_.stream();
    std::int64_t n = this->s_.size();
    std::int64_t threads = ceil_div(n, items_);
    serial_pass<T, Op, true><<<ceil_div(threads, block_), block_, 0, stream>>>(
        in.handle(), n, this->s_.cols, this->s_.row_stride, items_, this->acc_buffer(a_),
        this->out(values), this->idx(indices));
    check_launch("serial_pass");
    const Buffer* src = &a_;
    const Buffer* dst = &b_;
    while (threads > 1) {
      n = threads;
      threads = ceil_div(n, items_);
      serial_pass<T, Op, false><<<ceil_div(threads, block_), block_, 0, stream>>>(
          src->handle(), n, n, n, items_, this->acc_buffer(*dst), this->out(values),
          this->idx(indices));
      check_launch("serial_pass");
      std::swap(src, dst);
    }
  }

 private:
  int block_, items_;
  Buffer a_, b_;
};

template <class T, class Op>
class GridStrideReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;

 public:
  GridStrideReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    const ReduceGridStridePolicy policy = tuned<ReduceGridStridePolicy>(d.info());
    block_ = policy.block;
    grid_ = static_cast<int>(std::clamp<std::int64_t>(
        ceil_div(s.size(), block_), 1, d.info().compute_units * policy.blocks_per_cu));
    partials_ = Buffer(d, grid_ * sizeof(Acc));
  }
  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    this->cuda_.activate();
    auto stream = this->cuda_.stream();
    std::size_t smem = block_ * sizeof(Acc);
    gridstride_partials<T, Op><<<grid_, block_, smem, stream>>>(this->input(in), this->s_.size(),
                                                                this->s_.cols, this->s_.row_stride,
                                                                this->acc_buffer(partials_));
    check_launch("gridstride_partials");
    gridstride_finish<Op><<<1, block_, smem, stream>>>(this->acc_buffer(partials_), grid_,
                                                       this->out(values), this->idx(indices));
    check_launch("gridstride_finish");
  }

 private:
  int block_, grid_;
  Buffer partials_;
};

template <class T, class Op>
class AtomicReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;

 public:
  AtomicReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    const ReduceAtomicPolicy policy = tuned<ReduceAtomicPolicy>(d.info());
    block_ = policy.block;
    grid_ = static_cast<int>(std::clamp<std::int64_t>(
        ceil_div(s.size(), block_), 1, d.info().compute_units * policy.blocks_per_cu));
    slot_ = Buffer(d, sizeof(Acc));
  }
  void run(const Buffer& in, const Buffer& values, const Buffer&) override {
    this->cuda_.activate();
    auto stream = this->cuda_.stream();
    Acc* slot = this->acc_buffer(slot_);
    atomic_init<Op><<<1, 1, 0, stream>>>(slot);
    check_launch("atomic_init");
    atomic_pass<T, Op><<<grid_, block_, 0, stream>>>(this->input(in), this->s_.size(),
                                                     this->s_.cols, this->s_.row_stride, slot);
    check_launch("atomic_pass");
    atomic_finish<Op><<<1, 1, 0, stream>>>(slot, this->out(values));
    check_launch("atomic_finish");
  }

 private:
  int block_, grid_;
  Buffer slot_;
};

}  // namespace parpat::detail
