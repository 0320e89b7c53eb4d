// Order keys: min, max, argmin and argmax as unsigned integers whose larger value is the better
// element, so that a warp folds them with warp-wide integer reductions (redux.sync) instead of
// rounds of shuffles and comparisons. Shared by the CUDA kernels of every pattern that compares.
#pragma once

#include <cstdint>
#include <type_traits>

#include "reduce/reduce_ops.hpp"

namespace parpat::detail {

// min, max, argmin and argmax as orders of unsigned integers, larger = better, so that a warp
// folds them in warp-wide integer reductions (redux.sync): a NaN above everything (it wins, and
// for arg ops the first NaN wins), floats by the sign-magnitude flip, signed integers by the
// sign-bit flip, the minimum by inverting the bits. Arg ops take −0.0 equal to +0.0 (a tie, so
// the first index wins); min and max keep the sign of a zero in the key (−0.0 below +0.0), so
// the key gives the value back: between lanes max takes +0.0 over −0.0, while a thread's own
// fold keeps the zero it saw first (either is numpy's answer).
template <class T>
using OrderKey = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;

template <class T, bool kMin, bool kZeroTies>
__device__ __forceinline__ OrderKey<T> order_key(T v) {
  using Key = OrderKey<T>;
  constexpr Key kTop = Key(1) << (8 * sizeof(Key) - 1);
  Key key;
  if constexpr (std::is_floating_point_v<T>) {
    if (v != v) return ~Key(0);
    Key bits = 0;
    if (!kZeroTies || v != T(0)) memcpy(&bits, &v, sizeof(T));
    key = (bits & kTop) ? ~bits : bits | kTop;
  } else if constexpr (std::is_signed_v<T>) {
    key = static_cast<Key>(v) ^ kTop;
  } else {
    key = static_cast<Key>(v);
  }
  return kMin ? ~key : key;
}

// The value of a min/max order key (order_key without zero ties); ~0 is a NaN.
template <class T, bool kMin>
__device__ __forceinline__ T value_of_key(OrderKey<T> key) {
  using Key = OrderKey<T>;
  constexpr Key kTop = Key(1) << (8 * sizeof(Key) - 1);
  if constexpr (std::is_floating_point_v<T>) {
    if (key == ~Key(0)) return std::numeric_limits<T>::quiet_NaN();
    if (kMin) key = ~key;
    Key bits = (key & kTop) ? key & ~kTop : ~key;
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
  } else {
    if (kMin) key = ~key;
    return static_cast<T>(std::is_signed_v<T> ? key ^ kTop : key);
  }
}
}  // namespace parpat::detail
