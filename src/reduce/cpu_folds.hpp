// The CPU reduce's folds of one contiguous run or a block of rows, private to reduce/cpu.cpp (the
// one file that includes it): in order in eight scalar accumulators (fold_run), in vector lanes
// (simd.hpp: AVX2 where the processor has it) for sum, nansum, min, max, the arg ops, the moment
// ops and nanmin/nanmax of the 4- and 8-byte types (fold), by columns (fold_columns), and
// the search for the element that decides a bool extreme, any or all.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
#include "runtime/cpu/simd.hpp"

namespace parpat::detail {
namespace {

constexpr int kLanes = 8;

// Folds elements [begin, end) of a contiguous run; `base` is the flattened index of p[0].
template <class Op, class T>
typename Op::Acc fold_run(const T* p, std::int64_t begin, std::int64_t end, std::int64_t base) {
  using Acc = typename Op::Acc;
  Acc lane[kLanes];
  for (auto& a : lane)
    a = Op::identity();
  std::int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      lane[j] = Op::append(lane[j], p[i + j], base + i + j);
  Acc acc = Op::identity();
  for (; i < end; ++i)
    acc = Op::append(acc, p[i], base + i);
  for (auto& a : lane)
    acc = Op::combine(acc, a);
  return acc;
}

// The sum of every lane of some vectors, in lane order, in their element type.
template <class V, std::size_t N>
PARPAT_CPU_INLINE auto lane_total(const V (&lanes)[N]) {
  std::remove_cv_t<std::remove_reference_t<decltype(lanes[0][0])>> total = 0;
  for (const V& l : lanes)
    for (std::size_t j = 0; j < sizeof(V) / sizeof(total); ++j)
      total += l[j];
  return total;
}

// nansum takes NaN lanes of a loaded vector as 0 (kSkipNan).
template <bool kSkipNan, class V>
PARPAT_CPU_INLINE void drop_nan_lanes(V& v) {
  if constexpr (kSkipNan) v = v == v ? v : V{};
}

// float32 sum (kSkipNan: nansum) in lanes. Four float vectors each add 16 loads in float; each
// block's lanes then move into double lanes. A float lane adds at most 16 values, so for data of
// one sign its relative error, the final rounding to float included, is below 16 · 2^-24 < 1e-6,
// inside the contract's 1e-6 · log2(n); the double lanes keep the long sum accurate.
template <int kBytes, bool kSkipNan>
PARPAT_CPU_INLINE double sum_float_lanes(const float* p, std::int64_t begin, std::int64_t end,
                                         std::int64_t& stop) {
  using F = simd::Vec<float, kBytes>;
  using Half = simd::Vec<float, kBytes / 2>;
  using D = simd::Vec<double, kBytes>;
  constexpr int kWidth = kBytes / 4, kSteps = 16, kVectors = 4, kBlock = kSteps * kVectors * kWidth;
  D wide[2] = {};
  std::int64_t i = begin;
  for (; i + kBlock <= end; i += kBlock) {
    F block[kVectors] = {};
    for (int s = 0; s < kSteps; ++s)
      for (int k = 0; k < kVectors; ++k) {
        F v;
        simd::load(v, p + i + (s * kVectors + k) * kWidth);
        drop_nan_lanes<kSkipNan>(v);
        block[k] += v;
      }
    for (int k = 0; k < kVectors; ++k) {
      Half half[2];
      std::memcpy(half, &block[k], sizeof half);
      wide[0] += __builtin_convertvector(half[0], D);
      wide[1] += __builtin_convertvector(half[1], D);
    }
  }
  stop = i;
  return lane_total(wide);
}

// Marks in `nans` the lanes of v that hold NaN (none for integers).
template <class V, class M>
PARPAT_CPU_INLINE void mark_nan_lanes(M& nans, const V& v) {
  if constexpr (std::is_floating_point_v<std::remove_reference_t<decltype(v[0])>>) nans |= v != v;
}

// float64 and integer sums (kSkipNan: float64 nansum) in four vectors of 8-byte lanes: double for
// float64, uint64 for the integers (wrapping like the operator's accumulator; 4-byte elements are
// sign- or zero-extended as they are converted).
template <int kBytes, bool kSkipNan, class T>
PARPAT_CPU_INLINE auto sum_wide_lanes(const T* p, std::int64_t begin, std::int64_t end,
                                      std::int64_t& stop) {
  using Wide =
      simd::Vec<std::conditional_t<std::is_same_v<T, double>, double, std::uint64_t>, kBytes>;
  constexpr int kWidth = kBytes / 8, kVectors = 4, kStep = kVectors * kWidth;
  Wide lane[kVectors] = {};
  std::int64_t i = begin;
  for (; i + kStep <= end; i += kStep)
    for (int k = 0; k < kVectors; ++k) {
      simd::Vec<T, kWidth * sizeof(T)> v;
      simd::load(v, p + i + k * kWidth);
      drop_nan_lanes<kSkipNan>(v);
      lane[k] += __builtin_convertvector(v, Wide);
    }
  stop = i;
  return lane_total(lane);
}

// The Moments of a run in float64 lanes: every lane accumulates d = x − shift and d² against
// one shift for the whole run (its first element, the first non-NaN one for the nan forms; 0
// for the mean), so the lanes add up without Chan's merge and the run gives one Moments for
// Op::combine. NaN elements of the nan forms count as nothing. A non-finite shift leaves the
// whole run to the scalar fold (stop = begin), which propagates NaN and inf as the operator does.
template <class Op, int kBytes, class T>
PARPAT_CPU_INLINE Moments moment_lanes(const T* p, std::int64_t begin, std::int64_t end,
                                       std::int64_t& stop) {
  using D = simd::Vec<double, kBytes>;
  using Count = simd::Vec<std::int64_t, kBytes>;
  constexpr bool kSkipNan = Op::kSkipsNan, kMeanOnly = Op::kMeanOnly;
  constexpr int kWidth = kBytes / 8, kVectors = 4, kStep = kVectors * kWidth;
  std::int64_t i = begin;
  if constexpr (kSkipNan)
    while (i < end && is_nan_value(p[i]))
      ++i;
  stop = begin;
  if (i == end) {
    stop = end;
    return Op::identity();
  }
  const double shift = kMeanOnly ? 0.0 : double(p[i]);
  if (!std::isfinite(shift)) return Op::identity();
  D shift_lanes, s[kVectors] = {}, q[kVectors] = {};
  simd::splat(shift_lanes, shift);
  Count nans = {};
  const std::int64_t first = i;
  for (; i + kStep <= end; i += kStep)
    for (int k = 0; k < kVectors; ++k) {
      simd::Vec<T, kWidth * sizeof(T)> raw;
      simd::load(raw, p + i + k * kWidth);
      D d = __builtin_convertvector(raw, D) - shift_lanes;
      if constexpr (kSkipNan) {
        const Count nan = d != d;
        d = nan ? D{} : d;
        nans -= nan;
      }
      s[k] += d;
      if constexpr (!kMeanOnly) q[k] += d * d;
    }
  stop = i;
  std::int64_t skipped = 0;
  for (int j = 0; j < kWidth; ++j)
    skipped += nans[j];
  const double n = static_cast<double>(i - first - skipped);
  if (n == 0) return Op::identity();
  return {n, shift, lane_total(s), kMeanOnly ? 0.0 : lane_total(q)};
}

// best = v where v is strictly better (lane by lane for vectors); NaN is never better.
template <bool kMin, class V>
PARPAT_CPU_INLINE void keep_better(V& best, const V& v) {
  best = (kMin ? v < best : v > best) ? v : best;
}

// min/max in lanes; `nan` reports whether a NaN was seen (the caller then folds the range again
// in order, so NaN handling is exactly the scalar operator's). With kSkipNan (nanmin, nanmax),
// NanExtremeOp::append lane by lane instead: a lane still holding NaN (nothing seen yet) takes the
// next value and a NaN value never replaces a number, so no range needs folding again.
template <bool kMin, bool kSkipNan, int kBytes, class T>
PARPAT_CPU_INLINE T extreme_lanes(const T* p, std::int64_t begin, std::int64_t end,
                                  std::int64_t& stop, bool& nan) {
  using L = simd::Lanes<T, kBytes>;
  constexpr int kVectors = 4, kStep = kVectors * L::kWidth;
  typename L::V best[kVectors];
  typename L::Mask nans = {};
  for (int k = 0; k < kVectors; ++k) {
    simd::load(best[k], p + begin + k * L::kWidth);
    if constexpr (!kSkipNan) mark_nan_lanes(nans, best[k]);
  }
  std::int64_t i = begin + kStep;
  for (; i + kStep <= end; i += kStep)
    for (int k = 0; k < kVectors; ++k) {
      typename L::V v;
      simd::load(v, p + i + k * L::kWidth);
      if constexpr (kSkipNan) {
        best[k] = ((kMin ? v < best[k] : v > best[k]) | (best[k] != best[k])) ? v : best[k];
      } else {
        keep_better<kMin>(best[k], v);
        mark_nan_lanes(nans, v);
      }
    }
  stop = i;
  nan = !kSkipNan && simd::any(nans);
  T result = kSkipNan ? NanExtremeOp<T, kMin>::identity() : best[0][0];
  for (int k = 0; k < kVectors; ++k)
    for (int j = 0; j < L::kWidth; ++j) {
      if constexpr (kSkipNan) {
        result = NanExtremeOp<T, kMin>::combine(result, best[k][j]);
      } else {
        keep_better<kMin>(result, best[k][j]);
      }
    }
  return result;
}

// argmin/argmax (and nanargmin/nanargmax, which agree with them on a range without NaN) in one
// pass of blocks: each block of kBlock values reduces to its extreme in lanes, and a block
// strictly better than every block before it records where it starts, so ties keep the earliest
// block. Only that block is read again, for the first index holding the extreme (-0.0 and 0.0
// compare equal in both steps, as in the operator). `nan` as for extreme_lanes, the tail
// included: the caller folds a range with NaN again in order. Any range of at least one value
// works; ranges shorter than a block go through the tail loop alone.
template <class Op, int kBytes, class T>
PARPAT_CPU_INLINE typename Op::Acc arg_lanes(const T* p, std::int64_t begin, std::int64_t end,
                                             std::int64_t base, bool& nan) {
  using L = simd::Lanes<T, kBytes>;
  using V = typename L::V;
  constexpr bool kMin = std::is_same_v<Op, ArgMinOp<T>> || std::is_same_v<Op, NanArgOp<T, true>>;
  constexpr int kVectors = 4, kSteps = 8, kBlock = kVectors * kSteps * L::kWidth;
  typename L::Mask nans = {};
  T best = p[begin];
  std::int64_t block_of_best = begin, index_of_best = -1;
  std::int64_t i = begin;
  for (; i + kBlock <= end; i += kBlock) {
    V lane[kVectors];
    for (int k = 0; k < kVectors; ++k) {
      simd::load(lane[k], p + i + k * L::kWidth);
      mark_nan_lanes(nans, lane[k]);
    }
    for (int s = 1; s < kSteps; ++s)
      for (int k = 0; k < kVectors; ++k) {
        V v;
        simd::load(v, p + i + (s * kVectors + k) * L::kWidth);
        keep_better<kMin>(lane[k], v);
        mark_nan_lanes(nans, v);
      }
    for (int k = 1; k < kVectors; ++k)
      keep_better<kMin>(lane[0], lane[k]);
    T block_best = lane[0][0];
    for (int j = 1; j < L::kWidth; ++j)
      keep_better<kMin>(block_best, lane[0][j]);
    if (kMin ? block_best < best : block_best > best) {
      best = block_best;
      block_of_best = i;
    }
  }
  nan = simd::any(nans);
  for (; i < end && !nan; ++i) {
    nan = is_nan_value(p[i]);
    if (kMin ? p[i] < best : p[i] > best) {
      best = p[i];
      index_of_best = i;
    }
  }
  if (nan) return Op::identity();
  if (index_of_best < 0) {
    index_of_best = block_of_best;
    while (!(p[index_of_best] == best))
      ++index_of_best;
  }
  return Op::load(p[index_of_best], base + index_of_best);
}

template <class Op, class T>
constexpr bool kIsNanExtreme =
    std::is_same_v<Op, NanExtremeOp<T, true>> || std::is_same_v<Op, NanExtremeOp<T, false>>;

// nansum of float32 and float64 (nanprod stays in order).
template <class Op, class T>
constexpr bool kIsNanSum = std::is_same_v<Op, NanSumOp<T, false>>;

template <class Op, class T>
constexpr bool kIsNanArg =
    std::is_same_v<Op, NanArgOp<T, true>> || std::is_same_v<Op, NanArgOp<T, false>>;

// Whether Op on T has a lane form above: sum, nansum, min, max, the arg ops, nanmin, nanmax and
// the moment ops on the 4- and 8-byte element types.
template <class Op, class T>
constexpr bool kHasLanes = (sizeof(T) == 4 || sizeof(T) == 8) &&
                           (std::is_same_v<Op, SumOp<T>> || kIsNanSum<Op, T> ||
                            std::is_same_v<Op, MinOp<T>> || std::is_same_v<Op, MaxOp<T>> ||
                            std::is_same_v<Op, ArgMinOp<T>> || std::is_same_v<Op, ArgMaxOp<T>> ||
                            kIsNanExtreme<Op, T> || kIsNanArg<Op, T> || is_moments_op<Op>::value);

// Folds [begin, end) in lanes, then the tail in order; a range with a NaN is folded again in
// order (min/max/arg ops). Needs at least one step of extreme_lanes (fold() passes 256 values
// or more).
template <class Op, int kBytes, class T>
PARPAT_CPU_INLINE typename Op::Acc fold_lanes(const T* p, std::int64_t begin, std::int64_t end,
                                              std::int64_t base) {
  using Acc = typename Op::Acc;
  std::int64_t stop = begin;
  bool nan = false;
  Acc acc;
  if constexpr (std::is_same_v<Op, SumOp<T>> || kIsNanSum<Op, T>) {
    if constexpr (std::is_same_v<T, float>) {
      acc = sum_float_lanes<kBytes, kIsNanSum<Op, T>>(p, begin, end, stop);
    } else {
      acc = sum_wide_lanes<kBytes, kIsNanSum<Op, T>>(p, begin, end, stop);
    }
  } else if constexpr (is_moments_op<Op>::value) {
    acc = moment_lanes<Op, kBytes>(p, begin, end, stop);
  } else if constexpr (std::is_same_v<Op, MinOp<T>> || std::is_same_v<Op, MaxOp<T>>) {
    acc = extreme_lanes<std::is_same_v<Op, MinOp<T>>, false, kBytes>(p, begin, end, stop, nan);
  } else if constexpr (kIsNanExtreme<Op, T>) {
    acc = extreme_lanes<std::is_same_v<Op, NanExtremeOp<T, true>>, true, kBytes>(p, begin, end,
                                                                                 stop, nan);
  } else {
    acc = arg_lanes<Op, kBytes>(p, begin, end, base, nan);
    stop = end;
  }
  if (nan) return fold_run<Op>(p, begin, end, base);
  return Op::combine(acc, fold_run<Op>(p, stop, end, base));
}

template <class Op, class T>
PARPAT_CPU_AVX2 typename Op::Acc fold_lanes_avx2(const T* p, std::int64_t begin, std::int64_t end,
                                                 std::int64_t base) {
  return fold_lanes<Op, simd::kAvx2Bytes>(p, begin, end, base);
}

template <class Op, class T>
typename Op::Acc fold_lanes_baseline(const T* p, std::int64_t begin, std::int64_t end,
                                     std::int64_t base) {
  return fold_lanes<Op, simd::kBaselineBytes>(p, begin, end, base);
}

// Folds a contiguous run: in lanes where Op has them and the run holds at least 256 values (the
// largest arg block, and enough for the first loads of min/max), else in order.
template <class Op, class T>
typename Op::Acc fold(const T* p, std::int64_t begin, std::int64_t end, std::int64_t base) {
  if constexpr (kHasLanes<Op, T>) {
    constexpr std::int64_t kShortest = 256;
    if (end - begin >= kShortest)
      return simd::cpu_has_avx2() ? fold_lanes_avx2<Op>(p, begin, end, base)
                                  : fold_lanes_baseline<Op>(p, begin, end, base);
  }
  return fold_run<Op>(p, begin, end, base);
}

// Adds rows [first, last) of a 2-D input into per-column accumulators (axis cols); the loop over
// columns vectorises for the sum, min and max operators. A float32 sum first adds 16 rows into
// float partials (`scratch`, cols floats, small enough to stay in L1 beside the rows streaming
// through), then widens them into the double accumulators: the error argument of
// sum_float_lanes, and a sixth of the accumulator traffic.
template <class Op, class T>
PARPAT_CPU_INLINE void fold_columns(const T* x, std::int64_t row_stride, std::int64_t first,
                                    std::int64_t last, std::int64_t cols, typename Op::Acc* acc,
                                    float* scratch) {
  std::int64_t r = first;
  if constexpr (std::is_same_v<Op, SumOp<float>>) {
    constexpr std::int64_t kRows = 16;
    for (; r + kRows <= last; r += kRows) {
      std::copy(x + r * row_stride, x + r * row_stride + cols, scratch);
      for (std::int64_t k = 1; k < kRows; ++k) {
        const float* row = x + (r + k) * row_stride;
        for (std::int64_t c = 0; c < cols; ++c)
          scratch[c] += row[c];
      }
      for (std::int64_t c = 0; c < cols; ++c)
        acc[c] += static_cast<double>(scratch[c]);
    }
  }
  for (; r < last; ++r) {
    const T* row = x + r * row_stride;
    for (std::int64_t c = 0; c < cols; ++c)
      acc[c] = Op::append(acc[c], row[c], r);
  }
}

template <class Op, class T>
PARPAT_CPU_AVX2 void fold_columns_avx2(const T* x, std::int64_t row_stride, std::int64_t first,
                                       std::int64_t last, std::int64_t cols, typename Op::Acc* acc,
                                       float* scratch) {
  fold_columns<Op>(x, row_stride, first, last, cols, acc, scratch);
}

template <class Op, class T>
void fold_columns_baseline(const T* x, std::int64_t row_stride, std::int64_t first,
                           std::int64_t last, std::int64_t cols, typename Op::Acc* acc,
                           float* scratch) {
  fold_columns<Op>(x, row_stride, first, last, cols, acc, scratch);
}

// bool's max, any and argmax are decided by its first true element, its min, all and argmin by
// its first false one (numpy stops there too): +1 where Op looks for a true element, −1 for a
// false one, 0 for every other op and type.
template <class Op, class T>
constexpr int kBoolSearch =
    !std::is_same_v<T, bool> ? 0
    : std::is_same_v<Op, MaxOp<bool>> || std::is_same_v<Op, ArgMaxOp<bool>> ||
            std::is_same_v<Op, AnyAllOp<bool, false>>
        ? 1
    : std::is_same_v<Op, MinOp<bool>> || std::is_same_v<Op, ArgMinOp<bool>> ||
            std::is_same_v<Op, AnyAllOp<bool, true>>
        ? -1
        : 0;

// The first byte of [b, e) that is non-zero (kTrue) or zero, or e; 32 bytes a step while none is.
template <bool kTrue>
std::int64_t first_byte(const unsigned char* p, std::int64_t b, std::int64_t e) {
  if constexpr (!kTrue) {
    const void* hit = std::memchr(p + b, 0, static_cast<std::size_t>(e - b));
    return hit ? static_cast<const unsigned char*>(hit) - p : e;
  } else {
    std::int64_t i = b;
    for (; i + 32 <= e; i += 32) {
      std::uint64_t w[4];
      std::memcpy(w, p + i, sizeof w);
      if (w[0] | w[1] | w[2] | w[3]) break;
    }
    for (; i < e; ++i)
      if (p[i]) return i;
    return e;
  }
}

}  // namespace
}  // namespace parpat::detail
