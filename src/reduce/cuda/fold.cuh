// The per-thread folds of the CUDA reduce kernels: a 16-byte vector folded in one step (byte sums
// on the dot-product unit, arg ops comparing values first and appending one index), batches of
// kFastUnroll vectors whose loads are all issued before any fold, and the write of a result.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/order_key.cuh"
#include "cuda/vector_load.cuh"
#include "cuda/warp_reduce.cuh"
#include "reduce/reduce_ops.hpp"

namespace parpat::detail {

constexpr int kFastUnroll = 8;
constexpr int kFastBlock = 512;  // the largest block of fast_all: its launch bound
constexpr int kMaxCluster = 16;  // the largest thread-block cluster (sm_90, non-portable)

template <class Op>
__device__ __forceinline__ void write_result(const typename Op::Acc& acc,
                                             typename Op::Result* values, std::int64_t* indices,
                                             std::int64_t o) {
  values[o] = Op::result(acc);
  if constexpr (is_arg_pair<typename Op::Acc>::value) indices[o] = acc.index;
}

// Folds a 16-byte vector whose first element has flat index `base`. Byte sums (bool, int8,
// uint8) take the dot-product unit: four bytes per instruction instead of one add each; 2-byte
// sums add their eight lanes in 32 bits and widen once. Arg ops find the vector's best value
// comparing values only and append it once: one 64-bit index select per vector instead of one
// per lane, the same pair as lane by lane (the first of equals stays). For integers the lane
// holding that value is looked for only when it displaces the accumulator, which random data
// does rarely past its first vectors; floats track the lane as they go (a NaN equals nothing,
// so its lane cannot be found again by value).
template <class Op, class T>
__device__ __forceinline__ typename Op::Acc fold16(typename Op::Acc acc, const Vec16<T>& x,
                                                   std::int64_t base) {
  if constexpr (std::is_same_v<Op, SumOp<T>> && std::is_integral_v<T> && sizeof(T) == 1) {
    unsigned words[4];
    memcpy(words, x.v, 16);
    if constexpr (std::is_signed_v<T>) {
      int s = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k)
        s = __dp4a(static_cast<int>(words[k]), 0x01010101, s);
      return acc + static_cast<typename Op::Acc>(static_cast<long long>(s));
    } else {
      unsigned s = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k)
        s = __dp4a(words[k], 0x01010101u, s);
      return acc + s;
    }
  } else if constexpr (std::is_same_v<Op, SumOp<T>> && std::is_integral_v<T> && sizeof(T) == 2) {
    int s = 0;  // at most 8 · 65535
#pragma unroll
    for (int k = 0; k < Vec16<T>::kCount; ++k)
      s += x.v[k];
    return acc + static_cast<typename Op::Acc>(static_cast<long long>(s));
  } else if constexpr (is_arg_pair<typename Op::Acc>::value && std::is_integral_v<T>) {
    T best = x.v[0];
#pragma unroll
    for (int k = 1; k < Vec16<T>::kCount; ++k)
      best = Op::beats(x.v[k], best) ? x.v[k] : best;
    typename Op::Acc next = Op::append(acc, best, base);
    if (next.index == acc.index) return acc;
    int lane = 0;
#pragma unroll
    for (int k = Vec16<T>::kCount - 1; k >= 0; --k)
      lane = x.v[k] == best ? k : lane;
    next.index += lane;
    return next;
  } else if constexpr (is_arg_pair<typename Op::Acc>::value) {
    T best = x.v[0];
    int lane = 0;
#pragma unroll
    for (int k = 1; k < Vec16<T>::kCount; ++k) {
      bool better = Op::beats(x.v[k], best);
      best = better ? x.v[k] : best;
      lane = better ? k : lane;
    }
    return Op::append(acc, best, base + lane);
  } else {
#pragma unroll
    for (int k = 0; k < Vec16<T>::kCount; ++k)
      acc = Op::append(acc, x.v[k], base + k);
    return acc;
  }
}

// Folds full batches of kFastUnroll vectors, vectors v, v + stride, ... of `body` (vector j's
// first element has flat index base + j · its length): all loads of a batch are issued before
// any fold, so each thread keeps kFastUnroll 16-byte loads in flight. Leaves v at the first
// vector of the unfinished batch.
template <class Op, class T>
__device__ __forceinline__ typename Op::Acc fold_batches(typename Op::Acc acc, const T* body,
                                                         std::int64_t& v, std::int64_t vectors,
                                                         std::int64_t stride, std::int64_t base) {
  constexpr int V = Vec16<T>::kCount;
  for (; v + (kFastUnroll - 1) * stride < vectors; v += kFastUnroll * stride) {
    Vec16<T> x[kFastUnroll];
#pragma unroll
    for (int u = 0; u < kFastUnroll; ++u)
      x[u] = load16(body + (v + u * stride) * V);
#pragma unroll
    for (int u = 0; u < kFastUnroll; ++u)
      acc = fold16<Op>(acc, x[u], base + (v + u * stride) * V);
  }
  return acc;
}

// Folds elements i = first, first + stride, ... below n of a row whose element i is at
// x[i · step] (flat index base + i), kFastUnroll scalar loads issued before any fold: the loads of
// strided views, whose elements are not neighbours.
template <class Op, class T>
__device__ __forceinline__ typename Op::Acc fold_stepped(typename Op::Acc acc, const T* x,
                                                         std::int64_t step, std::int64_t first,
                                                         std::int64_t n, std::int64_t stride,
                                                         std::int64_t base) {
  std::int64_t i = first;
  for (; i + (kFastUnroll - 1) * stride < n; i += kFastUnroll * stride) {
    T v[kFastUnroll];
#pragma unroll
    for (int u = 0; u < kFastUnroll; ++u)
      v[u] = x[(i + u * stride) * step];
#pragma unroll
    for (int u = 0; u < kFastUnroll; ++u)
      acc = Op::append(acc, v[u], base + i + u * stride);
  }
  for (; i < n; i += stride)
    acc = Op::append(acc, x[i * step], base + i);
  return acc;
}

}  // namespace parpat::detail
