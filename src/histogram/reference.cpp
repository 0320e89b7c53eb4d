// The histogram reference: every value converted to float64 (64-bit integers rounded to the
// nearest, a bool's byte to 0 or 1) and placed by a binary search over the float64 edges
// (histogram_internal.hpp's reference_slot), one at a time, in order; a weighted histogram adds
// each value's float64 weight to its slot in the same order.
#include <cfloat>
#include <limits>
#include <type_traits>

#include "histogram/histogram_internal.hpp"

namespace parpat::detail {

void histogram_reference(const void* in, const HistogramProblem& p, std::uint64_t* counts) {
  std::fill(counts, counts + p.slots(), std::uint64_t{0});
  visit_dtype(p.dtype, [&](auto t) {
    using T = kernel_element_t<decltype(t)>;
    const T* x = static_cast<const T*>(in);
    for (std::int64_t i = 0; i < p.n; ++i) {
      if constexpr (std::is_same_v<T, decltype(t)>) {
        ++counts[reference_slot(p, static_cast<double>(x[i]))];
      } else {
        ++counts[reference_slot(p, table_value(p.dtype, x[i]))];
      }
    }
  });
}

void weighted_histogram_reference(const void* in, const void* weights, const HistogramProblem& p,
                                  double* sums) {
  std::fill(sums, sums + p.slots(), 0.0);
  visit_dtype(p.dtype, [&](auto t) {
    using T = kernel_element_t<decltype(t)>;
    const T* x = static_cast<const T*>(in);
    for (std::int64_t i = 0; i < p.n; ++i) {
      double value = 0;
      if constexpr (std::is_same_v<T, decltype(t)>) {
        value = static_cast<double>(x[i]);
      } else {
        value = table_value(p.dtype, x[i]);
      }
      sums[reference_slot(p, value)] += weight_at(weights, p.weights, i);
    }
  });
}

std::vector<std::uint32_t> slot_table(const HistogramProblem& p) {
  std::size_t values = dtype_size(p.dtype) == 1 ? 256 : 65536;
  std::vector<std::uint32_t> table(values);
  for (std::size_t v = 0; v < values; ++v)
    table[v] = static_cast<std::uint32_t>(
        reference_slot(p, table_value(p.dtype, static_cast<unsigned>(v))));
  return table;
}

namespace {

// The smallest float ≥ v (v finite and within the float range).
float float_at_or_above(double v) {
  float f = static_cast<float>(v);
  while (static_cast<double>(f) < v)
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  while (static_cast<double>(std::nextafter(f, -std::numeric_limits<float>::infinity())) >= v)
    f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}

// The largest float ≤ v.
float float_at_or_below(double v) {
  return -float_at_or_above(-v);
}

// Whether norm = bins / (hi − lo) is exactly a power of two (and so the bin width).
bool power_of_two(const HistogramProblem& p, double norm) {
  int exponent = 0;
  return std::frexp(norm, &exponent) == 0.5 && norm * (p.hi - p.lo) == static_cast<double>(p.bins);
}

// Whether lo and hi are integers within ±2^24.
bool integer_ends(const HistogramProblem& p) {
  const double limit = std::ldexp(1.0, 24);
  return std::floor(p.lo) == p.lo && std::floor(p.hi) == p.hi && std::fabs(p.lo) <= limit &&
         std::fabs(p.hi) <= limit;
}

// Whether t = (x − lo)·norm is computed without rounding for every value of p's dtype that can
// reach the range, with numpy's edges exactly lo + i/norm: then floor(t) is every such value's
// bin. norm must be a power of two. Integers of up to 4 bytes (a 32-bit one beyond 2^24 is never
// taken as exact) need integer lo and hi at most 2^24 apart and within ±2^24, so x − lo is an
// exact float inside the range and keeps its sign and order outside it. float16 needs lo = 0
// and norm ≥ 1, so x·norm is never subnormal (the smallest float16 is 2^-24). float32 and
// bfloat16 need the same and arithmetic that keeps subnormals (`ieee_subnormals`): x·norm is
// then exact for every x, a subnormal one scaled up too, and a product past FLT_MAX is +inf for
// a value beyond hi; flushed to zero, a negative subnormal would land in bin 0.
bool exact_arithmetic(const HistogramProblem& p, double norm, bool ieee_subnormals) {
  if (!power_of_two(p, norm)) return false;
  if (p.dtype == DType::float16) return p.lo == 0 && norm >= 1;
  if (p.dtype == DType::float32 || p.dtype == DType::bfloat16)
    return ieee_subnormals && p.lo == 0 && norm >= 1;
  const bool small_integer = !is_float(p.dtype) && dtype_size(p.dtype) <= 4;
  return small_integer && integer_ends(p) && p.hi - p.lo <= std::ldexp(1.0, 24);
}

}  // namespace

FloatEvenRule::FloatEvenRule(const HistogramProblem& p, bool ieee_subnormals) {
  bins = static_cast<int>(std::min<std::int64_t>(p.bins, 1 << 30));
  // x − lo must stay finite in float for every x in [lo, hi] (with room for lo's rounding).
  if (!p.even || p.bins > (1 << 22) || !(std::fabs(p.lo) <= FLT_MAX) ||
      !(std::fabs(p.hi) <= FLT_MAX) || !(p.hi - p.lo <= 0.5 * FLT_MAX))
    return;
  const double n = static_cast<double>(p.bins);
  const double exact_norm = n / (p.hi - p.lo);
  const double abs_lo = std::fabs(p.lo), abs_hi = std::fabs(p.hi);
  // |t − t*| ≤ 2^-24·(3.01·N + 1.01·norm·|lo|): the rounding of lo to float, of x − lo and of
  // the product with norm (itself rounded); the float64 edges sit within
  // (|lo| + |hi|)·2^-50 of their ideal places, norm·that in units of t.
  double bound = std::ldexp(3.01 * n + 1.01 * exact_norm * abs_lo, -24) +
                 std::ldexp(exact_norm * (abs_lo + abs_hi), -50);
  bound = bound * (1 + 1e-6) + std::ldexp(1.0, -40);
  if (!(bound < 0.25) || !std::isfinite(exact_norm) || exact_norm > FLT_MAX) return;
  lo_up = float_at_or_above(p.lo);
  hi_down = float_at_or_below(p.hi);
  lo = static_cast<float>(p.lo);
  norm = static_cast<float>(exact_norm);
  // A multiple of 2^-24, so that 1 − delta is exactly a float: kernels compute it.
  delta = static_cast<float>(std::ldexp(std::ceil(std::ldexp(bound, 24)), -24));
  // Exact arithmetic: no value needs a correction but those the rules test apart (NaN, hi).
  if (exact_arithmetic(p, exact_norm, ieee_subnormals)) delta = -1.0f;
  usable = std::isfinite(lo) && norm > 0;
}

Float64EvenRule::Float64EvenRule(const HistogramProblem& p) {
  if (!p.even || p.bins > (1 << 22) || !std::isfinite(p.lo) || !std::isfinite(p.hi - p.lo)) return;
  const double n = static_cast<double>(p.bins);
  const double exact_norm = n / (p.hi - p.lo);  // as EvenRule's norm
  if (!(exact_norm > 0) || !std::isfinite(exact_norm)) return;
  double bound = std::ldexp(3.01 * (n + 1), -53) +
                 std::ldexp(exact_norm * (std::fabs(p.lo) + std::fabs(p.hi)), -50);
  bound = bound * (1 + 1e-6) + std::ldexp(1.0, -60);
  if (!(bound < 0.25)) return;
  lo = p.lo;
  norm = exact_norm;
  bins = static_cast<int>(p.bins);
  delta = std::ldexp(std::ceil(std::ldexp(bound, 52)), -52);
  usable = true;
}

IntegerShiftRule::IntegerShiftRule(const HistogramProblem& p) {
  const bool integer =
      p.dtype == DType::int16 || p.dtype == DType::uint16 || p.dtype == DType::int32;
  const double norm = static_cast<double>(p.bins) / (p.hi - p.lo);
  if (!integer || !p.even || p.bins > (1 << 22) || !integer_ends(p) || !power_of_two(p, norm))
    return;
  int exponent = 0;
  std::frexp(norm, &exponent);  // norm = 2^(exponent − 1): rows per unit of x
  lo = static_cast<int>(p.lo);
  hi = static_cast<int>(p.hi);
  bins = static_cast<int>(p.bins);
  left = exponent - 1 > 0 ? exponent - 1 : 0;
  right = exponent - 1 < 0 ? 1 - exponent : 0;
  usable = true;
}

std::vector<float> float_thresholds(const HistogramProblem& p) {
  std::vector<float> t(static_cast<std::size_t>(p.bins) + 1);
  for (std::int64_t i = 0; i <= p.bins; ++i)
    t[static_cast<std::size_t>(i)] = float_at_or_above(even_edge(p, i));
  return t;
}

}  // namespace parpat::detail
