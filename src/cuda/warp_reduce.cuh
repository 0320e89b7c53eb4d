// Warp- and block-wide folds over the operators of reduce_ops.hpp: shuffle trees, warp-wide
// integer reductions of order keys for min/max/arg ops (sm_80 and later) and of bit fields for
// integer sums, and a block fold that meets once in shared memory. Every fold's order is fixed,
// so the bits of a result depend only on the launch shape. Shared by every CUDA pattern.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/order_key.cuh"
#include "reduce/reduce_ops.hpp"

namespace parpat::detail {

constexpr int kWarp = 32;

template <class T>
__device__ __forceinline__ T shuffle_down(T v, int delta) {
  if constexpr (sizeof(T) < 4) {
    return static_cast<T>(__shfl_down_sync(0xffffffffu, static_cast<unsigned>(v), delta));
  } else {
    return __shfl_down_sync(0xffffffffu, v, delta);
  }
}

template <class T>
__device__ __forceinline__ T shuffle_from(T v, int lane) {
  if constexpr (sizeof(T) < 4) {
    return static_cast<T>(__shfl_sync(0xffffffffu, static_cast<unsigned>(v), lane));
  } else {
    return __shfl_sync(0xffffffffu, v, lane);
  }
}

template <class T>
__device__ __forceinline__ ArgPair<T> shuffle_down(ArgPair<T> v, int delta) {
  return {shuffle_down(v.value, delta), shuffle_down(v.index, delta)};
}

__device__ __forceinline__ Moments shuffle_down(Moments v, int delta) {
  return {shuffle_down(v.n, delta), shuffle_down(v.shift, delta), shuffle_down(v.s, delta),
          shuffle_down(v.q, delta)};
}

// Reads memory written by other blocks of this launch, bypassing the non-coherent L1.
template <class T>
__device__ __forceinline__ T load_coherent(const T* p) {
  return *reinterpret_cast<const volatile T*>(p);
}
template <class T>
__device__ __forceinline__ ArgPair<T> load_coherent(const ArgPair<T>* p) {
  return {load_coherent(&p->value), load_coherent(&p->index)};
}

__device__ __forceinline__ Moments load_coherent(const Moments* p) {
  return {load_coherent(&p->n), load_coherent(&p->shift), load_coherent(&p->s),
          load_coherent(&p->q)};
}

template <class Op>
struct WarpOrder : std::false_type {};
template <class T>
struct WarpOrder<MinOp<T>> : std::true_type {
  static constexpr bool kArg = false, kMin = true;
};
template <class T>
struct WarpOrder<MaxOp<T>> : std::true_type {
  static constexpr bool kArg = false, kMin = false;
};
template <class T, bool kMinimum>
struct WarpOrder<ArgOp<T, kMinimum>> : std::true_type {
  static constexpr bool kArg = true, kMin = kMinimum;
};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
// The largest key of a warp: one reduction, or for 64-bit keys the high word, then the low word
// among the lanes that hold the largest high word. Every lane takes part in every reduction.
__device__ __forceinline__ unsigned warp_max_key(unsigned key) {
  return __reduce_max_sync(0xffffffffu, key);
}
__device__ __forceinline__ unsigned long long warp_max_key(unsigned long long key) {
  const unsigned high = static_cast<unsigned>(key >> 32);
  const unsigned top = __reduce_max_sync(0xffffffffu, high);
  const unsigned low = high == top ? static_cast<unsigned>(key) : 0u;
  return (static_cast<unsigned long long>(top) << 32) | __reduce_max_sync(0xffffffffu, low);
}

// min, max, argmin and argmax over a warp in warp-wide integer reductions instead of five rounds
// of shuffles (for arg ops each moving a value and a 64-bit index and comparing both). min and
// max: the largest key, turned back into its value. Arg ops: the largest key, then the smallest
// index among the lanes holding it (high word, then low word), then the value from that lane —
// the pair the shuffle tree gives, since combine picks by key and ties by index.
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce_ordered(typename Op::Acc v) {
  using Order = WarpOrder<Op>;
  if constexpr (!Order::kArg) {
    using T = typename Op::Acc;
    return value_of_key<T, Order::kMin>(warp_max_key(order_key<T, Order::kMin, false>(v)));
  } else {
    using T = decltype(v.value);
    constexpr unsigned kAll = 0xffffffffu;
    const auto key = order_key<T, Order::kMin, true>(v.value);
    bool best = key == warp_max_key(key);
    const auto index = static_cast<unsigned long long>(v.index);
    const unsigned index_high = best ? static_cast<unsigned>(index >> 32) : ~0u;
    const unsigned first_high = __reduce_min_sync(kAll, index_high);
    best = best && index_high == first_high;
    const unsigned index_low = best ? static_cast<unsigned>(index) : ~0u;
    const unsigned first_low = __reduce_min_sync(kAll, index_low);
    const int lane = __ffs(__ballot_sync(kAll, best && index_low == first_low)) - 1;
    typename Op::Acc out;
    out.value = shuffle_from(v.value, lane);
    out.index =
        static_cast<std::int64_t>((static_cast<unsigned long long>(first_high) << 32) | first_low);
    return out;
  }
}
#endif

template <class Op>
struct WarpIntegerSum : std::false_type {};
template <class T>
struct WarpIntegerSum<SumOp<T>> : std::bool_constant<!std::is_floating_point_v<T>> {};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
// The wrapping 64-bit sum of a warp in three warp-wide 32-bit additions instead of five rounds of
// two shuffles and a 64-bit add: the value is cut into fields of 22, 22 and 20 bits, each field
// summed over the 32 lanes (less than 2^27, no carry lost), and the three sums shifted back into
// place and added modulo 2^64 — the same bits as adding the lanes in any order.
__device__ __forceinline__ std::uint64_t warp_sum_u64(std::uint64_t v) {
  constexpr unsigned kAll = 0xffffffffu;
  constexpr std::uint64_t kField = (std::uint64_t{1} << 22) - 1;
  const unsigned low = __reduce_add_sync(kAll, static_cast<unsigned>(v & kField));
  const unsigned mid = __reduce_add_sync(kAll, static_cast<unsigned>((v >> 22) & kField));
  const unsigned high = __reduce_add_sync(kAll, static_cast<unsigned>(v >> 44));
  return std::uint64_t{low} + (std::uint64_t{mid} << 22) + (std::uint64_t{high} << 44);
}
#endif

template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce_by_shuffles(typename Op::Acc v) {
#pragma unroll
  for (int d = kWarp / 2; d > 0; d /= 2)
    v = Op::combine(v, shuffle_down(v, d));
  return v;
}

template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce(typename Op::Acc v) {
#if __CUDA_ARCH__ >= 800
  if constexpr (WarpOrder<Op>::value) {
    return warp_reduce_ordered<Op>(v);
  } else if constexpr (WarpIntegerSum<Op>::value) {
    return warp_sum_u64(v);
  } else {
    return warp_reduce_by_shuffles<Op>(v);
  }
#else
  return warp_reduce_by_shuffles<Op>(v);
#endif
}

// Block-wide fold with shuffles; the result is valid in thread 0. Any blockDim that is a
// multiple of 32 up to 1024.
template <class Op>
__device__ typename Op::Acc block_reduce(typename Op::Acc v) {
  using Acc = typename Op::Acc;
  __shared__ Acc warp_results[32];
  int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_reduce<Op>(v);
  if (blockDim.x == kWarp) return v;  // one warp (tiny inputs): no shared-memory round
  __syncthreads();                    // warp_results may still be read by a previous call
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  int warps = blockDim.x / kWarp;
  if (warp == 0) {
    v = lane < warps ? warp_results[lane] : Op::identity();
    v = warp_reduce<Op>(v);
  }
  return v;
}
}  // namespace parpat::detail
