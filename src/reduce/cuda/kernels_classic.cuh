// The classic CUDA reduce kernels, as GPU programmers learn them one after the other:
//   tree        one element per thread into shared memory, halving tree with a barrier per
//               step, one partial per block; the host loops passes over two ping-pong buffers.
//   serial      each thread folds its own contiguous block of `items` elements (uncoalesced:
//               neighbouring threads read addresses `items` apart); host loop of passes.
//   gridstride  a fixed grid accumulates in registers over a grid-stride loop (coalesced), a
//               shared-memory tree per block, per-block partials, then a second launch of one
//               block.
//   atomic      one pass; block results meet in one global accumulator through atomicAdd or a
//               compare-and-swap loop (float sums then depend on arrival order).
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/order_key.cuh"
#include "cuda/vector_load.cuh"
#include "cuda/warp_reduce.cuh"
#include "reduce/cuda/fold.cuh"
#include "reduce/reduce_ops.hpp"

namespace parpat::detail {

// ---------------------------------------------------------------------------------------------
// tree: one element per thread, halving tree in shared memory.

template <class T, class Op, bool kFromInput>
__global__ void tree_pass(const void* in, std::int64_t n, std::int64_t cols, std::int64_t stride,
                          typename Op::Acc* partials, typename Op::Result* values,
                          std::int64_t* indices) {
  using Acc = typename Op::Acc;
  extern __shared__ unsigned char tree_smem[];
  Acc* s = reinterpret_cast<Acc*>(tree_smem);
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Acc v = Op::identity();
  if (i < n) {
    if constexpr (kFromInput) {
      v = Op::load(flat_at(static_cast<const T*>(in), i, cols, stride), i);
    } else {
      v = static_cast<const Acc*>(in)[i];
    }
  }
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] = Op::combine(s[threadIdx.x], s[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (gridDim.x == 1)
      write_result<Op>(s[0], values, indices, 0);
    else
      partials[blockIdx.x] = s[0];
  }
}

// serial: each thread folds `items` consecutive elements on its own.
template <class T, class Op, bool kFromInput>
__global__ void serial_pass(const void* in, std::int64_t n, std::int64_t cols, std::int64_t stride,
                            int items, typename Op::Acc* partials, typename Op::Result* values,
                            std::int64_t* indices) {
  using Acc = typename Op::Acc;
  std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t begin = t * items;
  if (begin >= n) return;
  std::int64_t end = min(n, begin + items);
  Acc v = Op::identity();
  for (std::int64_t i = begin; i < end; ++i) {
    if constexpr (kFromInput) {
      v = Op::combine(v, Op::load(flat_at(static_cast<const T*>(in), i, cols, stride), i));
    } else {
      v = Op::combine(v, static_cast<const Acc*>(in)[i]);
    }
  }
  if (n <= items)
    write_result<Op>(v, values, indices, 0);
  else
    partials[t] = v;
}

// gridstride: registers over a grid-stride loop, then the classic shared-memory tree.
template <class Op>
__device__ typename Op::Acc shared_tree(typename Op::Acc v) {
  using Acc = typename Op::Acc;
  extern __shared__ unsigned char tree_smem[];
  Acc* s = reinterpret_cast<Acc*>(tree_smem);
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] = Op::combine(s[threadIdx.x], s[threadIdx.x + half]);
    __syncthreads();
  }
  return s[0];
}

template <class T, class Op>
__global__ void gridstride_partials(const T* in, std::int64_t n, std::int64_t cols,
                                    std::int64_t stride, typename Op::Acc* partials) {
  typename Op::Acc v = Op::identity();
  std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step)
    v = Op::combine(v, Op::load(flat_at(in, i, cols, stride), i));
  v = shared_tree<Op>(v);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

template <class Op>
__global__ void gridstride_finish(const typename Op::Acc* partials, int count,
                                  typename Op::Result* values, std::int64_t* indices) {
  typename Op::Acc v = Op::identity();
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    v = Op::combine(v, partials[i]);
  v = shared_tree<Op>(v);
  if (threadIdx.x == 0) write_result<Op>(v, values, indices, 0);
}

// atomic: one global accumulator. Ops without a native atomic fold through compare-and-swap
// on the accumulator's bit pattern.
template <class Op>
__device__ void atomic_combine(typename Op::Acc* slot, typename Op::Acc v) {
  using Acc = typename Op::Acc;
  using Word = std::conditional_t<sizeof(Acc) == 8, unsigned long long, unsigned>;
  Word* word = reinterpret_cast<Word*>(slot);
  Word seen = *reinterpret_cast<volatile Word*>(word), expected;
  do {
    expected = seen;
    Acc current;
    memcpy(&current, &expected, sizeof(Acc));
    Acc next = Op::combine(current, v);
    Word desired;
    memcpy(&desired, &next, sizeof(Acc));
    if (desired == expected) return;
    seen = atomicCAS(word, expected, desired);
  } while (seen != expected);
}

template <class Op>
__global__ void atomic_init(typename Op::Acc* slot) {
  *slot = Op::identity();
}

template <class T, class Op>
__global__ void atomic_pass(const T* in, std::int64_t n, std::int64_t cols, std::int64_t stride,
                            typename Op::Acc* slot) {
  typename Op::Acc v = Op::identity();
  std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step)
    v = Op::combine(v, Op::load(flat_at(in, i, cols, stride), i));
  v = block_reduce<Op>(v);
  if (threadIdx.x == 0) {
    if constexpr (std::is_same_v<Op, SumOp<T>> && std::is_integral_v<T>) {
      atomicAdd(reinterpret_cast<unsigned long long*>(slot), static_cast<unsigned long long>(v));
    } else if constexpr (std::is_same_v<Op, SumOp<float>> || std::is_same_v<Op, SumOp<double>>) {
      atomicAdd(slot, v);
    } else {
      atomic_combine<Op>(slot, v);
    }
  }
}

template <class Op>
__global__ void atomic_finish(const typename Op::Acc* slot, typename Op::Result* values) {
  values[0] = Op::result(*slot);
}

}  // namespace parpat::detail
