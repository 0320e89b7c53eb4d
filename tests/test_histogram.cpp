// Histogram: every backend × variant present against the CPU reference with exact counts
// (DESIGN.md §2, §6): random inputs at the edge sizes, the distributions, values on and around
// the edges, NaN and infinities, bin counts 1 … 2^20, explicit edges, per-value bins, the
// default range, bad input, the CLI (the text example, numpy cross-check) and, on GPUs, one
// uint8 case above 2^32 values. The layouts under tuning values: test_histogram_layouts.cpp.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "histogram/histogram_internal.hpp"
#include "histogram_support.hpp"
#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/registry.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

std::vector<Target> targets() {
  return variant_targets("histogram");
}

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

class HistogramTest : public ::testing::TestWithParam<Target> {
 protected:
  // The default range and per-value bins of int32 come from parpat::reduce on the same device.
  bool device_reduces() const {
    for (const auto& v : list_variants("reduce"))
      if (v.backend == backend_name(GetParam().device.backend())) return true;
    return false;
  }

  bool covers(DType t, std::int64_t n, const HistogramBins& b) {
    const auto& v = detail::find_histogram_variant(GetParam().device.backend(), GetParam().variant);
    return v.supports(problem_of(t, n, b), GetParam().device.info());
  }

  // Counts `host` (n values of t) with resolved bins `b` on the target and compares every count
  // with the reference. Returns false when the variant does not cover the case.
  bool check(DType t, std::int64_t n, const std::vector<unsigned char>& host,
             const HistogramBins& b, const std::string& what) {
    if (!covers(t, n, b)) return false;
    SCOPED_TRACE(what + ": " + std::to_string(n) + " " + dtype_name(t) + " into " +
                 std::to_string(b.count) + " bins, seed " + std::to_string(run_seed()));
    auto p = problem_of(t, n, b);
    std::vector<std::uint64_t> expected(static_cast<std::size_t>(p.slots()));
    detail::histogram_reference(host.data(), p, expected.data());
    Array in = Array::from_host(GetParam().device, t, {n}, host.data());
    HistogramResult r = histogram(in, b, {GetParam().variant});
    EXPECT_EQ(r.counts.size(), static_cast<std::size_t>(b.count));
    std::size_t bins = static_cast<std::size_t>(b.count);
    for (std::size_t i = 0; i < bins && i < r.counts.size(); ++i) {
      if (r.counts[i] != expected[i]) {
        ADD_FAILURE() << "bin " << i << ": " << r.counts[i] << " instead of " << expected[i];
        return true;
      }
    }
    EXPECT_EQ(r.underflow, expected[bins]);
    EXPECT_EQ(r.overflow, expected[bins + 1]);
    EXPECT_EQ(r.nan, expected[bins + 2]);
    return true;
  }
};

TEST_P(HistogramTest, RandomInputsAtEdgeSizes) {
  std::mt19937_64 rng(run_seed());
  const std::int64_t sizes[] = {1, 2, 31, 32, 33, 1023, 1024, 1025, 4099, 65537, (1 << 20) + 7};
  int covered = 0;
  for (DType t : kDTypes)
    for (std::int64_t bins : {1, 7, 256, 1000})
      for (std::int64_t n : sizes) {
        const auto range = range_for(t);
        const double lo = range.first, hi = range.second;
        // Values reach a little beyond the range so underflow and overflow are exercised.
        double margin = (hi - lo) * 0.05;
        std::uniform_real_distribution<double> u(lo - margin, hi + margin);
        auto host = make_values(t, n, [&] { return fit(t, u(rng)); });
        covered += check(t, n, host, HistogramBins::even(bins, lo, hi), "random");
        if (HasFailure()) return;
      }
  EXPECT_GT(covered, 0) << "the variant covers no case at all";
}

TEST_P(HistogramTest, Distributions) {
  std::mt19937_64 rng(run_seed() + 1);
  const std::int64_t n = (1 << 20) + 3;
  for (DType t : {DType::uint8, DType::int32, DType::float32, DType::float64})
    for (std::int64_t bins : {7, 256, 1024}) {
      const auto range = range_for(t);
      const double lo = range.first, hi = range.second;
      double mid = (lo + hi) / 2, width = hi - lo;
      std::uniform_real_distribution<double> uniform(lo, hi);
      std::normal_distribution<double> normal(mid, width / 8);
      std::bernoulli_distribution hot(0.9);
      auto fix = [&](double v) { return is_float(t) ? v : std::round(std::clamp(v, lo, hi)); };
      check(t, n, make_values(t, n, [&] { return fix(uniform(rng)); }),
            HistogramBins::even(bins, lo, hi), "uniform");
      check(t, n, make_values(t, n, [&] { return fix(normal(rng)); }),
            HistogramBins::even(bins, lo, hi), "normal");
      check(t, n, make_values(t, n, [&] { return fix(mid); }), HistogramBins::even(bins, lo, hi),
            "all-equal");
      check(t, n,
            make_values(t, n, [&] { return fix(hot(rng) ? lo + width * 0.3 : uniform(rng)); }),
            HistogramBins::even(bins, lo, hi), "90% in one bin");
      if (HasFailure()) return;
    }
}

TEST_P(HistogramTest, ValuesOnAndAroundEdgesNaNAndInfinities) {
  std::mt19937_64 rng(run_seed() + 2);
  const double inf = std::numeric_limits<double>::infinity();
  struct Range {
    double lo, hi;
    std::int64_t bins;
  };
  // Steps that are not exact in binary, so the edges are rounded like numpy.linspace rounds them.
  // The last range is wider than FLT_MAX / 2: x − lo would overflow in float arithmetic.
  // [0, 1) in 65536 bins and [0, 2^-100) in 1024 have power-of-two widths from 0: `fast` on CUDA
  // takes float32 there as exact, subnormals included.
  for (Range r : {Range{0.1, 0.7, 7}, Range{-1.3, 2.9, 1000}, Range{-3, 3, 6}, Range{0, 1, 10},
                  Range{1e-3, 1e3, 4096}, Range{-3e38, 3e38, 1000}, Range{0, 1, 65536},
                  Range{0, 0x1p-100, 1024}}) {
    HistogramBins b = HistogramBins::even(r.bins, r.lo, r.hi);
    std::vector<double> edges = b.edge_values();
    for (DType t : {DType::float32, DType::float64}) {
      std::vector<double> pool = {r.lo,
                                  r.hi,
                                  std::nextafter(r.lo, -inf),
                                  std::nextafter(r.hi, inf),
                                  -inf,
                                  inf,
                                  std::nan(""),
                                  -0.0,
                                  0.0,
                                  0x1p-149,  // the float32 subnormals, either sign
                                  -0x1p-149,
                                  0x1.8p-130,
                                  -0x1.8p-130,
                                  3e38,
                                  r.lo - 1,
                                  r.hi + 1};
      for (double e : edges) {
        pool.push_back(e);
        pool.push_back(std::nextafter(e, -inf));
        pool.push_back(std::nextafter(e, inf));
        pool.push_back(static_cast<double>(static_cast<float>(e)));  // the float32 near an edge
      }
      std::uniform_int_distribution<std::size_t> pick(0, pool.size() - 1);
      for (std::int64_t n : {std::int64_t{64}, std::int64_t{100003}}) {
        auto host = make_values(t, n, [&] { return pool[pick(rng)]; });
        check(t, n, host, b, "edges");
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(HistogramTest, BinCounts) {
  std::mt19937_64 rng(run_seed() + 3);
  const std::int64_t n = (1 << 18) + 5;
  for (std::int64_t bins : {1, 7, 256, 1000, 4096, 65536, 1 << 20})
    for (DType t : {DType::int8, DType::uint16, DType::int32, DType::int64, DType::float32}) {
      const auto range = range_for(t);
      const double lo = range.first, hi = range.second;
      std::uniform_real_distribution<double> u(lo, hi);
      auto host = make_values(t, n, [&] { return is_float(t) ? u(rng) : std::round(u(rng)); });
      check(t, n, host, HistogramBins::even(bins, lo, hi), "bin count");
      if (HasFailure()) return;
    }
}

TEST_P(HistogramTest, ExplicitEdges) {
  std::mt19937_64 rng(run_seed() + 4);
  for (std::size_t count : {2u, 9u, 300u, 70000u}) {
    std::uniform_real_distribution<double> u(-50, 50);
    std::vector<double> edges(count);
    for (auto& e : edges)
      e = u(rng);
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    if (edges.size() < 2) continue;
    HistogramBins b = HistogramBins::explicit_edges(edges);
    std::vector<double> pool = edges;
    pool.push_back(std::nan(""));
    std::uniform_int_distribution<int> coin(0, 2);
    std::uniform_int_distribution<std::size_t> pick(0, pool.size() - 1);
    for (DType t : kDTypes) {
      const std::int64_t n = 50001;
      auto host = make_values(t, n, [&] {
        double v = coin(rng) ? u(rng) * 1.1 : pool[pick(rng)];
        if (!is_float(t)) v = std::round(std::clamp(std::isnan(v) ? 0.0 : v, 0.0, 100.0));
        return v;
      });
      check(t, n, host, b, "explicit edges");
      if (HasFailure()) return;
    }
  }
}

TEST_P(HistogramTest, PerValueBinsMatchBincount) {
  std::mt19937_64 rng(run_seed() + 5);
  const Target& target = GetParam();
  for (DType t : {DType::uint8, DType::uint16, DType::int32}) {
    if (t == DType::int32 && !device_reduces()) {
      std::cerr << "[parpat] int32 per-value bins skipped: no reduce variant on "
                << backend_name(target.device.backend()) << " in this build\n";
      continue;
    }
    const std::int64_t n = 200003;
    std::uniform_int_distribution<int> u(t == DType::int32 ? -5 : 0,
                                         t == DType::uint8 ? 255 : 3000);
    auto host = make_values(t, n, [&] { return u(rng); });
    Array in = Array::from_host(target.device, t, {n}, host.data());
    HistogramBins resolved = resolve_bins(in, HistogramBins::per_value());
    if (!covers(t, n, resolved)) continue;
    HistogramResult r = histogram(in, HistogramBins::per_value(), {target.variant});
    std::vector<std::uint64_t> expected(r.counts.size());
    std::uint64_t negative = 0;
    std::int64_t max = 0;
    visit_dtype(t, [&](auto v) {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T>) {
        const T* p = reinterpret_cast<const T*>(host.data());
        for (std::int64_t i = 0; i < n; ++i)
          max = std::max<std::int64_t>(max, p[i]);
        for (std::int64_t i = 0; i < n; ++i) {
          if (p[i] < 0) {
            ++negative;
          } else {
            ++expected.at(static_cast<std::size_t>(p[i]));
          }
        }
      }
    });
    std::size_t want = t == DType::uint8 ? 256 : t == DType::uint16 ? 65536 : max + 1;
    EXPECT_EQ(r.counts.size(), want) << dtype_name(t);
    EXPECT_EQ(r.counts, expected) << dtype_name(t) << ", seed " << run_seed();
    EXPECT_EQ(r.underflow, negative);
    EXPECT_EQ(r.overflow, 0u);
  }
}

TEST_P(HistogramTest, DefaultRangeIsMinMaxOfTheData) {
  std::mt19937_64 rng(run_seed() + 6);
  const Target& target = GetParam();
  if (!device_reduces())
    GTEST_SKIP() << "this build has no reduce variant on " << backend_name(target.device.backend())
                 << " (the default range is the data's min and max)";
  std::uniform_real_distribution<double> u(-3, 7);
  const std::int64_t n = 10007;
  auto host = make_values(DType::float64, n, [&] { return u(rng); });
  const double* x = reinterpret_cast<const double*>(host.data());
  double lo = *std::min_element(x, x + n), hi = *std::max_element(x, x + n);
  Array in = Array::from_host(target.device, DType::float64, {n}, host.data());
  HistogramResult r = histogram(in, HistogramBins::even(13), {target.variant});
  EXPECT_EQ(r.bins.lo, lo);
  EXPECT_EQ(r.bins.hi, hi);
  check(DType::float64, n, host, HistogramBins::even(13, lo, hi), "default range");
  // min == max: numpy widens the range to [v − 0.5, v + 0.5].
  auto same = make_values(DType::int32, 100, [] { return 42; });
  Array in_same = Array::from_host(target.device, DType::int32, {100}, same.data());
  HistogramResult s = histogram(in_same, HistogramBins::even(10), {target.variant});
  EXPECT_EQ(s.bins.lo, 41.5);
  EXPECT_EQ(s.bins.hi, 42.5);
  EXPECT_EQ(s.counts.at(5), 100u);  // 42 sits on the inner edge 42.0: it goes right
  // So does a range given as [42, 42].
  HistogramResult given = histogram(in_same, HistogramBins::even(10, 42, 42), {target.variant});
  EXPECT_EQ(given.bins.lo, 41.5);
  EXPECT_EQ(given.bins.hi, 42.5);
  EXPECT_EQ(given.counts, s.counts);
}

// uint16's default range is the data's [min, max], found with the reduce pattern.
TEST_P(HistogramTest, DefaultRangeOfUint16) {
  std::mt19937_64 rng(run_seed() + 7);
  std::uniform_int_distribution<int> u(100, 3000);
  const std::int64_t n = 20011;
  auto host = make_values(DType::uint16, n, [&] { return u(rng); });
  const std::uint16_t* x = reinterpret_cast<const std::uint16_t*>(host.data());
  const double lo = *std::min_element(x, x + n), hi = *std::max_element(x, x + n);
  Array in = Array::from_host(GetParam().device, DType::uint16, {n}, host.data());
  HistogramResult r = histogram(in, HistogramBins::even(10), {GetParam().variant});
  EXPECT_EQ(r.bins.lo, lo);
  EXPECT_EQ(r.bins.hi, hi);
  check(DType::uint16, n, host, HistogramBins::even(10, lo, hi), "uint16 default range");
}

TEST_P(HistogramTest, EmptyInput) {
  const Target& target = GetParam();
  for (DType t : kDTypes) {
    Array empty(target.device, t, {0});
    HistogramResult r = histogram(empty, HistogramBins::even(5), {target.variant});
    EXPECT_EQ(r.bins.lo, 0.0);
    EXPECT_EQ(r.bins.hi, 1.0);
    EXPECT_EQ(r.counts, std::vector<std::uint64_t>(5, 0));
    EXPECT_EQ(r.underflow + r.overflow + r.nan, 0u);
  }
}

// 4- and 8-byte integers over a power-of-two bin width take the integer shift rule on every
// backend's `fast` or `parallel` kernel: spread, skewed and all-equal data (whole blocks of one
// value are added at once), values reaching past the range, the dtype's extremes among them.
TEST_P(HistogramTest, IntegersOverPowerOfTwoWidths) {
  std::mt19937_64 rng(run_seed() + 9);
  const std::int64_t n = (1 << 20) + 3;
  for (DType t : {DType::int32, DType::uint32, DType::int64, DType::uint64})
    for (std::int64_t bins : {256, 2048}) {
      const bool is_signed = t == DType::int32 || t == DType::int64;
      const double lo = is_signed ? -1024 : 0, hi = lo + 2048;
      std::uniform_int_distribution<std::int64_t> uniform(static_cast<std::int64_t>(lo) - 64,
                                                          static_cast<std::int64_t>(hi) + 64);
      std::bernoulli_distribution hot(0.9), extreme(0.001);
      const double lowest = fit(t, -1e30), highest = fit(t, 1e30);  // about the dtype's ends
      auto spread = [&] {
        if (extreme(rng)) return hot(rng) ? highest : lowest;
        return fit(t, static_cast<double>(uniform(rng)));
      };
      const HistogramBins b = HistogramBins::even(bins, lo, hi);
      check(t, n, make_values(t, n, spread), b, "uniform, extremes");
      check(t, n, make_values(t, n, [&] { return hi; }), b, "all equal to hi");
      check(t, n, make_values(t, n, [&] { return hot(rng) ? lo + 16 : spread(); }), b,
            "90% on one value");
      if (HasFailure()) return;
    }
}

TEST_P(HistogramTest, PlanRunsRepeatedlyWithoutStaleCounts) {
  std::mt19937_64 rng(run_seed() + 7);
  const Target& target = GetParam();
  const std::int64_t n = 300001;
  HistogramBins b = HistogramBins::even(256, 0, 1);
  if (!covers(DType::float32, n, b)) GTEST_SKIP() << "variant does not cover 256 bins";
  std::uniform_real_distribution<double> u(0, 1);
  auto host = make_values(DType::float32, n, [&] { return u(rng); });
  auto p = problem_of(DType::float32, n, b);
  std::vector<std::uint64_t> expected(static_cast<std::size_t>(p.slots()));
  detail::histogram_reference(host.data(), p, expected.data());
  Array in = Array::from_host(target.device, DType::float32, {n}, host.data());
  Histogrammer plan(target.device, DType::float32, n, b, {target.variant});
  Buffer counts(target.device, static_cast<std::size_t>(plan.slots()) * 8);
  for (int rep = 0; rep < 3; ++rep) {
    plan.run(in, counts);
    std::vector<std::uint64_t> got(expected.size());
    counts.download(got.data(), got.size() * 8);
    EXPECT_EQ(got, expected) << "run " << rep;
  }
}

TEST_P(HistogramTest, Uint8BeyondTwoToThe32Values) {
  const Target& target = GetParam();
  const DeviceInfo& info = target.device.info();
  const std::int64_t n = (std::int64_t{1} << 32) + (std::int64_t{1} << 26) + 4099;
  if (target.device.backend() == Backend::cpu || !info.independent_groups ||
      info.global_memory < static_cast<std::uint64_t>(n) + (std::uint64_t{2} << 30))
    GTEST_SKIP() << "the 2^32-value uint8 case runs on GPU devices with more than 6 GiB only";
  // Built once and shared by every GPU variant: 4 GiB of values whose hot bin passes 2^32.
  static const std::vector<std::uint8_t> host = [n] {
    std::vector<std::uint8_t> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
      v[static_cast<std::size_t>(i)] =
          static_cast<std::uint8_t>((i * 7) % 251 < 250 ? 65 : i % 256);
    return v;
  }();
  static const std::vector<std::uint64_t> expected = [] {
    std::vector<std::uint64_t> counts(256);
    for (auto v : host)
      ++counts[v];
    return counts;
  }();
  Array in = Array::from_host(target.device, DType::uint8, {n}, host.data());
  HistogramResult r = histogram(in, HistogramBins::per_value(), {target.variant});
  EXPECT_EQ(r.counts, expected);
  EXPECT_GT(expected[65], std::uint64_t{1} << 32);  // the hot bin itself passes 2^32
}

// Bin counts beyond shared memory in 32 bits take 16-bit counters on GPUs: each block's rows
// pass 2^16 many times here (2^26 values over a few bins of both halves of a word, in runs and
// in spread vectors), so every carry must land exactly.
TEST_P(HistogramTest, HotBinsOfManyBinsCarryExactly) {
  const Target& target = GetParam();
  if (target.device.backend() == Backend::cpu || !target.device.info().independent_groups)
    GTEST_SKIP() << "2^26 values: GPU devices only";
  const std::int64_t n = std::int64_t{1} << 26;
  std::mt19937_64 rng(run_seed() + 77);
  const float hot[] = {0.2500076f, 0.2500229f, 0.5000076f, 0.5000229f, 0.75f};  // rows 2k, 2k + 1
  std::uniform_int_distribution<int> pick(0, 4);
  std::uniform_real_distribution<float> spread(0.0f, 1.0f);
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    // Stretches of one value (runs), of cycling hot values, and a little spread data.
    std::int64_t stretch = (i >> 12) % 3;
    values[static_cast<std::size_t>(i)] = stretch == 0   ? hot[(i >> 12) % 5]
                                          : stretch == 1 ? hot[i % 5]
                                          : (i % 8 == 0) ? spread(rng)
                                                         : hot[pick(rng)];
  }
  std::vector<unsigned char> host(values.size() * sizeof(float));
  std::memcpy(host.data(), values.data(), host.size());
  for (std::int64_t bins : {65536, 100000})
    check(DType::float32, n, host, HistogramBins::even(bins, 0.0, 1.0), "hot bins");
}

TEST_P(HistogramTest, BadInputIsRejected) {
  const Target& target = GetParam();
  auto vals = make_values(DType::float32, 10, [] { return 0.5; });
  Array in = Array::from_host(target.device, DType::float32, {10}, vals.data());
  auto rejected = [&](const HistogramBins& b, const char* what) {
    try {
      histogram(in, b, {target.variant});
      ADD_FAILURE() << what << " must be rejected";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << what;
    }
  };
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  rejected(HistogramBins::even(0, 0, 1), "zero bins");
  rejected(HistogramBins::even(-3, 0, 1), "negative bins");
  rejected(HistogramBins::even(kMaxHistogramBins + 1, 0, 1), "too many bins");
  rejected(HistogramBins::even(4, 2, 1), "lo > hi");
  rejected(HistogramBins::even(4, nan, 1), "NaN range");
  rejected(HistogramBins::even(4, 0, inf), "infinite range");
  rejected(HistogramBins::explicit_edges({0, 1, 1, 2}), "repeated edges");
  rejected(HistogramBins::explicit_edges({0, 2, 1}), "decreasing edges");
  rejected(HistogramBins::explicit_edges({0}), "a single edge");
  rejected(HistogramBins::explicit_edges({0, nan}), "NaN edge");
  rejected(HistogramBins::per_value(), "per-value bins of float input");
}

INSTANTIATE_TEST_SUITE_P(Devices, HistogramTest, ::testing::ValuesIn(targets()), target_name);

// The CLI: the text example of the issue (letters a–z in groups of four), JSON, bad input.
class HistogramCli : public ::testing::Test {
 protected:
  std::string text_file() {
    std::string path = temp_path("text.txt");
    std::ofstream f(path, std::ios::binary);
    for (char c = 'a'; c <= 'z'; ++c)
      f << std::string(4, c);
    return path;
  }
};

TEST_F(HistogramCli, TextExample) {
  std::string path = text_file();
  for (const auto& d : devices()) {
    std::string backend = backend_name(d.backend());
    auto r = run_cli("histogram --bins 7 --range 97 125 --json --backend " + backend + " " + path);
    ASSERT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["counts"], nlohmann::json({16, 16, 16, 16, 16, 16, 8})) << backend;
    EXPECT_EQ(j["range"], nlohmann::json({97.0, 125.0}));
    EXPECT_EQ(j["n"], 104);
    EXPECT_EQ(j["underflow"], 0);
    EXPECT_EQ(j["overflow"], 0);
    EXPECT_EQ(j["nan"], 0);
    EXPECT_EQ(j["pattern"], "histogram");
    EXPECT_EQ(j["dtype"], "uint8");
  }
  auto table = run_cli("histogram --bins 7 --range 97 125 --backend cpu " + path);
  ASSERT_EQ(table.status, 0);
  EXPECT_NE(table.out.find("[121, 125]"), std::string::npos) << table.out;
  std::string svg = temp_path("text.svg");
  auto plot = run_cli("histogram --bins 7 --range 97 125 --backend cpu --plot " + svg + " " + path);
  ASSERT_EQ(plot.status, 0);
  std::ifstream in(svg);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(content.find("<svg"), std::string::npos);
  EXPECT_EQ(std::count(content.begin(), content.end(), '\n') > 7, true);
  // Raw bytes default to one bin per byte value.
  auto per = run_cli("histogram --json --backend cpu " + path);
  ASSERT_EQ(per.status, 0) << per.err;
  auto pj = nlohmann::json::parse(per.out);
  EXPECT_EQ(pj["counts"].size(), 256u);
  EXPECT_EQ(pj["counts"][97], 4);
}

TEST_F(HistogramCli, BadInputExitsWithStatusTwoAndOneLine) {
  std::string path = text_file();
  std::string floats = temp_path("f.npy");
  std::vector<float> fv = {0.5f, 1.5f};
  write_npy(floats, DType::float32, {2}, fv.data());
  std::string bad_edges = temp_path("bad_edges.npy");
  std::vector<double> ev = {0, 2, 1};
  write_npy(bad_edges, DType::float64, {3}, ev.data());
  std::string huge_edges = temp_path("huge_edges.npy");  // 2^53 + 1 is no float64
  std::vector<std::int64_t> hv = {0, (std::int64_t{1} << 53) + 1};
  write_npy(huge_edges, DType::int64, {2}, hv.data());
  std::string bool_edges = temp_path("bool_edges.npy");
  std::vector<std::uint8_t> bv = {0, 1};
  write_npy(bool_edges, DType::boolean, {2}, bv.data());
  for (std::string args :
       {"--bins 0 " + path, "--bins -4 " + path, "--bins 100000000000 " + path,
        "--bins 4 --range 6 5 " + path, "--bins 4 --range nan 5 " + path,
        "--bins 4 --range 0 inf " + path, "--edges " + bad_edges + " " + floats,
        "--edges " + huge_edges + " " + floats, "--edges " + bool_edges + " " + floats,
        "--per-value " + floats, std::string("/nonexistent/file.npy")}) {
    auto r = run_cli("histogram --backend cpu " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("parpat: error: ", 0), 0u) << r.err;
  }
}

// Edges of any real dtype are read as the float64 values they hold.
TEST_F(HistogramCli, EdgesOfAnyRealDtypeCountAsFloat64Edges) {
  std::string floats = temp_path("edge_values.npy");
  std::vector<float> fv = {-1.5f, 0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 2.0f, 3.0f, 7.0f};
  write_npy(floats, DType::float32, {9}, fv.data());
  std::string f64 = temp_path("edges_f64.npy"), i32 = temp_path("edges_i32.npy"),
              f16 = temp_path("edges_f16.npy");
  std::vector<double> dv = {0, 1, 2, 5};
  std::vector<std::int32_t> iv = {0, 1, 2, 5};
  std::vector<std::uint16_t> hv = {0x0000, 0x3C00, 0x4000, 0x4500};  // float16 0, 1, 2, 5
  write_npy(f64, DType::float64, {4}, dv.data());
  write_npy(i32, DType::int32, {4}, iv.data());
  write_npy(f16, DType::float16, {4}, hv.data());
  auto want = run_cli("histogram --backend cpu --json --edges " + f64 + " " + floats);
  ASSERT_EQ(want.status, 0) << want.err;
  EXPECT_EQ(nlohmann::json::parse(want.out)["counts"], nlohmann::json({4, 1, 2}));
  for (const std::string& edges : {i32, f16}) {
    auto r = run_cli("histogram --backend cpu --json --edges " + edges + " " + floats);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["counts"], nlohmann::json::parse(want.out)["counts"])
        << edges;
    EXPECT_EQ(nlohmann::json::parse(r.out)["edges"], nlohmann::json::parse(want.out)["edges"])
        << edges;
  }
}

TEST_F(HistogramCli, AgreesWithNumpy) {
  if (!python_numpy_available()) GTEST_SKIP() << "python3 with numpy is not available";
  std::mt19937_64 rng(run_seed() + 9);
  std::normal_distribution<double> normal(0.2, 1.0);
  const std::size_t n = 100000;
  struct Case {
    DType t;
    std::string args;
    std::string numpy_args;
  };
  std::string f64 = temp_path("x64.npy"), i32 = temp_path("x32.npy");
  std::vector<double> xd(n);
  std::vector<std::int32_t> xi(n);
  for (std::size_t i = 0; i < n; ++i) {
    xd[i] = std::round(normal(rng) * 64) / 64;  // many values on edges
    xi[i] = static_cast<std::int32_t>(std::round(normal(rng) * 300));
  }
  write_npy(f64, DType::float64, {static_cast<std::int64_t>(n)}, xd.data());
  write_npy(i32, DType::int32, {static_cast<std::int64_t>(n)}, xi.data());
  for (auto [file, args, numpy_args] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {f64, "--bins 7 --range -1.3 2.9", "bins=7, range=(-1.3, 2.9)"},
           {f64, "--bins 1000 --range -2 2", "bins=1000, range=(-2, 2)"},
           {f64, "--bins 10", "bins=10"},
           {i32, "--bins 33", "bins=33"},
           {i32, "--bins 256 --range -500.5 700.25", "bins=256, range=(-500.5, 700.25)"}}) {
    auto r = run_cli("histogram --json --backend cpu " + args + " " + file);
    ASSERT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    std::string np = run_python("import numpy as np, json; a = np.load('" + file +
                                "'); c, e = np.histogram(a, " + numpy_args +
                                "); print(json.dumps([int(v) for v in c]))");
    EXPECT_EQ(j["counts"], nlohmann::json::parse(np)) << args;
  }
}

}  // namespace
}  // namespace parpat::test
