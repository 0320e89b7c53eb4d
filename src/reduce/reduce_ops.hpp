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
// The nan-ops are their plain op with NaN elements skipped (integer inputs have none, so they
// take the plain op). The moment ops (mean, var, std and their nan forms) keep Moments and
// report them raw: finish_moments turns them into the statistic once every fold is done.
// The 16-bit floats run the float32 operators (Widened): each element widens as it is loaded,
// and a result of the element's type is rounded once from the accumulator.
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

// Sum and product widen: 64-bit wrapping integers (int64 for signed input and bool, as numpy),
// float64 for floats.
template <class T>
using WideAcc = std::conditional_t<std::is_floating_point_v<T>, double, std::uint64_t>;
template <class T>
using WideResult =
    std::conditional_t<std::is_floating_point_v<T>, T,
                       std::conditional_t<std::is_signed_v<T> || std::is_same_v<T, bool>,
                                          std::int64_t, std::uint64_t>>;

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

template <class T>
struct CountNonzeroOp {
  using Acc = std::uint64_t;
  using Result = std::int64_t;
  static PARPAT_HD Acc identity() { return 0; }
  static PARPAT_HD Acc load(T v, std::int64_t) { return v != T(0) ? 1 : 0; }
  static PARPAT_HD Acc combine(Acc a, Acc b) { return a + b; }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t i) { return a + load(v, i); }
  static PARPAT_HD Result result(Acc a) { return static_cast<Result>(a); }
};

// Whether any element is non-zero (kAll false) or every one is (kAll true): an OR or an AND
// of the elements' truth (NaN is non-zero), as numpy's any and all.
template <class T, bool kAll>
struct AnyAllOp {
  using Acc = std::uint32_t;
  using Result = bool;
  static PARPAT_HD Acc identity() { return kAll ? 1u : 0u; }
  static PARPAT_HD Acc load(T v, std::int64_t) { return v != T(0) ? 1u : 0u; }
  static PARPAT_HD Acc combine(Acc a, Acc b) { return kAll ? a & b : a | b; }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t i) { return combine(a, load(v, i)); }
  static PARPAT_HD Result result(Acc a) { return a != 0; }
};

// Sum or product in float64 with NaN elements counted as the identity (float input only).
template <class T, bool kProduct>
struct NanSumOp {
  using Acc = double;
  using Result = T;
  static PARPAT_HD Acc identity() { return kProduct ? 1.0 : 0.0; }
  static PARPAT_HD Acc load(T v, std::int64_t) { return v != v ? identity() : double(v); }
  static PARPAT_HD Acc combine(Acc a, Acc b) { return kProduct ? a * b : a + b; }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t i) { return combine(a, load(v, i)); }
  static PARPAT_HD Result result(Acc a) { return static_cast<Result>(a); }
};

// min or max skipping NaN (float input only): NaN is "nothing yet", so an all-NaN input stays
// NaN, as numpy's nanmin returns.
template <class T, bool kMin>
struct NanExtremeOp {
  using Acc = T;
  using Result = T;
  static PARPAT_HD Acc identity() { return std::numeric_limits<T>::quiet_NaN(); }
  static PARPAT_HD Acc load(T v, std::int64_t) { return v; }
  static PARPAT_HD Acc combine(Acc a, Acc b) {
    if (a != a) return b;
    if (b != b) return a;
    return (kMin ? b < a : b > a) ? b : a;
  }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t) {
    return ((kMin ? v < a : v > a) | (a != a)) ? v : a;
  }
  static PARPAT_HD Result result(Acc a) { return a; }
};

// argmin or argmax skipping NaN (float input only): the first extreme among the other elements;
// an all-NaN input keeps the index INT64_MAX, which the caller reports as numpy's error.
template <class T, bool kMin>
struct NanArgOp {
  using Acc = ArgPair<T>;
  using Result = T;
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  static PARPAT_HD Acc identity() { return {std::numeric_limits<T>::quiet_NaN(), kNone}; }
  static PARPAT_HD Acc load(T v, std::int64_t i) { return v != v ? identity() : Acc{v, i}; }
  static PARPAT_HD Acc combine(Acc a, Acc b) {
    if (a.index == kNone) return b;
    if (b.index == kNone) return a;
    if (kMin ? a.value < b.value : a.value > b.value) return a;
    if (kMin ? b.value < a.value : b.value > a.value) return b;
    return a.index < b.index ? a : b;
  }
  // Whether element v displaces `best`, an element before it (NaN never does; anything
  // displaces a NaN best, which holds nothing).
  static PARPAT_HD bool beats(T v, T best) {
    return (v == v) & ((kMin ? v < best : v > best) | (best != best));
  }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t i) {
    return beats(v, a.value) ? Acc{v, i} : a;
  }
  static PARPAT_HD Result result(Acc a) { return a.value; }
};

// n elements in float64 with s = Σ(x − shift) and q = Σ(x − shift)²: elements accumulate
// against the first one a fold saw (one subtraction, one add, one multiply-add each, and
// the cancellation in q − s²/n stays small because the shift is a sample of the data); folds
// merge by Chan's update into shift = mean, s = 0, q = M2.
struct Moments {
  double n, shift, s, q;
};

PARPAT_HD double moments_mean(const Moments& m) {
  return m.shift + m.s / m.n;
}
PARPAT_HD double moments_m2(const Moments& m) {
  return m.q - m.s * (m.s / m.n);
}

// Moments of the elements (kSkipNan: of the non-NaN elements).
template <class T, bool kSkipNan>
struct MomentsOp {
  using Acc = Moments;
  using Result = Moments;
  static constexpr bool kSkipsNan = kSkipNan, kMeanOnly = false;
  static PARPAT_HD Acc identity() { return {0, 0, 0, 0}; }
  static PARPAT_HD Acc load(T v, std::int64_t) {
    if (kSkipNan && v != v) return identity();
    // 0 · v: a NaN or infinite first element makes M2 NaN, as numpy's var of it is.
    return {1, double(v), 0, 0 * double(v)};
  }
  static PARPAT_HD Acc combine(Acc a, Acc b) {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = a.n + b.n, mean_a = moments_mean(a), delta = moments_mean(b) - mean_a;
    return {n, mean_a + delta * (b.n / n), 0,
            moments_m2(a) + moments_m2(b) + delta * delta * (a.n * (b.n / n))};
  }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t i) {
    if (kSkipNan && v != v) return a;
    if (a.n == 0) return load(v, i);
    const double d = double(v) - a.shift;
    return {a.n + 1, a.shift, a.s + d, d * d + a.q};  // an FMA where the compiler may fuse
  }
  static PARPAT_HD Result result(Acc a) { return a; }
};

// The mean alone: a float64 sum and a count (shift and q stay 0), so infinities give numpy's
// inf or NaN.
template <class T, bool kSkipNan>
struct MeanOp {
  using Acc = Moments;
  using Result = Moments;
  static constexpr bool kSkipsNan = kSkipNan, kMeanOnly = true;
  static PARPAT_HD Acc identity() { return {0, 0, 0, 0}; }
  static PARPAT_HD Acc load(T v, std::int64_t) {
    if (kSkipNan && v != v) return identity();
    return {1, 0, double(v), 0};
  }
  static PARPAT_HD Acc combine(Acc a, Acc b) { return {a.n + b.n, 0, a.s + b.s, 0}; }
  static PARPAT_HD Acc append(Acc a, T v, std::int64_t i) {
    if (kSkipNan && v != v) return a;
    return {a.n + 1, 0, a.s + double(v), 0};
  }
  static PARPAT_HD Result result(Acc a) { return a; }
};

// The type mean, var and std report for element type T: the float itself (float16 and bfloat16
// included, as reduce_result_dtype says), float64 for integers.
template <class T>
using StatisticResult = std::conditional_t<is_float_type<T>, T, double>;

template <class Op>
struct is_moments_op : std::false_type {};
template <class T, bool kSkipNan>
struct is_moments_op<MomentsOp<T, kSkipNan>> : std::true_type {};
template <class T, bool kSkipNan>
struct is_moments_op<MeanOp<T, kSkipNan>> : std::true_type {};

enum class Statistic { mean, var, std };

// The statistic `op` reports from its Moments, as numpy computes it: var divides M2 by
// max(n − ddof, 0) (a positive M2 then gives inf and a zero one NaN); nanvar and nanstd give NaN
// whenever n − ddof ≤ 0; no element at all gives NaN.
PARPAT_HD double finish_moments(const Moments& m, Statistic stat, double ddof, bool nan_op) {
  if (stat == Statistic::mean) return moments_mean(m);
  const double dof = m.n - ddof;
  if (m.n == 0 || (nan_op && dof <= 0)) return std::numeric_limits<double>::quiet_NaN();
  const double var = moments_m2(m) / (dof > 0 ? dof : 0.0);
  return stat == Statistic::std ? sqrt(var) : var;
}

template <class H, class F>
decltype(auto) visit_widened_op(ReduceOp op, F&& f, bool basic);

// Calls f(Op{}) for the six basic ops (sum, prod, min, max, argmin, argmax), the ones every
// variant implements; any other op is taken as argmax, so callers check is_basic_reduce_op.

template <class T, class F>
decltype(auto) visit_basic_reduce_op(ReduceOp op, F&& f) {
  if constexpr (is_float16_type<T>) {
    return visit_widened_op<T>(op, std::forward<F>(f), true);
  } else {
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
      default:
        break;
    }
    return f(ArgMaxOp<T>{});
  }
}

// Calls f(Op{}) with the operator type for `op` on element type T.
template <class T, class F>
decltype(auto) visit_reduce_op(ReduceOp op, F&& f) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  if constexpr (is_float16_type<T>) {
    return visit_widened_op<T>(op, std::forward<F>(f), false);
  } else {
    switch (op) {
      case ReduceOp::mean:
        return f(MeanOp<T, false>{});
      case ReduceOp::nanmean:
        return f(MeanOp<T, kFloat>{});
      case ReduceOp::var:
      case ReduceOp::std:
        return f(MomentsOp<T, false>{});
      case ReduceOp::nanvar:
      case ReduceOp::nanstd:
        return f(MomentsOp<T, kFloat>{});
      case ReduceOp::count_nonzero:
        return f(CountNonzeroOp<T>{});
      case ReduceOp::any:
        return f(AnyAllOp<T, false>{});
      case ReduceOp::all:
        return f(AnyAllOp<T, true>{});
      case ReduceOp::nansum:
        if constexpr (kFloat)
          return f(NanSumOp<T, false>{});
        else
          return f(SumOp<T>{});
      case ReduceOp::nanprod:
        if constexpr (kFloat)
          return f(NanSumOp<T, true>{});
        else
          return f(ProdOp<T>{});
      case ReduceOp::nanmin:
        if constexpr (kFloat)
          return f(NanExtremeOp<T, true>{});
        else
          return f(MinOp<T>{});
      case ReduceOp::nanmax:
        if constexpr (kFloat)
          return f(NanExtremeOp<T, false>{});
        else
          return f(MaxOp<T>{});
      case ReduceOp::nanargmin:
        if constexpr (kFloat)
          return f(NanArgOp<T, true>{});
        else
          return f(ArgMinOp<T>{});
      case ReduceOp::nanargmax:
        if constexpr (kFloat)
          return f(NanArgOp<T, false>{});
        else
          return f(ArgMaxOp<T>{});
      default:
        return visit_basic_reduce_op<T>(op, std::forward<F>(f));
    }
  }
}

template <class Acc>
struct is_arg_pair : std::false_type {};
template <class T>
struct is_arg_pair<ArgPair<T>> : std::true_type {};

// Op (an operator on float) for elements stored as the 16-bit float H: elements widen to float
// as they are loaded, and a float result is rounded to H once, from the accumulator itself (the
// double of a sum, so the sum is rounded only there).
template <class Op, class H>
struct Widened {
  using Acc = typename Op::Acc;
  using Result =
      std::conditional_t<std::is_same_v<typename Op::Result, float>, H, typename Op::Result>;
  static PARPAT_HD float widen(H v) { return static_cast<float>(v); }
  static PARPAT_HD Acc identity() { return Op::identity(); }
  static PARPAT_HD Acc load(H v, std::int64_t i) { return Op::load(widen(v), i); }
  static PARPAT_HD Acc combine(Acc a, Acc b) { return Op::combine(a, b); }
  static PARPAT_HD Acc append(Acc a, H v, std::int64_t i) { return Op::append(a, widen(v), i); }
  static PARPAT_HD bool beats(H v, H best) { return Op::beats(widen(v), widen(best)); }
  static PARPAT_HD Result result(Acc a) {
    if constexpr (!std::is_same_v<Result, H>) {
      return Op::result(a);
    } else if constexpr (is_arg_pair<Acc>::value) {
      return H(a.value);
    } else {
      return H(a);
    }
  }
};

template <class Op, class H>
struct is_moments_op<Widened<Op, H>> : is_moments_op<Op> {};

// Calls f(Op{}) with the operator type for `op` on the 16-bit float H: the float operator,
// Widened.
template <class H, class F>
decltype(auto) visit_widened_op(ReduceOp op, F&& f, bool basic) {
  auto wrap = [&](auto o) -> decltype(auto) { return f(Widened<decltype(o), H>{}); };
  if (basic) return visit_basic_reduce_op<float>(op, wrap);
  return visit_reduce_op<float>(op, wrap);
}

}  // namespace parpat::detail
