// The reduce operators as accumulator algebras, shared by the CPU `parallel` variant and the
// CUDA kernels (the reference is written separately, on purpose). Each Op has
//   Acc                   the accumulator: uint64 for integer sum/prod (wraps mod 2^64), double
//                         for float sum/prod, T for min/max, {value, index} for arg ops
//   identity()            the neutral accumulator
//   load(v, i)            the accumulator of element v at flattened index i
//   combine(a, b)         associative and commutative, so any tree order gives the same value;
//                         min/max propagate NaN, arg ops keep the first NaN, else the first
//                         extreme (smallest index on ties)
//   append(a, v, i)       combine(a, load(v, i)) for an element whose index i is larger than
//                         every index already in a; arg ops then need no index comparison
//   Result                the output element type; result(acc) converts
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "parpat/reduce.hpp"

#if defined(__CUDACC__)
#define PARPAT_HD __host__ __device__ __forceinline__
#else
#define PARPAT_HD inline
#endif

namespace parpat::detail {

template <class T>
PARPAT_HD bool is_nan_value(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

template <class T>
PARPAT_HD T highest_value() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

template <class T>
PARPAT_HD T lowest_value() {
  if constexpr (std::is_floating_point_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <class T>
struct ArgPair {
  T value;
  std::int64_t index;
};

// Sum and product widen: 64-bit wrapping integers, float64 for floats.
template <class T>
using WideAcc = std::conditional_t<std::is_floating_point_v<T>, double, std::uint64_t>;
template <class T>
using WideResult =
    std::conditional_t<std::is_floating_point_v<T>, T,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

template <class T>
struct SumOp {
  using Acc = WideAcc<T>;
  using Result = WideResult<T>;
  static PARPAT_HD Acc identity() { return Acc(0); }
  static PARPAT_HD Acc load(T v, std::int64_t) { return static_cast<Acc>(v); }
  static PARPAT_HD Acc combine(Acc a, Acc b) { return a + b; }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t i) { return combine(a, load(v, i)); }
  static PARPAT_HD Result result(Acc a) { return static_cast<Result>(a); }
};

template <class T>
struct ProdOp {
  using Acc = WideAcc<T>;
  using Result = WideResult<T>;
  static PARPAT_HD Acc identity() { return Acc(1); }
  static PARPAT_HD Acc load(T v, std::int64_t) { return static_cast<Acc>(v); }
  static PARPAT_HD Acc combine(Acc a, Acc b) { return a * b; }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t i) { return combine(a, load(v, i)); }
  static PARPAT_HD Result result(Acc a) { return static_cast<Result>(a); }
};

template <class T>
struct MinOp {
  using Acc = T;
  using Result = T;
  static PARPAT_HD Acc identity() { return highest_value<T>(); }
  static PARPAT_HD Acc load(T v, std::int64_t) { return v; }
  static PARPAT_HD Acc combine(Acc a, Acc b) {
    if (is_nan_value(a)) return a;
    if (is_nan_value(b)) return b;
    return b < a ? b : a;
  }
  // A NaN accumulator stays (v < NaN is false); a NaN element is taken.
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t) {
    return ((v < a) | is_nan_value(v)) ? v : a;
  }
  static PARPAT_HD Result result(Acc a) { return a; }
};

template <class T>
struct MaxOp {
  using Acc = T;
  using Result = T;
  static PARPAT_HD Acc identity() { return lowest_value<T>(); }
  static PARPAT_HD Acc load(T v, std::int64_t) { return v; }
  static PARPAT_HD Acc combine(Acc a, Acc b) {
    if (is_nan_value(a)) return a;
    if (is_nan_value(b)) return b;
    return b > a ? b : a;
  }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t) {
    return ((v > a) | is_nan_value(v)) ? v : a;
  }
  static PARPAT_HD Result result(Acc a) { return a; }
};

template <class T, bool kMin>
struct ArgOp {
  using Acc = ArgPair<T>;
  using Result = T;
  static PARPAT_HD Acc identity() {
    return {kMin ? highest_value<T>() : lowest_value<T>(),
            std::numeric_limits<std::int64_t>::max()};
  }
  static PARPAT_HD Acc load(T v, std::int64_t i) { return {v, i}; }
  static PARPAT_HD Acc combine(Acc a, Acc b) {
    bool a_nan = is_nan_value(a.value), b_nan = is_nan_value(b.value);
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a.index < b.index ? a : b;
      return a_nan ? a : b;
    }
    if (kMin ? a.value < b.value : a.value > b.value) return a;
    if (kMin ? b.value < a.value : b.value > a.value) return b;
    return a.index < b.index ? a : b;
  }
  // Whether element v displaces `best`, an element before it: a strictly better value, or the
  // first NaN.
  static PARPAT_HD bool beats(T v, T best) {
    bool better = kMin ? v < best : v > best;
    if constexpr (std::is_floating_point_v<T>) better |= (v != v) & (best == best);
    return better;
  }
  // Elements arrive in index order, so only one that beats the current best (or the very first
  // element) replaces it.
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t i) {
    bool better = beats(v, a.value) | (a.index == std::numeric_limits<std::int64_t>::max());
    return better ? Acc{v, i} : a;
  }
  static PARPAT_HD Result result(Acc a) { return a.value; }
};

template <class T>
using ArgMinOp = ArgOp<T, true>;
template <class T>
using ArgMaxOp = ArgOp<T, false>;

// Calls f(Op{}) with the operator type for `op` on element type T.
template <class T, class F>
decltype(auto) visit_reduce_op(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::sum:
      return f(SumOp<T>{});
    case ReduceOp::prod:
      return f(ProdOp<T>{});
    case ReduceOp::min:
      return f(MinOp<T>{});
    case ReduceOp::max:
      return f(MaxOp<T>{});
    case ReduceOp::argmin:
      return f(ArgMinOp<T>{});
    case ReduceOp::argmax:
      break;
  }
  return f(ArgMaxOp<T>{});
}

template <class Acc>
struct is_arg_pair : std::false_type {};
template <class T>
struct is_arg_pair<ArgPair<T>> : std::true_type {};

}  // namespace parpat::detail
