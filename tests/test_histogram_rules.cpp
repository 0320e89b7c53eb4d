// The exact bin rules the fast kernels use instead of the reference's binary search, each against
// the reference itself (histogram_internal.hpp's reference_slot) on the values where a rule could
// go wrong: on, next to and between the edges, the dtype's extremes, infinities and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "parpat/float16.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

// The problem of `bins` even bins over [lo, hi] of `dtype` values (the rules' unit tests).
detail::HistogramProblem even_problem(DType dtype, double lo, double hi, std::int64_t bins) {
  detail::HistogramProblem p;
  p.dtype = dtype;
  p.bins = bins;
  p.lo = lo;
  p.hi = hi;
  return p;
}

// The float32 even rule the GPU kernels use must place every float exactly where the float64
// reference does: random values, and the floats on and next to every edge, over ranges that
// make its error bound tight, loose or unusable.
TEST(FloatEvenRule, AgreesWithTheReferenceOnAndBetweenEdges) {
  const std::uint64_t seed = run_seed();
  std::mt19937_64 rng(seed);
  struct Range {
    double lo, hi;
  };
  const Range ranges[] = {{0, 1},         {-1, 1},       {97, 125},         {-3.7, 1e3},
                          {1e6, 1e6 + 3}, {-1e-3, 2e-3}, {0.1, 0.30000001}, {-5e30, 7e30},
                          {-8e37, 8e37}};
  const std::int64_t bin_counts[] = {1, 7, 256, 1000, 1024, 4096, 65536, 1 << 20};
  int usable = 0;
  for (const Range& r : ranges) {
    for (std::int64_t bins : bin_counts) {
      const detail::HistogramProblem p = even_problem(DType::float32, r.lo, r.hi, bins);
      detail::FloatEvenRule rule(p);
      if (!rule.usable) continue;
      ++usable;
      std::vector<float> thresholds = detail::float_thresholds(p);
      auto check = [&](float x) {
        ASSERT_EQ(rule.slot(x, thresholds.data()),
                  static_cast<std::uint32_t>(detail::reference_slot(p, x)))
            << "x=" << x << " lo=" << r.lo << " hi=" << r.hi << " bins=" << bins
            << " seed=" << seed;
      };
      std::uniform_real_distribution<double> inside(r.lo - (r.hi - r.lo) * 0.01,
                                                    r.hi + (r.hi - r.lo) * 0.01);
      for (int i = 0; i < 20000; ++i)
        check(static_cast<float>(inside(rng)));
      std::int64_t step = std::max<std::int64_t>(1, bins / 4096);
      for (std::int64_t e = 0; e <= bins; e += step) {
        float f = static_cast<float>(detail::even_edge(p, e));
        check(f);
        check(std::nextafter(f, std::numeric_limits<float>::infinity()));
        check(std::nextafter(f, -std::numeric_limits<float>::infinity()));
      }
      for (float special :
           {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
            -std::numeric_limits<float>::infinity(), 0.0f, -0.0f})
        check(special);
    }
  }
  EXPECT_GT(usable, 20);
}

// The float64 rule of CUDA `fast`: every row it takes as exact is the reference's, for random
// values and the doubles on, next to and two steps from every edge, over ranges narrow, wide,
// offset and near DBL_MAX; spread data is almost always exact (else the rule gains nothing); and
// from 0 in power-of-two widths of at most 1 (exact arithmetic) every edge is exact but hi.
TEST(Float64EvenRule, ExactRowsAreTheReferenceSlots) {
  const std::uint64_t seed = run_seed();
  std::mt19937_64 rng(seed + 5);
  struct Range {
    double lo, hi;
  };
  const Range ranges[] = {{0, 1},           {-1, 1},           {97, 125},     {-3.7, 1e3},
                          {1e6, 1e6 + 3},   {0.1, 0.30000001}, {-5e30, 7e30}, {-1e307, 1e307},
                          {1e-300, 3e-300}, {0, 0x1p-30},      {0, 4096}};
  const double inf = std::numeric_limits<double>::infinity();
  int usable = 0, exact_arithmetic = 0;
  for (const Range& r : ranges) {
    for (std::int64_t bins : {1, 7, 256, 1000, 4096, 65536, 1 << 20}) {
      const detail::HistogramProblem p = even_problem(DType::float64, r.lo, r.hi, bins);
      const detail::Float64EvenRule rule(p);
      if (!rule.usable) continue;
      ++usable;
      const double width = (r.hi - r.lo) / double(bins);
      const bool exact_widths =
          r.lo == 0 && width <= 1 && std::ldexp(1.0, std::ilogb(width)) == width;
      EXPECT_EQ(rule.delta < 0, exact_widths)
          << "lo=" << r.lo << " hi=" << r.hi << " bins=" << bins;
      exact_arithmetic += exact_widths;
      // The reference's slot as a row: below the range 0, bin b at b + 1, then above and NaN.
      auto expected_row = [&](double x) {
        const std::int64_t slot = detail::reference_slot(p, x);
        return static_cast<std::uint32_t>(detail::row_of_slot(slot, bins));
      };
      int exact_count = 0;
      auto check = [&](double x) {
        bool exact = false;
        const std::uint32_t row = rule.row(x, exact);
        exact_count += exact;
        if (exact)
          ASSERT_EQ(row, expected_row(x)) << "x=" << x << " lo=" << r.lo << " hi=" << r.hi
                                          << " bins=" << bins << " seed=" << seed;
        if (exact_widths && x != r.hi && !std::isnan(x))
          EXPECT_TRUE(exact) << "x=" << x << " lo=" << r.lo << " hi=" << r.hi << " bins=" << bins;
      };
      std::uniform_real_distribution<double> spread(r.lo, r.hi);
      for (int i = 0; i < 20000; ++i)
        check(spread(rng));
      EXPECT_GT(exact_count, 19000) << "lo=" << r.lo << " hi=" << r.hi << " bins=" << bins;
      const std::int64_t step = std::max<std::int64_t>(1, bins / 4096);
      for (std::int64_t e = 0; e <= bins; e += step) {
        const double edge = detail::even_edge(p, e);
        const double below = std::nextafter(edge, -inf), above = std::nextafter(edge, inf);
        for (double x :
             {edge, below, above, std::nextafter(below, -inf), std::nextafter(above, inf)})
          check(x);
      }
      for (double x : {std::nan(""), inf, -inf, 0.0, -0.0, 0x1p-1074, -0x1p-1074,
                       std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(),
                       r.lo - 1, r.hi + 1})
        check(x);
    }
  }
  EXPECT_GT(usable, 40);
  EXPECT_GE(exact_arithmetic, 10);
}

// Power-of-two bin widths over integers (or float16 from 0) make t = (x − lo)·norm exact, so the
// rule takes every value as exact (delta < 0) — on the edges too, which such data hits often —
// and must still place each where the reference does; other ranges keep the error bound.
// The integer rule of `fast`: taken for 4- and 8-byte integers exactly where the bin width is a
// power of two over an integer range within ±2^24, and there the reference's slot for every value
// on, next to and far from every edge, each dtype's extremes (and an unsigned dtype over a range
// partly or wholly below 0) included. The row is taken in the value's own type, as the kernels
// take it.
TEST(IntegerShiftRule, EveryValueNearEveryEdgeHasTheReferenceSlot) {
  struct Case {
    DType dtype;
    double lo, hi;
    std::int64_t bins;
    bool usable;
  };
  const Case cases[] = {{DType::int32, 0, 0x1p20, 1 << 20, true},
                        {DType::int32, -0x1p24, 0x1p24, 64, true},
                        {DType::int32, -0x1p23, 0x1p23, 4096, true},
                        {DType::int32, 5, 1029, 1024, true},
                        {DType::uint32, 0, 0x1p20, 65536, true},
                        {DType::uint32, 0, 1024, 256, true},
                        {DType::uint32, -64, 64, 32, true},
                        {DType::uint32, -0x1p24, -0x1p23, 16, true},
                        {DType::uint32, 3, 0x1p23 + 3, 4096, true},
                        {DType::int64, -0x1p24, 0x1p24, 1 << 22, true},
                        {DType::int64, -7, 9, 32, true},
                        {DType::uint64, 0, 0x1p20, 1 << 20, true},
                        {DType::uint64, -8, 8, 4, true},
                        {DType::int32, -0x1p24, 0x1p25, 64, false},
                        {DType::int32, -0.5, 1.5, 2, false},
                        {DType::uint64, 0, 1000, 7, false},
                        {DType::uint16, 0, 65536, 256, false},  // 16-bit input: Even16Rule
                        {DType::int16, -1024, 1024, 256, false},
                        {DType::float32, 0, 1024, 256, false},
                        {DType::float64, 0, 1024, 256, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.dtype)) + " [" + std::to_string(c.lo) + ", " +
                 std::to_string(c.hi) + "] in " + std::to_string(c.bins) + " bins");
    const detail::HistogramProblem p = even_problem(c.dtype, c.lo, c.hi, c.bins);
    const detail::IntegerShiftRule rule(p);
    ASSERT_EQ(rule.usable, c.usable);
    if (!rule.usable) continue;
    visit_dtype(c.dtype, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_integral_v<T> && sizeof(T) >= 4) {
        constexpr T kMin = std::numeric_limits<T>::min(), kMax = std::numeric_limits<T>::max();
        std::vector<T> values = {kMin,
                                 T(kMin + 1),
                                 T(kMax - 1),
                                 kMax,
                                 T(0),
                                 T(1),
                                 T(-1),
                                 T(INT32_MIN),
                                 T(INT32_MAX),
                                 T(std::int64_t{1} << 53),
                                 T((std::int64_t{1} << 53) + 1),
                                 T(65535)};
        // Every edge of up to 4096 bins, every (bins / 4096)-th beyond, and hi; the values next
        // to an edge that the dtype holds.
        const std::int64_t step = std::max<std::int64_t>(1, c.bins / 4096);
        for (std::int64_t e = 0; e <= c.bins;
             e = e + step < c.bins || e == c.bins ? e + step : c.bins)
          for (std::int64_t d = -2; d <= 2; ++d) {
            const std::int64_t x =
                static_cast<std::int64_t>(std::floor(detail::even_edge(p, e))) + d;
            if (std::is_signed_v<T> || x >= 0) values.push_back(static_cast<T>(x));
          }
        for (T x : values) {
          const std::uint32_t row = rule.row(x);
          const std::uint32_t slot = row == 0
                                         ? std::uint32_t(c.bins)
                                         : (row <= c.bins ? row - 1 : std::uint32_t(c.bins + 1));
          ASSERT_EQ(slot, detail::reference_slot(p, static_cast<double>(x))) << "x=" << +x;
        }
      } else {
        FAIL() << "the rule is usable only for 4- and 8-byte integers";
      }
    });
  }
}

// The 16-bit rule of `fast` checks itself on the host at a few values per edge; here every one of
// the 65536 values of each case is placed by the rule and by the reference, and the host's check
// must say usable exactly where all of them agree — over ranges whose rounding holds and ranges
// where it does not (up to 16384 bins over ranges off the integers), hi a value of the dtype or
// not (then the rule drops its closing test), hi with a row of its own or tested (a value of the
// dtype within a bin's width above hi), and random ranges.
TEST(Even16Rule, HostCheckIsUsableExactlyWhereEveryValueAgrees) {
  struct Case {
    DType dtype;
    double lo, hi;
    std::int64_t bins;
  };
  std::vector<Case> cases = {{DType::uint16, 0, 65536, 256},
                             {DType::uint16, 0, 65536, 7},
                             {DType::uint16, 0, 65535, 7},
                             {DType::uint16, 0, 65536, 16384},
                             {DType::uint16, 100, 1000, 4096},
                             {DType::int16, 0, 65536, 1024},
                             {DType::int16, -32768, 32767, 7},
                             {DType::int16, -3, 5, 1},
                             {DType::float16, 0, 1, 7},
                             {DType::float16, 0, 1, 4096},
                             {DType::float16, -1, 1, 256},
                             {DType::float16, -65504, 65504, 1000},
                             {DType::float16, 0.1, 0.3, 3},
                             {DType::bfloat16, 0, 1, 256},
                             {DType::bfloat16, -3e38, 3e38, 7},
                             {DType::bfloat16, 1e-30, 2e-30, 64},
                             {DType::uint16, 0.1, 65535.3, 16383},
                             {DType::uint16, 1, 65000, 16381},
                             {DType::int16, -32768.7, 32767.9, 9999},
                             {DType::int16, -30001, 29999, 16383},
                             {DType::float16, -65504, 65504, 16384},
                             {DType::float16, -1000.3, 999.7, 16381},
                             {DType::uint16, 3.3, 40000.7, 12289},
                             {DType::int16, -12345.6, 23456.7, 16001},
                             {DType::float16, 0.001, 2.7, 16383},
                             {DType::bfloat16, -7.3, 9.1, 16383},
                             {DType::bfloat16, 0, 1, 4096},
                             {DType::uint16, 0, 1000, 10},
                             {DType::int16, -1000, 1000, 2000}};
  const std::size_t fixed = cases.size();
  std::mt19937_64 rng(run_seed() + 16);
  const DType dtypes[] = {DType::uint16, DType::int16, DType::float16, DType::bfloat16};
  for (int i = 0; i < 40; ++i) {
    const DType t = dtypes[i % 4];
    const double span = t == DType::bfloat16 ? 1e4 : (t == DType::float16 ? 100 : 40000);
    std::uniform_real_distribution<double> end(-span, span);
    double lo = end(rng), hi = end(rng);
    if (lo > hi) std::swap(lo, hi);
    if (i % 2 == 0 && !is_float(t)) lo = std::floor(lo), hi = std::ceil(hi);
    cases.push_back({t, lo, hi, std::int64_t(1) << (i % 13)});
  }
  int usable = 0, unusable = 0, hi_rows = 0, hi_tests = 0;  // among the fixed cases
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const detail::HistogramProblem p = even_problem(c.dtype, c.lo, c.hi, c.bins);
    const detail::Even16Rule rule(p);
    const auto bins = static_cast<std::uint32_t>(c.bins);
    bool agree = true, hi_is_a_value = false;
    for (unsigned bits = 0; bits < 65536 && agree; ++bits) {
      const double x = detail::table_value(c.dtype, bits);
      const std::uint32_t row = rule.row(static_cast<float>(x));
      agree = row < rule.rows() && detail::slot_of_row(row, bins, rule.hi_row) ==
                                       static_cast<std::uint32_t>(detail::reference_slot(p, x));
      hi_is_a_value |= x == c.hi;
    }
    EXPECT_EQ(rule.usable, agree) << dtype_name(c.dtype) << " [" << c.lo << ", " << c.hi << "] in "
                                  << c.bins << " bins";
    // The closing test (kernels' kHi) only where some value is hi itself without a row of its
    // own; the hi row only there too.
    if (agree) {
      EXPECT_EQ(std::isnan(rule.hi), !hi_is_a_value || rule.hi_row)
          << dtype_name(c.dtype) << " " << c.hi;
      EXPECT_TRUE(hi_is_a_value || !rule.hi_row) << dtype_name(c.dtype) << " " << c.hi;
    }
    if (k < fixed) {
      ++(rule.usable ? usable : unusable);
      hi_rows += rule.usable && rule.hi_row;
      hi_tests += rule.usable && !std::isnan(rule.hi);
    }
  }
  // Both answers among the fixed cases, and both ways of closing the last bin, so no seed can
  // leave one of them untested.
  EXPECT_GT(usable, 12);
  EXPECT_GT(unusable, 6);
  EXPECT_GT(hi_rows, 3);
  EXPECT_GT(hi_tests, 0);
}

TEST(FloatEvenRule, ExactArithmeticTakesEveryValueOnTheEdgesToo) {
  struct Case {
    DType dtype;
    double lo, hi;
    std::int64_t bins;
    bool exact;
    bool ieee_subnormals = false;  // as CUDA: float32 and bfloat16 from 0 may be exact
  };
  const Case cases[] = {
      {DType::uint16, 0, 65536, 4096, true},
      {DType::int16, -1024, 1024, 256, true},
      {DType::int32, -0x1p23, 0x1p23, 64, true},
      {DType::uint16, 0, 3, 12, true},
      {DType::float16, 0, 1, 256, true},
      {DType::float16, 0, 2, 4096, true},
      {DType::float32, 0, 1, 65536, true, true},
      {DType::float32, 0, 0x1p-100, 1024, true, true},
      {DType::bfloat16, 0, 4, 256, true, true},
      {DType::uint16, 0, 65535, 256, false},
      {DType::int32, -0x1p24, 0x1p24, 64, false},
      {DType::int16, -0.5, 1.5, 2, false},
      {DType::float16, -1, 1, 256, false},
      {DType::float32, 0, 1, 256, false},
      {DType::float32, -1, 1, 256, false, true},
      {DType::float32, 0, 0x1p20, 65536, false, true},  // norm 2^-4: x·norm may round
      {DType::bfloat16, 0, 1, 256, false}};
  const double inf = std::numeric_limits<double>::infinity();
  for (const Case& c : cases) {
    const detail::HistogramProblem p = even_problem(c.dtype, c.lo, c.hi, c.bins);
    const detail::FloatEvenRule rule(p, c.ieee_subnormals);
    ASSERT_TRUE(rule.usable);
    EXPECT_EQ(rule.delta < 0, c.exact)
        << dtype_name(c.dtype) << " [" << c.lo << ", " << c.hi << "] in " << c.bins << " bins";
    std::vector<float> values;
    if (c.dtype == DType::float16) {
      for (unsigned b = 0; b < 65536; ++b)
        values.push_back(static_cast<float>(float16::from_bits(static_cast<std::uint16_t>(b))));
    } else if (c.dtype == DType::float32 || c.dtype == DType::bfloat16) {
      // Every edge and the floats either side of it, the subnormals of either sign, ±0, the
      // largest floats, ±inf and NaN; bfloat16 keeps the top 16 bits of each.
      std::vector<double> wide = {0x1p-149, -0x1p-149, 0x1.8p-130, -0x1.8p-130, 0.0,         -0.0,
                                  3.4e38,   -3.4e38,   inf,        -inf,        std::nan("")};
      for (std::int64_t e = 0; e <= c.bins; ++e) {
        const auto edge = static_cast<float>(detail::even_edge(p, e));
        wide.insert(wide.end(),
                    {edge, std::nextafter(edge, -INFINITY), std::nextafter(edge, INFINITY)});
      }
      for (double w : wide) {
        float x = static_cast<float>(w);
        if (c.dtype == DType::bfloat16) {
          std::uint32_t bits;
          std::memcpy(&bits, &x, 4);
          bits &= 0xFFFF0000u;
          std::memcpy(&x, &bits, 4);
        }
        values.push_back(x);
      }
    } else {
      for (std::int64_t e = 0; e <= c.bins; ++e)
        for (double d : {-2.0, -1.0, 0.0, 1.0, 2.0})
          values.push_back(static_cast<float>(std::floor(detail::even_edge(p, e)) + d));
    }
    const std::vector<float> thresholds = detail::float_thresholds(p);
    for (float x : values) {
      bool exact = false;
      const std::uint32_t quick = rule.quick(x, exact);
      const auto expected = static_cast<std::uint32_t>(detail::reference_slot(p, x));
      ASSERT_EQ(rule.slot(x, thresholds.data()), expected)
          << "x=" << x << " " << dtype_name(c.dtype) << " bins=" << c.bins;
      if (exact) ASSERT_EQ(quick, expected) << "x=" << x << " taken as exact";
      if (c.exact && x >= c.lo && x < c.hi) ASSERT_TRUE(exact) << "x=" << x << " corrected";
    }
  }
}

TEST(FloatEvenRule, RangesWiderThanHalfOfFloatMaxAreLeftToTheFloat64Rule) {
  const double max = std::numeric_limits<float>::max();
  struct Range {
    double lo, hi;
  };
  for (Range r : {Range{-3e38, 3e38}, Range{-max, max}, Range{-1e38, max}, Range{0, max}}) {
    const detail::HistogramProblem p = even_problem(DType::float32, r.lo, r.hi, 1000);
    EXPECT_FALSE(detail::FloatEvenRule(p).usable) << "lo=" << r.lo << " hi=" << r.hi;
  }
}

}  // namespace
}  // namespace parpat::test
