// The histogram reference: every value converted to float64 (64-bit integers rounded to the
// nearest, a bool's byte to 0 or 1) and placed by a binary search over the float64 edges
// (histogram_internal.hpp's reference_slot), one at a time, in order; a weighted histogram adds
// each value's float64 weight to its slot in the same order.
#include <algorithm>
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
// Floats from lo = 0 in power-of-two bin widths of at most 1: x·norm only scales x up.
bool scaled_up_from_zero(const HistogramProblem& p, double norm) {
  return p.lo == 0 && norm >= 1 && power_of_two(p, norm);
}

bool exact_arithmetic(const HistogramProblem& p, double norm, bool ieee_subnormals) {
  if (!power_of_two(p, norm)) return false;
  if (p.dtype == DType::float16) return scaled_up_from_zero(p, norm);
  if (p.dtype == DType::float32 || p.dtype == DType::bfloat16)
    return ieee_subnormals && scaled_up_from_zero(p, norm);
  const bool small_integer = !is_float(p.dtype) && dtype_size(p.dtype) <= 4;
  return small_integer && integer_ends(p) && p.hi - p.lo <= std::ldexp(1.0, 24);
}

// The values of a 16-bit dtype in increasing order, −0 left out (it equals +0): value(k) for
// k in [0, count), and where a float64 falls among them.
struct Sorted16 {
  DType dtype;
  unsigned inf = 0;  // a float dtype's +inf bits
  unsigned count = 65536;
  explicit Sorted16(DType t) : dtype(t) {
    if (t == DType::float16 || t == DType::bfloat16) {
      inf = t == DType::float16 ? 0x7C00u : 0x7F80u;
      count = 2 * inf + 1;  // −inf .. −(the smallest subnormal), +0 .. +inf
    }
  }
  double value(unsigned k) const {
    unsigned bits = k;
    if (dtype == DType::int16) bits = (k + 0x8000u) & 0xFFFFu;
    if (inf) bits = k < inf ? 0x8000u + (inf - k) : k - inf;
    return table_value(dtype, bits);
  }
  // The index of the first value ≥ v (count if none): from v's nearest value, a step or two.
  unsigned first_at_or_above(double v) const {
    long long k = 0;
    if (!inf) {
      k = static_cast<long long>(std::ceil(std::clamp(v, -1e6, 1e6))) +
          (dtype == DType::int16 ? 32768 : 0);
      return static_cast<unsigned>(std::clamp<long long>(k, 0, count));
    }
    const unsigned bits = dtype == DType::float16 ? float16(v).bits : bfloat16(v).bits;
    k = (bits & 0x8000u) ? static_cast<long long>(inf) - (bits - 0x8000u) : bits + inf;
    k = std::clamp<long long>(k, 0, count - 1);
    while (k < count && value(static_cast<unsigned>(k)) < v)
      ++k;
    while (k > 0 && value(static_cast<unsigned>(k - 1)) >= v)
      --k;
    return static_cast<unsigned>(k);
  }
};

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

Even16Rule::Even16Rule(const HistogramProblem& p) {
  // The check takes about 12 ns an edge here: past 16384 bins other rules cost less than it.
  if (!p.even || dtype_size(p.dtype) != 2 || p.bins > kMaxBins) return;
  const double norm = static_cast<double>(p.bins) / (p.hi - p.lo);
  if (!(norm > 0) || !(norm <= FLT_MAX) || !(std::fabs(p.lo) * norm <= FLT_MAX)) return;
  scale = static_cast<float>(norm);
  const double offset = -p.lo * static_cast<double>(scale);
  if (!(std::fabs(offset) < 0x1p21)) return;  // shift, low and high stay exact
  whole = static_cast<int>(std::nearbyint(offset));
  fraction = static_cast<float>(offset - whole);
  low = -0.5f - static_cast<float>(whole);
  shift = static_cast<float>(0x1p23 + 1 + whole);
  bins = static_cast<int>(p.bins);
  const Sorted16 values(p.dtype);
  const unsigned at_hi = values.first_at_or_above(p.hi);
  const bool hi_value = at_hi < values.count && values.value(at_hi) == p.hi;
  const EvenRule reference(p);
  // Whether the rule places every value where the reference does: with the hi row, hi at
  // bins + 1 and the slots past the bins a row further.
  auto agrees = [&](double x) {
    const std::int64_t slot = reference.slot(x);
    std::int64_t expected = row_of_slot(slot, p.bins);
    if (hi_row && x == p.hi) expected = p.bins + 1;
    if (hi_row && slot > p.bins) expected = slot + 1;
    return row(static_cast<float>(x)) == static_cast<std::uint32_t>(expected);
  };
  // The rule with or without the hi row, checked on each value once, in increasing order: the
  // values either side of each edge (hi the last), the first above hi, the dtype's ends and NaN.
  auto holds = [&](bool with_hi_row) {
    hi_row = with_hi_row;
    high = static_cast<float>(p.bins - whole) + (hi_row ? 1.5f : 0.5f);
    // The closing test's hi where a value of the dtype equals it and has no row of its own, else
    // NaN: no value needs the test (uint16 over [0, 65536] and the like).
    hi = hi_value && !hi_row ? static_cast<float>(p.hi) : std::nanf("");
    long long checked = -1;
    auto check = [&](unsigned k) {
      if (static_cast<long long>(k) <= checked) return true;
      checked = k;
      return agrees(values.value(k));
    };
    bool agree = check(0) && (!is_float(p.dtype) || agrees(std::nan("")));
    for (std::int64_t i = 0; agree && i <= p.bins; ++i) {
      const unsigned k = values.first_at_or_above(even_edge(p, i));
      agree = (k == 0 || check(k - 1)) && (k == values.count || check(k));
    }
    const unsigned above = values.first_at_or_above(std::nextafter(p.hi, INFINITY));
    return agree && (above == values.count || check(above)) && check(values.count - 1);
  };
  usable = (hi_value && holds(true)) || holds(false);
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
  // Exact arithmetic: from lo = 0 in bins of a power-of-two width of at most 1, x·norm is exact
  // for every double (float64 keeps its subnormals; past DBL_MAX it is +inf, a value beyond hi),
  // and numpy's edges are exactly i / norm: no value needs a correction but hi and NaN, which the
  // exactness test takes apart (H200, 2^27 float64 values all 0.5, an edge, in 256 bins of [0, 1):
  // each vector of them had gone through the correction).
  if (scaled_up_from_zero(p, exact_norm)) delta = -1;
  usable = true;
}

IntegerShiftRule::IntegerShiftRule(const HistogramProblem& p) {
  const double norm = static_cast<double>(p.bins) / (p.hi - p.lo);
  const bool wide_integer = !is_float(p.dtype) && dtype_size(p.dtype) >= 4;
  if (!wide_integer || !p.even || p.bins > (1 << 22) || !integer_ends(p) || !power_of_two(p, norm))
    return;
  int exponent = 0;
  std::frexp(norm, &exponent);  // norm = 2^(exponent − 1): rows per unit of x
  lo = static_cast<int>(p.lo);
  hi = static_cast<int>(p.hi);
  bins = static_cast<int>(p.bins);
  below = is_signed_integer(p.dtype) || lo > 0 ? lo - 1 : 0;
  above = std::max(hi + 1, below);  // an unsigned dtype over a range below 0: all above it
  left = exponent - 1 > 0 ? exponent - 1 : 0;
  right = exponent - 1 < 0 ? 1 - exponent : 0;
  scale = 1u << left;
  offset = (1u << right) - static_cast<std::uint32_t>(lo) * scale;
  usable = true;
}

std::vector<float> float_thresholds(const HistogramProblem& p) {
  std::vector<float> t(static_cast<std::size_t>(p.bins) + 1);
  for (std::int64_t i = 0; i <= p.bins; ++i)
    t[static_cast<std::size_t>(i)] = float_at_or_above(even_edge(p, i));
  return t;
}

}  // namespace parpat::detail
