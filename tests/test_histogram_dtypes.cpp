// Histogram of every integer dtype and bool, on every backend × variant present, against a
// reference written here with numpy's semantics (each value converted to float64, 64-bit integers
// rounded to the nearest; the bin by a search of the float64 edges, numpy.searchsorted's
// side='right'): the dtypes' extremes, values on the edges and just outside the range, 64-bit
// values that round onto an edge, per-value bins (numpy.bincount, negatives as underflow), the
// default range, empty input, the tuned layouts of `fast`, and the CLI against numpy itself.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>

#include <nlohmann/json.hpp>

#include "histogram/histogram_internal.hpp"
#include "histogram_support.hpp"
#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "runtime/tuning.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

constexpr DType kIntegers[] = {DType::boolean, DType::int8,   DType::uint8,
                               DType::int16,   DType::uint16, DType::int32,
                               DType::uint32,  DType::int64,  DType::uint64};

// Values of one dtype, held as the bytes the library reads.
struct Values {
  DType dtype;
  std::vector<unsigned char> bytes;
  std::int64_t size() const { return static_cast<std::int64_t>(bytes.size() / dtype_size(dtype)); }
};

// Values of t from a list of numbers given as long double (exact for every 64-bit integer);
// each is clamped to t's range first, so a list can name values beyond a narrow type.
Values values_of(DType t, const std::vector<long double>& list) {
  Values v{t, std::vector<unsigned char>(list.size() * dtype_size(t))};
  visit_dtype(t, [&](auto x) {
    using T = decltype(x);
    if constexpr (is_float16_type<T>) {
      for (std::size_t i = 0; i < list.size(); ++i) {
        const T value = static_cast<T>(static_cast<double>(list[i]));
        std::memcpy(v.bytes.data() + i * sizeof(T), &value, sizeof(T));
      }
    } else {
      const long double lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      for (std::size_t i = 0; i < list.size(); ++i) {
        const T value = static_cast<T>(std::clamp(list[i], lo, hi));
        std::memcpy(v.bytes.data() + i * sizeof(T), &value, sizeof(T));
      }
    }
  });
  return v;
}

// The values as float64, converted the way numpy's astype(float64) converts them.
std::vector<double> as_float64(const Values& v) {
  std::vector<double> out(static_cast<std::size_t>(v.size()));
  visit_dtype(v.dtype, [&](auto x) {
    using T = decltype(x);
    for (std::size_t i = 0; i < out.size(); ++i) {
      T value;
      std::memcpy(&value, v.bytes.data() + i * sizeof(T), sizeof(T));
      out[i] = static_cast<double>(value);
    }
  });
  return out;
}

// numpy.histogram's counts of float64 values over `edges`, then below, above and NaN.
std::vector<std::uint64_t> numpy_slots(const std::vector<double>& x,
                                       const std::vector<double>& edges) {
  const std::size_t bins = edges.size() - 1;
  std::vector<std::uint64_t> slots(bins + 3, 0);
  for (double v : x) {
    if (std::isnan(v)) {
      ++slots[bins + 2];
    } else if (v < edges.front()) {
      ++slots[bins];
    } else if (v > edges.back()) {
      ++slots[bins + 1];
    } else {
      auto right = std::upper_bound(edges.begin(), edges.end(), v) - edges.begin();
      ++slots[std::min<std::size_t>(static_cast<std::size_t>(right) - 1, bins - 1)];
    }
  }
  return slots;
}

// Per-value bins of bool and the 8- and 16-bit integers: their non-negative values.
std::size_t narrow_bins(DType t) {
  switch (t) {
    case DType::boolean:
      return 2;
    case DType::int8:
      return 128;
    case DType::uint8:
      return 256;
    case DType::int16:
      return 32768;
    default:
      return 65536;
  }
}

std::vector<std::uint64_t> slots_of(const HistogramResult& r) {
  std::vector<std::uint64_t> slots = r.counts;
  slots.insert(slots.end(), {r.underflow, r.overflow, r.nan});
  return slots;
}

class HistogramDTypes : public ::testing::TestWithParam<Target> {
 protected:
  bool covers(DType t, std::int64_t n, const HistogramBins& resolved) const {
    const detail::HistogramProblem p = problem_of(t, n, resolved);
    const auto& variant =
        detail::find_histogram_variant(GetParam().device.backend(), GetParam().variant);
    return variant.supports(p, GetParam().device.info());
  }

  HistogramResult run(const Values& v, const HistogramBins& bins) const {
    Array in = Array::from_host(GetParam().device, v.dtype, {v.size()}, v.bytes.data());
    return histogram(in, bins, {GetParam().variant});
  }

  // Counts v into `bins` (even with a range, or explicit edges) and compares every slot with
  // numpy's. Returns false when the variant does not cover the case.
  bool check(const Values& v, const HistogramBins& bins, const std::string& what) const {
    if (!covers(v.dtype, v.size(), bins)) return false;
    const auto expected = numpy_slots(as_float64(v), bins.edge_values());
    EXPECT_EQ(slots_of(run(v, bins)), expected)
        << what << ": " << v.size() << " " << dtype_name(v.dtype) << " into " << bins.count
        << " bins, seed " << run_seed();
    return true;
  }
};

// A variant's supports() must say yes to every dtype where the variant takes it: `fast` and
// `parallel` (the defaults) everywhere that takes float64 bins at all.
TEST_P(HistogramDTypes, DefaultVariantsTakeEveryDType) {
  const Target& target = GetParam();
  if (target.variant != "fast" && target.variant != "parallel")
    GTEST_SKIP() << "only the default variants must take every dtype";
  if (target.device.backend() == Backend::opencl && !target.device.info().fp64)
    GTEST_SKIP() << "this OpenCL device has no cl_khr_fp64";
  for (DType t : kIntegers)
    for (std::int64_t bins : {1, 1000, 70000})
      EXPECT_TRUE(covers(t, 1000, HistogramBins::even(bins, -3, 5))) << dtype_name(t);
}

// The dtypes' extremes, 0 and ±1, values on every edge, one step either side of it, and just
// outside the range, over ranges whose edges are integers (and ones whose edges are not).
TEST_P(HistogramDTypes, ExtremesEdgesAndValuesJustOutside) {
  std::mt19937_64 rng(run_seed());
  for (DType t : kIntegers) {
    long double min = 0, max = 0;
    visit_dtype(t, [&](auto x) {
      if constexpr (std::is_integral_v<decltype(x)>) {
        min = std::numeric_limits<decltype(x)>::lowest();
        max = std::numeric_limits<decltype(x)>::max();
      }
    });
    const bool wide = dtype_size(t) == 8;
    struct Range {
      long double lo, hi;
      std::int64_t bins;
    };
    std::vector<Range> ranges = {{min, max, 5}, {0, 1, 2}, {0, 1, 3}, {-0.5, 1.5, 2}};
    if (t != DType::boolean) ranges.insert(ranges.end(), {{-40, 60, 10}, {0, 120, 7}, {3, 103, 1}});
    // Power-of-two bin widths (and 2^24 apart): the float rule's exact arithmetic, where every
    // value on an edge is taken without a correction, and just past its limits; the integer
    // rule; the 16-bit rule; uint16 over its whole range in 65536 bins counted per value (CUDA
    // `fast`).
    if (t != DType::boolean)
      ranges.insert(ranges.end(), {{0, 65536, 4096},
                                   {0, 65536, 65536},
                                   {-1024, 1024, 256},
                                   {-7, 9, 16},
                                   {0, 3, 12},
                                   {-0x1p23L, 0x1p23L, 64},
                                   {-0x1p24L, 0x1p24L, 64}});
    if (wide) ranges.insert(ranges.end(), {{-0x1p62L, 0x1p62L, 4}, {0, 0x1p64L, 4}});
    for (const Range& r : ranges) {
      const auto bins =
          HistogramBins::even(r.bins, static_cast<double>(r.lo), static_cast<double>(r.hi));
      std::vector<long double> pool = {min, max, 0, 1, -1, r.lo - 1, r.hi + 1, r.lo, r.hi};
      for (double e : bins.edge_values())
        for (long double step : {-1.0L, 0.0L, 1.0L, 2.0L})
          pool.push_back(std::round(static_cast<long double>(e)) + step);
      std::uniform_int_distribution<std::size_t> pick(0, pool.size() - 1);
      for (std::int64_t n : {std::int64_t{1}, std::int64_t{37}, std::int64_t{70001}}) {
        std::vector<long double> list(static_cast<std::size_t>(n));
        for (auto& v : list)
          v = pool[pick(rng)];
        check(values_of(t, list), bins, "extremes and edges");
      }
      check(values_of(t, pool), bins, "the pool itself");
      if (HasFailure()) return;
    }
  }
}

// Answers worked out by hand, so the reference above is not the only judge.
TEST_P(HistogramDTypes, KnownAnswers) {
  using C = std::vector<std::uint64_t>;
  auto expect = [&](DType t, const std::vector<long double>& list, const HistogramBins& bins,
                    const C& slots) {
    const Values v = values_of(t, list);
    if (covers(t, v.size(), bins)) EXPECT_EQ(slots_of(run(v, bins)), slots) << dtype_name(t);
  };
  // 2^64 − 1 rounds to 2^64 (the last edge: the last bin) and 2^62 − 1 to the edge 2^62.
  expect(DType::uint64, {0x1p64L - 1, 0x1p63L, 0x1p62L - 1, 0}, HistogramBins::even(4, 0, 0x1p64),
         {1, 1, 1, 1, 0, 0, 0});
  // INT64_MIN is the first edge; 2^53 + 1 rounds (to even) down to 2^53, below 2^53 + 2.
  expect(DType::int64, {-0x1p63L, 0x1p53L + 1, 0x1p53L + 2},
         HistogramBins::explicit_edges({-0x1p63, 0x1p53 + 2, 0x1p54}), {2, 1, 0, 0, 0});
  C int8_slots(258, 0);  // edges −128, −127, ..., 127: −1 and 0 sit on edges 127 and 128
  int8_slots[0] = int8_slots[127] = int8_slots[128] = int8_slots[254] = 1;
  expect(DType::int8, {-128, 127, -1, 0}, HistogramBins::even(255, -128, 127), int8_slots);
  expect(DType::boolean, {0, 1, 1}, HistogramBins::even(2, 0, 1), {1, 2, 0, 0, 0});
  expect(DType::boolean, {0, 1, 1}, HistogramBins::even(1, 0.5, 2), {2, 1, 0, 0});
  expect(DType::int16, {-32768, 32767, 5}, HistogramBins::even(2, 0, 10), {0, 1, 1, 1, 0});
  expect(DType::uint32, {4294967295.0L, 7}, HistogramBins::even(3, 7, 4294967295.0),
         {1, 0, 1, 0, 0, 0});
}

// 64-bit values beyond 2^53 next to the edges: most round onto an edge or the float64 next to
// it, so an exact integer comparison would place them elsewhere.
TEST_P(HistogramDTypes, WideIntegersRoundToTheNearestFloat64) {
  std::mt19937_64 rng(run_seed() + 1);
  std::uniform_int_distribution<int> offset(-600, 600);
  for (DType t : {DType::int64, DType::uint64})
    for (std::int64_t bins : {3, 1000}) {
      const double lo = t == DType::int64 ? -0x1p62 : 0x1p60, hi = 0x1p63 - 0x1p55;
      const auto b = HistogramBins::even(bins, lo, hi);
      const std::vector<double> edges = b.edge_values();
      std::uniform_int_distribution<std::size_t> pick(0, edges.size() - 1);
      std::vector<long double> list((1 << 18) + 3);
      for (auto& v : list)
        v = static_cast<long double>(edges[pick(rng)]) + offset(rng);
      check(values_of(t, list), b, "near the edges");
      if (HasFailure()) return;
    }
}

// numpy.bincount: one bin per non-negative value (2 for bool, 128 for int8, 256 for uint8, 32768
// for int16, 65536 for uint16, max + 1 for the wider types); negative values are underflow.
TEST_P(HistogramDTypes, PerValueBinsCountEveryNonNegativeValue) {
  std::mt19937_64 rng(run_seed() + 2);
  for (DType t : kIntegers) {
    const bool fixed = dtype_size(t) <= 2;
    long double min = 0, max = 0;
    visit_dtype(t, [&](auto x) {
      if constexpr (std::is_integral_v<decltype(x)>) {
        min = std::numeric_limits<decltype(x)>::lowest();
        max = std::numeric_limits<decltype(x)>::max();
      }
    });
    // Narrow types: their whole range; wide ones: [−5, 3000] and their lowest value.
    std::uniform_int_distribution<std::int64_t> u(fixed ? static_cast<std::int64_t>(min) : -5,
                                                  fixed ? static_cast<std::int64_t>(max) : 3000);
    std::vector<long double> list = {min, 0};
    for (int i = 0; i < 100003; ++i)
      list.push_back(static_cast<long double>(u(rng)));
    const Values v = values_of(t, list);
    Array in = Array::from_host(GetParam().device, t, {v.size()}, v.bytes.data());
    const HistogramBins resolved = resolve_bins(in, HistogramBins::per_value());
    if (!covers(t, v.size(), resolved)) continue;
    const std::vector<double> x = as_float64(v);
    const double top = *std::max_element(x.begin(), x.end());
    const std::size_t want = fixed ? narrow_bins(t) : static_cast<std::size_t>(top) + 1;
    std::vector<std::uint64_t> expected(want + 3, 0);
    for (double value : x)
      ++expected[value < 0 ? want : static_cast<std::size_t>(value)];
    HistogramResult r = run(v, HistogramBins::per_value());
    EXPECT_EQ(r.counts.size(), want) << dtype_name(t);
    EXPECT_EQ(slots_of(r), expected) << dtype_name(t) << ", seed " << run_seed();
    if (HasFailure()) return;
  }
}

TEST_P(HistogramDTypes, PerValueBinsOfWideTypesAreBoundedByTheData) {
  for (DType t : {DType::int32, DType::int64}) {  // every value negative: one bin, all underflow
    const Values v = values_of(t, {-7, -1, -3});
    HistogramResult r = run(v, HistogramBins::per_value());
    EXPECT_EQ(r.counts, std::vector<std::uint64_t>{0}) << dtype_name(t);
    EXPECT_EQ(r.underflow, 3u) << dtype_name(t);
  }
  for (DType t : {DType::uint32, DType::int64, DType::uint64}) {
    try {
      run(values_of(t, {1, 0x1p26L, 2}), HistogramBins::per_value());
      ADD_FAILURE() << dtype_name(t) << ": 2^26 + 1 per-value bins must be refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("67108864"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(run(values_of(DType::uint64, {0x1p64L - 1}), HistogramBins::per_value()), Error);
}

// The default range is [min, max] of the data as float64 (numpy: the extremes converted), and
// [v − 0.5, v + 0.5] when they are equal.
TEST_P(HistogramDTypes, DefaultRangeIsTheDataMinAndMax) {
  std::mt19937_64 rng(run_seed() + 3);
  for (DType t : kIntegers) {
    long double min = 0, max = 0;
    visit_dtype(t, [&](auto x) {
      if constexpr (std::is_integral_v<decltype(x)>) {
        min = std::numeric_limits<decltype(x)>::lowest();
        max = std::numeric_limits<decltype(x)>::max();
      }
    });
    std::uniform_real_distribution<long double> u(min, max);
    std::vector<long double> list(20011);
    for (auto& v : list)
      v = std::round(u(rng));
    const Values v = values_of(t, list);
    const std::vector<double> x = as_float64(v);
    HistogramResult r = run(v, HistogramBins::even(13));
    EXPECT_EQ(r.bins.lo, *std::min_element(x.begin(), x.end())) << dtype_name(t);
    EXPECT_EQ(r.bins.hi, *std::max_element(x.begin(), x.end())) << dtype_name(t);
    check(v, r.bins, "default range");
    HistogramResult same = run(values_of(t, {1, 1, 1}), HistogramBins::even(4));
    EXPECT_EQ(same.bins.lo, 0.5) << dtype_name(t);
    EXPECT_EQ(same.bins.hi, 1.5) << dtype_name(t);
    EXPECT_EQ(same.counts, (std::vector<std::uint64_t>{0, 0, 3, 0})) << dtype_name(t);
    if (HasFailure()) return;
  }
}

TEST_P(HistogramDTypes, EmptyInput) {
  for (DType t : kIntegers) {
    Array empty(GetParam().device, t, {0});
    HistogramResult r = histogram(empty, HistogramBins::even(5), {GetParam().variant});
    EXPECT_EQ(r.bins.lo, 0.0);
    EXPECT_EQ(r.bins.hi, 1.0);
    EXPECT_EQ(r.counts, std::vector<std::uint64_t>(5, 0)) << dtype_name(t);
    HistogramResult per = histogram(empty, HistogramBins::per_value(), {GetParam().variant});
    EXPECT_EQ(per.counts.size(), dtype_size(t) <= 2 ? narrow_bins(t) : 1u) << dtype_name(t);
    EXPECT_EQ(per.underflow + per.overflow + per.nan, 0u);
    for (auto c : per.counts)
      EXPECT_EQ(c, 0u);
  }
}

// float16 and bfloat16 are binned by their float64 values, every bit pattern of them: NaN bits to
// the NaN slot, ±inf below and above, subnormals, ±0 and values on the edges; per-value bins
// are refused, as for every float input.
TEST_P(HistogramDTypes, Float16TypesAreBinnedByTheirFloat64Value) {
  for (DType t : {DType::float16, DType::bfloat16}) {
    Values v{t, std::vector<unsigned char>(2 * 65536)};
    for (unsigned b = 0; b < 65536; ++b) {
      const auto bits = static_cast<std::uint16_t>(b);
      std::memcpy(v.bytes.data() + 2 * b, &bits, 2);
    }
    const Values few = values_of(t, {-1, -0.5, 0, 0.25, 0.5, 1, 1, 3, -3});
    int covered = 0;
    covered += check(v, HistogramBins::even(10, -1, 1), "every bit pattern");
    covered += check(v, HistogramBins::even(7, -65504, 65504), "whole range");
    covered += check(v, HistogramBins::even(1000, -1e-6, 1e-6), "subnormals");
    covered += check(v, HistogramBins::explicit_edges({-2, -0.5, 0, 0.1, 0.25, 1, 100}), "edges");
    covered += check(few, HistogramBins::even(4, -1, 1), "values on edges");
    // Power-of-two bin widths from 0 (float16's exact arithmetic in the float rule).
    covered += check(v, HistogramBins::even(256, 0, 1), "every bit pattern, 256 bins of [0, 1]");
    covered += check(v, HistogramBins::even(8, 0, 8), "every bit pattern, 8 bins of [0, 8]");
    covered += check(v, HistogramBins::even(4096, 0, 2), "every bit pattern, 4096 bins of [0, 2]");
    if (!covers(t, few.size(), HistogramBins::even(4, -1, 1))) continue;
    EXPECT_GT(covered, 0);
    // Default range: [min, max] of the data (NaN-free), the edges as numpy makes them in float64.
    HistogramResult r = run(few, HistogramBins::even(6));
    EXPECT_EQ(slots_of(r),
              numpy_slots(as_float64(few), HistogramBins::even(6, -3, 3).edge_values()))
        << dtype_name(t);
    EXPECT_THROW(run(few, HistogramBins::per_value()), Error) << dtype_name(t);
  }
}

// float16 and bfloat16 data in the layouts `fast` tunes for (few bins, the shared histogram in
// passes, equal runs), with NaN and ±inf among the values: each value binned by its own value,
// never by its bits read as an integer.
TEST_P(HistogramDTypes, Float16TypesOfRandomDataInEveryLayout) {
  std::mt19937_64 rng(run_seed() + 3);
  std::normal_distribution<double> normal(0, 3);
  for (DType t : {DType::float16, DType::bfloat16}) {
    std::vector<long double> list((1 << 20) + 7);
    for (std::size_t i = 0; i < list.size(); ++i)
      list[i] = i % 997 == 0   ? std::numeric_limits<long double>::quiet_NaN()
                : i % 991 == 0 ? std::numeric_limits<long double>::infinity() * (i % 2 ? 1 : -1)
                : i < 4096     ? 1.5
                               : normal(rng);
    const Values v = values_of(t, list);
    check(v, HistogramBins::even(10, -4, 4), "10 bins");
    check(v, HistogramBins::even(1000, -1.5, 2.5), "1000 bins");
    check(v, HistogramBins::even(65536, -8, 8), "65536 bins");
    check(v, HistogramBins::even(7, 0, 1), "7 bins");
    // Values in [0, 1) crowd rows a power of two apart over 4096 bins (half of bfloat16's on 128
    // rows 16 apart), which striped counters store permuted (in 8 columns: skewed on CUDA, padded
    // to an odd stride on OpenCL, as at 1024 bins there); the rows past the bins (below, hi, above,
    // NaN) end a group of permuted rows.
    std::uniform_real_distribution<double> unit(0, 1);
    for (std::size_t i = 0; i < list.size(); ++i)
      list[i] = i % 997 == 0   ? std::numeric_limits<long double>::quiet_NaN()
                : i % 991 == 0 ? std::numeric_limits<long double>::infinity() * (i % 2 ? 1 : -1)
                : i % 983 == 0 ? -0.25
                               : unit(rng);
    const Values crowded = values_of(t, list);
    check(crowded, HistogramBins::even(4096, 0, 1), "[0, 1) in 4096 bins");
    check(crowded, HistogramBins::even(2048, 0, 1), "[0, 1) in 2048 bins");
    check(crowded, HistogramBins::even(1024, 0, 1), "[0, 1) in 1024 bins");
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, HistogramDTypes,
                         ::testing::ValuesIn(variant_targets("histogram")), target_name);

// `fast` on GPUs under tunings that change its layout (passes, packed counters, global counting,
// rows sorted into buckets, one column, per-value counting of 16-bit input), on the dtypes whose
// kernels are new: 64-bit integers, and bool, int8, int16 and float16 through the uint8/uint16
// kernels.
class HistogramDTypesLayouts : public ::testing::TestWithParam<TunedDevice> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HistogramDTypesLayouts);  // no such device here
TEST_P(HistogramDTypesLayouts, MatchTheReference) {
  const TunedDevice& target = GetParam();
  std::mt19937_64 rng(run_seed() + 4 + target.index);
  ScopedTuning tuning(target.setting);
  // 20000, 625, 40000 and 80000 bins have power-of-two widths (2, 64, 1, 1/2): int32 takes the
  // integer rule there; int16 and uint16 the 16-bit rule at 7, 625 and 1000 bins.
  for (DType t : {DType::boolean, DType::int8, DType::int16, DType::uint16, DType::float16,
                  DType::int32, DType::uint32, DType::int64, DType::uint64})
    for (std::int64_t bins : {7, 1000, 20000, 625, 40000, 80000}) {
      std::uniform_int_distribution<std::int64_t> u(-30000, 30000);
      std::bernoulli_distribution hot(0.8);
      std::vector<long double> list(100003);
      for (auto& v : list)
        v = hot(rng) ? 5 : u(rng);
      const Values v = values_of(t, list);
      const auto b = HistogramBins::even(bins, -20000, 20000);
      Array in = Array::from_host(target.device, t, {v.size()}, v.bytes.data());
      EXPECT_EQ(slots_of(histogram(in, b, {"fast"})), numpy_slots(as_float64(v), b.edge_values()))
          << target.setting << ": " << dtype_name(t) << " " << bins << " bins, seed " << run_seed();
    }
}
// Every bit pattern of the 16-bit dtypes (NaN, ±inf, ±0, subnormals), counted per value where a
// setting says so (OpenCL keeps the values of a window from the first in a bin to the last, and a
// row each for those above, NaN and below it): ranges of one sign, of both, between two values
// of the dtype, beyond its values; at 4096 bins of [0, 1] and [-1, 1] the 16-bit rule gives hi a
// row of its own (no value within a bin's width above it), at 7 bins it tests for hi.
TEST_P(HistogramDTypesLayouts, EveryBitPatternOf16BitInput) {
  ScopedTuning tuning(GetParam().setting);
  const std::pair<double, double> ranges[] = {{0, 1},      {-1, 1},          {-3, -1},
                                              {-5, 70000}, {1.0001, 1.0002}, {1e5, 2e5}};
  for (DType t : {DType::int16, DType::uint16, DType::float16, DType::bfloat16}) {
    std::vector<unsigned char> bytes(2 * 65536);
    for (unsigned b = 0; b < 65536; ++b) {
      const auto bits = static_cast<std::uint16_t>(b * 40503u);  // every pattern, shuffled
      std::memcpy(bytes.data() + 2 * b, &bits, 2);
    }
    const Values v{t, bytes};
    Array in = Array::from_host(GetParam().device, t, {v.size()}, v.bytes.data());
    const auto values = as_float64(v);
    for (auto [lo, hi] : ranges)
      for (std::int64_t bins : {7, 4096, 65536}) {
        const auto b = HistogramBins::even(bins, lo, hi);
        EXPECT_EQ(slots_of(histogram(in, b, {"fast"})), numpy_slots(values, b.edge_values()))
            << GetParam().setting << ": " << dtype_name(t) << " [" << lo << ", " << hi << "], "
            << bins << " bins";
      }
  }
}

// int16 and uint16 read in place from views of one step (vectors gathered in whole groups of 32,
// the rest one value at a time), a third of them one value: the counts of numpy on the view's
// elements, each value a bin of its own and bins of 16 values.
TEST_P(HistogramDTypesLayouts, ViewsOf16BitInputCountTheirElements) {
  ScopedTuning tuning(GetParam().setting);
  std::mt19937_64 rng(run_seed() + 21);
  std::uniform_int_distribution<unsigned> bits(0, 65535);
  const std::int64_t n = 8 * 32 * 7 + 77, step = 3;
  for (DType t : {DType::int16, DType::uint16}) {
    std::vector<std::uint16_t> memory(static_cast<std::size_t>(n * step));
    for (auto& m : memory)
      m = static_cast<std::uint16_t>(rng() % 3 == 0 ? 40000u : bits(rng));
    Buffer buffer(GetParam().device, memory.size() * 2);
    buffer.upload(memory.data(), memory.size() * 2);
    const Array view = Array::strided_view(buffer, t, {n}, {step});
    std::vector<unsigned char> elements(static_cast<std::size_t>(2 * n));
    for (std::int64_t i = 0; i < n; ++i)
      std::memcpy(elements.data() + 2 * i, &memory[static_cast<std::size_t>(i * step)], 2);
    const auto values = as_float64(Values{t, elements});
    const double lo = t == DType::int16 ? -32768 : 0;
    for (const auto& b : {HistogramBins::even(65536, lo, lo + 65536),
                          HistogramBins::even(65536, lo, lo + (1 << 20))})
      EXPECT_EQ(slots_of(histogram(view, b, {"fast"})), numpy_slots(values, b.edge_values()))
          << GetParam().setting << ": " << dtype_name(t) << " [" << b.lo << ", " << b.hi
          << "), seed " << run_seed();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Tunings, HistogramDTypesLayouts,
    ::testing::ValuesIn(tuned_devices(
        [](const Device& d) { return d.backend() != Backend::cpu; },
        {"histogram.fast.striped_kib=8,histogram.fast.max_passes=40,histogram.opencl.packed=1",
         "histogram.fast.striped_kib=8,histogram.fast.max_passes=40,histogram.opencl.packed=0",
         "histogram.fast.striped_kib=1,histogram.fast.max_passes=0,histogram.fast.bucketed=0",
         "histogram.fast.max_passes=0,histogram.fast.bucket_rows=1024,histogram.opencl.bucketed=1,"
         "histogram.opencl.bucket_rows=1024",
         "histogram.fast.max_columns=1,histogram.fast.runs_below_columns=0,histogram.fast.packed=0",
         // 16-bit input counted per value at every bin count: CUDA's packed rows; OpenCL's
         // default (NVIDIA: 5-bit fields in one range; a CPU driver: global counts), packed
         // 8-bit fields in two ranges, and 5-bit ones whose wraps mostly find the hot-row table
         // taken.
         "histogram.fast.per_value16_min_bins=0",
         "histogram.fast.per_value16_min_bins=0,histogram.opencl.packed=1,"
         "histogram.opencl.per_value16_field_bits=8",
         "histogram.fast.per_value16_min_bins=0,histogram.opencl.packed=1,"
         "histogram.opencl.per_value16_field_bits=5,histogram.opencl.hot_entries=4",
         // ... and their rows added to a table of 64-bit rows, as input of 2^32 values takes.
         "histogram.fast.per_value16_min_bins=0,histogram.opencl.packed=1,"
         "histogram.opencl.per_value16_field_bits=5,histogram.opencl.value_row_bits=64",
         // float16 counted per value at every bin count: CUDA, and OpenCL in 16-bit fields.
         "histogram.fast.per_value_float16_min_bins=0",
         "histogram.fast.per_value_float16_min_bins=0,histogram.opencl.packed=1"})),
    tuned_device_name);

// The CLI on .npy files of every new dtype (streamed in small chunks) against numpy itself:
// numpy.histogram with and without a range on data holding the dtype's extremes, and
// numpy.bincount of the non-negative values.
TEST(HistogramDTypesCli, AgreesWithNumpy) {
  if (!python_numpy_available()) GTEST_SKIP() << "python3 with numpy is not available";
  std::mt19937_64 rng(run_seed() + 5);
  std::uniform_int_distribution<std::int64_t> u(-400, 2500);
  for (DType t :
       {DType::boolean, DType::int8, DType::int16, DType::uint32, DType::int64, DType::uint64}) {
    std::vector<long double> list(30011);
    for (auto& v : list)
      v = static_cast<long double>(u(rng));
    const std::string plain = temp_path(std::string("plain_") + dtype_name(t) + ".npy");
    const std::string extremes = temp_path(std::string("extremes_") + dtype_name(t) + ".npy");
    Values v = values_of(t, list);
    write_npy(plain, t, {v.size()}, v.bytes.data());
    list[0] = -0x1p63L;  // the dtype's lowest and highest values, once clamped
    list[1] = 0x1p64L;
    v = values_of(t, list);
    write_npy(extremes, t, {v.size()}, v.bytes.data());
    // numpy before 2.0 refuses uint64 in bincount; the plain values fit int64.
    const std::string bincount =
        "np.bincount(a[a >= 0].astype(np.int64), minlength=0 if a.dtype.itemsize > 2 else 2 if "
        "a.dtype == bool else 1 << (8 * a.dtype.itemsize - (a.dtype.kind == 'i')))";
    for (auto [file, args, numpy] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {extremes, "--bins 7 --range -100 900",
              "np.histogram(a, bins=7, range=(-100.0, 900.0))[0]"},
             {extremes, "--bins 33", "np.histogram(a, bins=33)[0]"},
             {plain, "--per-value", bincount}}) {
      const std::string want = run_python(
          "import numpy as np, json, warnings; warnings.simplefilter('ignore'); a = np.load('" +
          file + "'); print(json.dumps([int(c) for c in " + numpy + "]))");
      for (const auto& d : devices()) {
        const std::string backend = backend_name(d.backend());
        auto r = run_command("PARPAT_TUNING=stream.chunk_kib=4 " + cli_path() +
                             " histogram --json --backend " + backend + " " + args + " " + file);
        ASSERT_EQ(r.status, 0) << args << ": " << r.err;
        auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["counts"], nlohmann::json::parse(want))
            << dtype_name(t) << " " << args << " on " << backend;
        EXPECT_EQ(j["dtype"], dtype_name(t));
      }
    }
  }
}

}  // namespace
}  // namespace parpat::test
