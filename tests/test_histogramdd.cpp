// Joint histograms (numpy.histogramdd / histogram2d) on every device, against counts worked out
// here the way numpy does it: each coordinate placed by a binary search over its dimension's
// float64 edges (searchsorted side='right'; the last edge belongs to the last bin), the sample
// dropped when a coordinate is outside or NaN. Counts are compared exactly, weighted sums within
// the bound of float64 addition in any order. Every dtype, 1 to 8 dimensions, both layouts ((N, D)
// and D arrays), even bins with and without a range, explicit edges, values on every edge, 256 ×
// 256 bins (more than one block's 32-bit counters), skewed data, empty input, density and bad
// input.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "parpat/error.hpp"
#include "parpat/histogramdd.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

// Samples of one dtype in both layouts: `interleaved` (N × D) bytes, and their float64 values.
struct Samples {
  DType dtype;
  int dims;
  std::int64_t n;
  std::vector<unsigned char> bytes;  // (N, D), C order
  std::vector<double> values;        // (N, D) as float64

  double at(std::int64_t i, int d) const { return values[std::size_t(i * dims + d)]; }
  Array table(const Device& dev) const {
    return Array::from_host(dev, dtype, {n, dims}, bytes.data());
  }
  // Coordinate d of every sample as its own array.
  std::vector<Array> columns(const Device& dev) const {
    std::vector<Array> out;
    const std::size_t size = dtype_size(dtype);
    for (int d = 0; d < dims; ++d) {
      std::vector<unsigned char> column(std::size_t(n) * size);
      for (std::int64_t i = 0; i < n; ++i)
        std::memcpy(column.data() + i * size, bytes.data() + (i * dims + d) * size, size);
      out.push_back(Array::from_host(dev, dtype, {n}, column.data()));
    }
    return out;
  }
};

// Samples whose coordinates are drawn by `draw` (a float64, converted to the dtype).
template <class Draw>
Samples make_samples(DType t, int dims, std::int64_t n, Draw draw) {
  Samples s{t, dims, n, std::vector<unsigned char>(std::size_t(n * dims) * dtype_size(t)),
            std::vector<double>(std::size_t(n * dims))};
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    for (std::int64_t k = 0; k < n * dims; ++k) {
      const double x = draw(k);
      T value{};
      if constexpr (std::is_floating_point_v<T>) {
        value = static_cast<T>(x);
      } else if constexpr (std::is_same_v<T, bool>) {
        value = x >= 0.5;
      } else {
        const double lo = double(std::numeric_limits<T>::lowest());
        const double hi = double(std::numeric_limits<T>::max());
        value = static_cast<T>(std::clamp(std::floor(x), lo, hi));
      }
      std::memcpy(s.bytes.data() + k * sizeof(T), &value, sizeof(T));
      s.values[std::size_t(k)] = static_cast<double>(value);
    }
  });
  return s;
}

// numpy's placement of x among edges: the bin, or −1 when x is in none.
std::int64_t numpy_bin(const std::vector<double>& edges, double x) {
  if (std::isnan(x) || x < edges.front() || x > edges.back()) return -1;
  if (x == edges.back()) return std::int64_t(edges.size()) - 2;
  return std::int64_t(std::upper_bound(edges.begin(), edges.end(), x) - edges.begin()) - 1;
}

struct Expected {
  std::vector<std::uint64_t> counts;
  std::uint64_t outside = 0;
  std::vector<long double> sums, magnitude;
  long double outside_sum = 0;
};

// The expected histogram of `s` over the resolved bins of `r`, with weights `w` when given.
Expected expected(const Samples& s, const HistogramDDResult& r, const std::vector<double>* w) {
  std::vector<std::vector<double>> edges;
  for (const auto& b : r.bins)
    edges.push_back(b.edge_values());
  Expected e;
  e.counts.assign(std::size_t(r.size()), 0);
  e.sums.assign(std::size_t(r.size()), 0);
  e.magnitude.assign(std::size_t(r.size()), 0);
  for (std::int64_t i = 0; i < s.n; ++i) {
    std::int64_t slot = 0;
    for (int d = 0; d < s.dims && slot >= 0; ++d) {
      const std::int64_t b = numpy_bin(edges[std::size_t(d)], s.at(i, d));
      slot = b < 0 ? -1 : slot * r.shape[std::size_t(d)] + b;
    }
    const long double weight = w ? (*w)[std::size_t(i)] : 1;
    if (slot < 0) {
      ++e.outside;
      e.outside_sum += weight;
    } else {
      ++e.counts[std::size_t(slot)];
      e.sums[std::size_t(slot)] += weight;
      e.magnitude[std::size_t(slot)] += std::fabs(weight);
    }
  }
  return e;
}

void expect_counts(const Samples& s, const HistogramDDResult& r, const std::string& what) {
  ASSERT_EQ(std::int64_t(r.counts.size()), r.size()) << what;
  const Expected e = expected(s, r, nullptr);
  std::int64_t wrong = 0;
  for (std::size_t k = 0; k < e.counts.size(); ++k)
    wrong += e.counts[k] != r.counts[k];
  EXPECT_EQ(wrong, 0) << what << ": bins that differ from numpy's placement";
  EXPECT_EQ(r.outside, e.outside) << what;
}

// `call` throws Error(invalid_argument) with a one-line message.
template <class Call>
void refused(Call call, const std::string& what) {
  try {
    call();
    ADD_FAILURE() << what << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << what;
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << what;
  }
}

class HistogramDD : public ::testing::TestWithParam<Device> {};

std::string device_test_name(const ::testing::TestParamInfo<Device>& info) {
  return device_name(info.param);
}

TEST_P(HistogramDD, EveryDTypeDimensionAndLayoutMatchesNumpysPlacement) {
  const Device dev = GetParam();
  std::mt19937_64 rng(run_seed());
  std::uniform_real_distribution<double> u(-12, 76);
  std::bernoulli_distribution nan(0.02);
  for (DType t :
       {DType::float32, DType::float64, DType::int32, DType::uint8, DType::int16, DType::int64,
        DType::uint32, DType::boolean, DType::int8, DType::uint16, DType::uint64}) {
    for (int dims : {1, 2, 3, 8}) {
      const std::int64_t n = dims == 8 ? 3001 : 20011;
      // NaN only where the range is given: numpy refuses a range found from NaN data.
      const Samples s = make_samples(t, dims, n, [&](std::int64_t k) {
        return is_float(t) && k % dims < 2 && nan(rng) ? std::nan("") : u(rng);
      });
      // Dimension 0 even over a given range, 1 explicit edges, the others even from the data.
      std::vector<HistogramBins> bins;
      for (int d = 0; d < dims; ++d) {
        if (d == 0)
          bins.push_back(HistogramBins::even(dims <= 2 ? 17 : 5, 0, 64));
        else if (d == 1)
          bins.push_back(HistogramBins::explicit_edges({-3, 0, 0.5, 8, 20.25, 40, 64}));
        else
          bins.push_back(HistogramBins::even(3));
      }
      const std::string what = std::string(dtype_name(t)) + ", " + std::to_string(dims) +
                               " dims, seed " + std::to_string(run_seed());
      expect_counts(s, histogramdd(s.table(dev), bins), what + ", (N, D)");
      expect_counts(s, histogramdd(s.columns(dev), bins), what + ", D arrays");
    }
  }
}

TEST_P(HistogramDD, ValuesOnEveryEdgeGoRightAndTheLastEdgeIsInTheLastBin) {
  const Device dev = GetParam();
  const HistogramBins xb = HistogramBins::even(7, -1.3, 2.9);
  const HistogramBins yb = HistogramBins::explicit_edges({-2, -0.75, 0, 1e-9, 3});
  std::vector<double> cx = xb.edge_values(), cy = yb.edge_values();
  for (double extra : {-1e300, 1e300, std::nan(""), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity(), 0.0, 1.0}) {
    cx.push_back(extra);
    cy.push_back(extra);
  }
  // Every x coordinate against every y coordinate, and each nudged one float64 step either way.
  std::vector<double> xs, ys;
  for (double x : cx)
    for (double y : cy)
      for (int k = -1; k <= 1; ++k) {
        xs.push_back(k ? std::nextafter(x, k * 1e308) : x);
        ys.push_back(y);
      }
  for (DType t : {DType::float64, DType::float32}) {
    const std::int64_t n = std::int64_t(xs.size());
    const Samples s = make_samples(t, 2, n, [&](std::int64_t k) {
      return k % 2 ? ys[std::size_t(k / 2)] : xs[std::size_t(k / 2)];
    });
    expect_counts(s, histogramdd(s.table(dev), {xb, yb}), dtype_name(t));
    expect_counts(s, histogramdd(s.columns(dev), {xb, yb}), dtype_name(t));
  }
}

TEST_P(HistogramDD, LargeBinCountsAndSkewedData) {
  const Device dev = GetParam();
  std::mt19937_64 rng(run_seed());
  std::normal_distribution<double> normal(0, 1.5);
  for (std::int64_t bins : {256, 1024}) {
    const std::int64_t n = bins == 256 ? 1 << 21 : 1 << 18;
    const Samples spread =
        make_samples(DType::float32, 2, n, [&](std::int64_t) { return normal(rng); });
    const std::vector<HistogramBins> b{HistogramBins::even(bins, -4, 4)};
    expect_counts(spread, histogramdd(spread.table(dev), b), std::to_string(bins) + " spread");
    expect_counts(spread, histogramdd(spread.columns(dev), b), std::to_string(bins) + " arrays");
    // Every sample in one bin: more than 2^16 of them, so packed counters carry.
    const Samples same = make_samples(DType::float32, 2, n, [](std::int64_t) { return 0.3; });
    expect_counts(same, histogramdd(same.table(dev), b), std::to_string(bins) + " all equal");
  }
  // An odd count of samples of 8-byte coordinates: vectors and a tail.
  const Samples odd =
      make_samples(DType::float64, 2, 100003, [&](std::int64_t) { return normal(rng); });
  expect_counts(odd, histogramdd(odd.table(dev), {HistogramBins::even(100)}), "float64 odd");
}

TEST_P(HistogramDD, WeightedSumsMatch) {
  const Device dev = GetParam();
  std::mt19937_64 rng(run_seed());
  std::uniform_real_distribution<double> u(-1, 1);
  for (DType wt : {DType::float32, DType::float64}) {
    for (std::int64_t bins : {10, 256}) {
      const std::int64_t n = 50021;
      const Samples s = make_samples(DType::float32, 2, n, [&](std::int64_t) { return u(rng); });
      std::vector<double> w(static_cast<std::size_t>(n));
      std::vector<unsigned char> wb(static_cast<std::size_t>(n) * dtype_size(wt));
      for (std::int64_t i = 0; i < n; ++i) {
        w[std::size_t(i)] = u(rng);
        if (wt == DType::float32) {
          const float f = float(w[std::size_t(i)]);
          w[std::size_t(i)] = f;
          std::memcpy(wb.data() + i * 4, &f, 4);
        } else {
          std::memcpy(wb.data() + i * 8, &w[std::size_t(i)], 8);
        }
      }
      const Array weights = Array::from_host(dev, wt, {n}, wb.data());
      const std::vector<HistogramBins> b{HistogramBins::even(bins, -0.9, 0.9)};
      for (bool table : {true, false}) {
        const HistogramDDResult r =
            table ? histogramdd(s.table(dev), weights, b) : histogramdd(s.columns(dev), weights, b);
        ASSERT_TRUE(r.weighted());
        const Expected e = expected(s, r, &w);
        for (std::size_t k = 0; k < e.sums.size(); ++k) {
          const long double bound = e.counts[k] * std::ldexp(1.0L, -52) * e.magnitude[k];
          ASSERT_LE(std::fabs(r.sums[k] - e.sums[k]), bound) << "bin " << k;
        }
        EXPECT_NEAR(r.outside_sum, double(e.outside_sum), 1e-9);
      }
    }
  }
}

TEST_P(HistogramDD, EmptyInputHasTheUnitRangeAndNoCounts) {
  const Device dev = GetParam();
  const Array empty(dev, DType::float32, {0, 3});
  const HistogramDDResult r = histogramdd(empty, {HistogramBins::even(4)});
  ASSERT_EQ(r.shape, (std::vector<std::int64_t>{4, 4, 4}));
  EXPECT_EQ(r.bins[2].lo, 0);
  EXPECT_EQ(r.bins[2].hi, 1);
  EXPECT_EQ(std::count(r.counts.begin(), r.counts.end(), 0u), 64);
  EXPECT_EQ(r.outside, 0u);
}

INSTANTIATE_TEST_SUITE_P(Devices, HistogramDD, ::testing::ValuesIn(devices()), device_test_name);

TEST(HistogramDDDensity, IsNumpysDensity) {
  const Device cpu = Device::open(Backend::cpu);
  const std::vector<double> xy{0.1, 0.1, 0.2, 2.5, 0.9, 2.9, 0.95, 0.4};  // (4, 2)
  const Array a = Array::from_host(cpu, DType::float64, {4, 2}, xy.data());
  const HistogramDDResult r =
      histogramdd(a, {HistogramBins::even(2, 0, 1), HistogramBins::explicit_edges({0, 1, 3})});
  ASSERT_EQ(r.counts, (std::vector<std::uint64_t>{1, 1, 1, 1}));
  // numpy: hist / width_x / width_y / total.
  const std::vector<double> density = histogramdd_density(r);
  const std::vector<double> widths{1.0, 2.0};
  for (std::size_t k = 0; k < 4; ++k)
    EXPECT_EQ(density[k], 1.0 / 0.5 / widths[k % 2] / 4.0) << k;
}

TEST(HistogramDDSerial, ParallelAndSerialAgreeOnTheCpu) {
  const Device cpu = Device::open(Backend::cpu);
  std::mt19937_64 rng(run_seed());
  std::uniform_real_distribution<double> u(-1, 1);
  const Samples s = make_samples(DType::float64, 3, 100000, [&](std::int64_t) { return u(rng); });
  HistogramOptions serial;
  serial.variant = "serial";
  const auto a = histogramdd(s.table(cpu), {HistogramBins::even(9)}, serial);
  const auto b = histogramdd(s.table(cpu), {HistogramBins::even(9)});
  EXPECT_EQ(a.counts, b.counts);
  EXPECT_EQ(a.outside, b.outside);
}

// A plan made once and run twice on both layouts, counting and weighted, gives what
// histogramdd gives (the bins in C order, then the samples in no bin); a plan refuses bins
// without a range and samples, weights or outputs it was not made for.
TEST_P(HistogramDD, JointHistogrammerRunsAgainAndMatchesHistogramdd) {
  const Device dev = GetParam();
  std::mt19937_64 rng(run_seed() + 9);
  std::normal_distribution<double> normal(0, 1.5);
  const std::int64_t n = 30011;
  const Samples s = make_samples(DType::float32, 2, n, [&](std::int64_t) { return normal(rng); });
  const std::vector<HistogramBins> bins{HistogramBins::even(40, -3, 3),
                                        HistogramBins::explicit_edges({-2, -1, 0, 0.5, 4})};
  const HistogramDDResult expected = histogramdd(s.table(dev), bins);
  std::vector<double> w(static_cast<std::size_t>(n));
  for (double& v : w)
    v = normal(rng);
  const Array weights = Array::from_vector(dev, w);
  const HistogramDDResult expected_sums = histogramdd(s.table(dev), weights, bins);
  for (bool table : {true, false}) {
    const std::vector<Array> samples = table ? std::vector<Array>{s.table(dev)} : s.columns(dev);
    JointHistogrammer plan(dev, DType::float32, n, table, bins);
    ASSERT_EQ(plan.slots(), 40 * 4 + 1);
    EXPECT_EQ(plan.shape(), (std::vector<std::int64_t>{40, 4}));
    Buffer out(dev, std::size_t(plan.slots()) * 8);
    std::vector<std::uint64_t> counts(std::size_t(plan.slots()));
    for (int run = 0; run < 2; ++run) {
      plan.run(samples, out);
      out.download(counts.data(), out.bytes());
      EXPECT_EQ(std::vector<std::uint64_t>(counts.begin(), counts.end() - 1), expected.counts)
          << "table " << table << ", run " << run;
      EXPECT_EQ(counts.back(), expected.outside) << "table " << table << ", run " << run;
    }
    JointHistogrammer weighted(dev, DType::float32, n, table, bins, DType::float64);
    weighted.run(samples, weights, out);
    std::vector<double> sums(std::size_t(plan.slots()));
    out.download(sums.data(), out.bytes());
    for (std::size_t k = 0; k + 1 < sums.size(); ++k)
      EXPECT_NEAR(sums[k], expected_sums.sums[k], 1e-9 * (1 + std::fabs(expected_sums.sums[k])));
    EXPECT_NEAR(sums.back(), expected_sums.outside_sum, 1e-9 * (1 + std::fabs(sums.back())));
    const Buffer small(dev, 8);
    refused([&] { plan.run(samples, small); }, "a small output");
    refused([&] { plan.run(samples, weights, out); }, "weights for a counting plan");
    refused([&] { weighted.run(samples, out); }, "no weights for a weighted plan");
    refused(
        [&] {
          JointHistogrammer(dev, DType::float32, n, table, {HistogramBins::even(4), bins[1]});
        },
        "bins without a range");
    JointHistogrammer shorter(dev, DType::float32, n - 1, table, bins);
    refused([&] { shorter.run(samples, out); }, "samples of another length");
    JointHistogrammer other(dev, DType::float64, n, table, bins);
    refused([&] { other.run(samples, out); }, "samples of another dtype");
  }
}

// The GPU backends under tunings that change where samples are counted (one lane-striped
// column, ranges of 32-bit counters, packed 16- and 5-bit fields in ranges with the hot-row table,
// the global counts): 2-D float32 with even bins on both axes (the float rule, 16-byte loads) and
// with explicit edges, both layouts, on spread data, data mostly on one sample and samples on
// every edge of both axes (with NaN and ±inf).
class HistogramDDLayouts : public ::testing::TestWithParam<TunedDevice> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HistogramDDLayouts);  // no such device here
TEST_P(HistogramDDLayouts, MatchNumpysPlacement) {
  const TunedDevice& target = GetParam();
  const Device dev = target.device;
  ScopedTuning tuning(target.setting);
  std::mt19937_64 rng(run_seed() + target.index);
  std::normal_distribution<double> normal(0, 1.2);
  std::bernoulli_distribution hot(0.7);
  const std::int64_t n = (1 << 17) + 3;  // vectors, and a tail
  const Samples spread =
      make_samples(DType::float32, 2, n, [&](std::int64_t) { return normal(rng); });
  const Samples skewed = make_samples(DType::float32, 2, n,
                                      [&](std::int64_t) { return hot(rng) ? 0.3 : normal(rng); });
  const HistogramBins x = HistogramBins::even(256, -3, 3.5), y = HistogramBins::even(256, -4, 3);
  std::vector<double> cx = x.edge_values(), cy = y.edge_values();
  for (double extra : {std::nan(""), std::numeric_limits<double>::infinity(), -1e30, 1e30}) {
    cx.push_back(extra);
    cy.push_back(extra);
  }
  const Samples edges =
      make_samples(DType::float32, 2, std::int64_t(cx.size() * cy.size()), [&](std::int64_t k) {
        const std::size_t sample = std::size_t(k / 2);
        return k % 2 ? cy[sample % cy.size()] : cx[sample / cy.size()];
      });
  const std::vector<std::vector<HistogramBins>> bin_sets{
      {x, y},
      {HistogramBins::even(50, -3, 3), HistogramBins::even(40, -3, 3)},
      {x, HistogramBins::explicit_edges(y.edge_values())}};
  for (const auto& bins : bin_sets)
    for (const Samples* s : {&spread, &skewed, &edges}) {
      const std::string what = target.setting + ", " + std::to_string(bins[0].count) + "x" +
                               std::to_string(bins[1].count) + " bins, " +
                               (s == &spread   ? "spread"
                                : s == &skewed ? "skewed"
                                               : "edges") +
                               ", seed " + std::to_string(run_seed());
      expect_counts(*s, histogramdd(s->table(dev), bins), what + ", (N, 2)");
      expect_counts(*s, histogramdd(s->columns(dev), bins), what + ", 2 arrays");
    }
}
INSTANTIATE_TEST_SUITE_P(
    Tunings, HistogramDDLayouts,
    ::testing::ValuesIn(tuned_devices(
        [](const Device& d) { return d.backend() != Backend::cpu; },
        {"", "histogram.fast.max_columns=1,histogram.fast.runs_below_columns=0",
         "histogram.fast.striped_kib=8,histogram.fast.max_passes=40,histogram.opencl.packed=0",
         "histogram.fast.striped_kib=8,histogram.fast.max_passes=40,histogram.opencl.packed=1,"
         "histogram.opencl.field_bits=16",
         "histogram.fast.striped_kib=8,histogram.fast.max_passes=40,histogram.opencl.packed=1,"
         "histogram.opencl.field_bits=5,histogram.opencl.hot_entries=4",
         "histogram.fast.max_passes=0"})),
    tuned_device_name);

// A range of no width widens to [v - 0.5, v + 0.5], as numpy's histogramdd does.
TEST(HistogramDDErrors, EmptyRangeWidensAsNumpys) {
  const Device cpu = Device::open(Backend::cpu);
  const std::vector<float> xs = {1, 1.25f, 3}, ys = {0, 1, 1};
  const Array x = Array::from_host(cpu, DType::float32, {3}, xs.data());
  const Array y = Array::from_host(cpu, DType::float32, {3}, ys.data());
  const HistogramDDResult r =
      histogramdd({x, y}, {HistogramBins::even(2, 1, 1), HistogramBins::even(2, 0, 2)});
  EXPECT_EQ(r.bins[0].lo, 0.5);
  EXPECT_EQ(r.bins[0].hi, 1.5);
  // numpy.histogram2d([1, 1.25, 3], [0, 1, 1], 2, [[1, 1], [0, 2]]): [[0, 0], [1, 1]], 3 outside.
  EXPECT_EQ(r.counts, (std::vector<std::uint64_t>{0, 0, 1, 1}));
  EXPECT_EQ(r.outside, 1u);
}

TEST(HistogramDDErrors, BadInputIsRefusedWithOneLine) {
  const Device cpu = Device::open(Backend::cpu);
  const Array nine(cpu, DType::float32, {10, 9});
  const Array x(cpu, DType::float32, {10}), y(cpu, DType::float32, {11});
  const Array z(cpu, DType::float64, {10}), w(cpu, DType::float64, {9});
  refused([&] { histogramdd(nine, {HistogramBins::even(2)}); }, "9 dimensions");
  refused([&] { histogramdd({x, y}, {HistogramBins::even(2)}); }, "lengths differ");
  refused([&] { histogramdd({x, z}, {HistogramBins::even(2)}); }, "dtypes differ");
  refused([&] { histogramdd({x, x}, {HistogramBins::per_value()}); }, "per-value bins");
  refused(
      [&] {
        histogramdd({x, x, x}, {HistogramBins::even(2), HistogramBins::even(2)});
      },
      "two bins for three dimensions");
  refused([&] { histogramdd({x, x}, {HistogramBins::even(1 << 14, 0, 1)}); }, "2^28 bins");
  refused([&] { histogramdd({x, x}, {HistogramBins::even(3, 2, 1)}); }, "reversed range");
  refused([&] { histogramdd({x, x}, {HistogramBins::explicit_edges({0, 2, 1})}); }, "edges");
  refused([&] { histogramdd({x, x}, w, {HistogramBins::even(2, 0, 1)}); }, "weights length");
}

}  // namespace
}  // namespace parpat::test
