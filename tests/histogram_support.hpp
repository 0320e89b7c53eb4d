// What the histogram tests share: the plan-level problem of resolved bins, the dtypes, values
// drawn for a dtype and a range that suits it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "parpat/histogram.hpp"

namespace parpat::test {

inline detail::HistogramProblem problem_of(DType t, std::int64_t n, const HistogramBins& b) {
  detail::HistogramProblem p;
  p.dtype = t;
  p.n = n;
  p.even = b.kind == HistogramBins::Kind::even;
  p.bins = b.count;
  p.lo = b.lo;
  p.hi = b.hi;
  if (!p.even) p.edges = b.edges;
  return p;
}

inline constexpr DType kDTypes[] = {DType::boolean, DType::int8,    DType::uint8,  DType::int16,
                                    DType::uint16,  DType::int32,   DType::uint32, DType::int64,
                                    DType::uint64,  DType::float32, DType::float64};

// n values of t drawn from `draw` (a double, converted to t).
template <class Draw>
inline std::vector<unsigned char> make_values(DType t, std::int64_t n, Draw draw) {
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(t));
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(out.data());
    for (std::int64_t i = 0; i < n; ++i)
      p[i] = static_cast<T>(draw());
  });
  return out;
}

// A range suited to dtype t: the integer types' values, [−1, 1] for floats.
inline std::pair<double, double> range_for(DType t) {
  switch (t) {
    case DType::boolean:
      return {0, 1};
    case DType::int8:
      return {-100, 90};
    case DType::uint8:
      return {3, 250};
    case DType::int16:
      return {-20000, 30000};
    case DType::uint16:
      return {100, 60000};
    case DType::int32:
      return {-100000, 100000};
    case DType::uint32:
      return {1000, 4e9};
    case DType::int64:
      return {-3e15, 5e15};
    case DType::uint64:
      return {1e6, 1.5e19};
    default:
      return {-0.75, 0.9};
  }
}

// v as a value of integer dtype t (rounded, clamped to the type's range); floats unchanged.
inline double fit(DType t, double v) {
  if (is_float(t)) return v;
  double lo = 0, hi = 1.8e19;  // 64-bit bounds that convert back exactly
  visit_dtype(t, [&](auto x) {
    using T = decltype(x);
    if constexpr (sizeof(T) < 8) {
      lo = static_cast<double>(std::numeric_limits<T>::min());
      hi = static_cast<double>(std::numeric_limits<T>::max());
    } else if constexpr (std::is_signed_v<T>) {
      lo = -9e18;
      hi = 9e18;
    }
  });
  return std::clamp(std::round(v), lo, hi);
}

}  // namespace parpat::test
