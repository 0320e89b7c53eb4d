// Streamed histograms against the in-memory call on every device, with chunks forced small
// (values and edges, NaN and ±inf, ranges from the data), and Histogrammer::run with accumulate
// on every variant, which the streamed histogram is built on.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/io.hpp"
#include "parpat/reduce.hpp"
#include "parpat/registry.hpp"
#include "parpat/stream.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

class StreamHistogramTest : public ::testing::TestWithParam<Device> {
 protected:
  const Device& device() const { return GetParam(); }

  // Streams `host` (n values of t) into a histogram with `bins` and compares with
  // parpat::histogram in memory: counts, underflow, overflow, NaN and the resolved bins.
  void check_histogram(Source& source, DType t, const std::vector<unsigned char>& host,
                       const HistogramBins& bins, std::size_t chunk, int passes,
                       const std::string& what) {
    const auto n = static_cast<std::int64_t>(host.size() / dtype_size(t));
    SCOPED_TRACE(what + ": " + std::to_string(n) + " " + dtype_name(t) + ", chunk " +
                 std::to_string(chunk) + " bytes, seed " + std::to_string(run_seed()));
    Array in = Array::from_host(device(), t, {n}, host.data());
    HistogramResult want = histogram(in, bins);
    StreamOptions so;
    so.chunk_bytes = chunk;
    StreamStats stats;
    HistogramResult got = histogram(source, device(), bins, {}, so, &stats);
    EXPECT_EQ(got.counts, want.counts);
    EXPECT_EQ(got.underflow, want.underflow);
    EXPECT_EQ(got.overflow, want.overflow);
    EXPECT_EQ(got.nan, want.nan);
    EXPECT_EQ(got.bins.kind, want.bins.kind);
    EXPECT_EQ(got.bins.count, want.bins.count);
    EXPECT_EQ(got.bins.has_range, want.bins.has_range);
    EXPECT_EQ(got.bins.lo, want.bins.lo);
    EXPECT_EQ(got.bins.hi, want.bins.hi);
    EXPECT_EQ(got.bins.edges, want.bins.edges);
    std::uint64_t total = got.underflow + got.overflow + got.nan;
    for (auto c : got.counts)
      total += c;
    EXPECT_EQ(total, static_cast<std::uint64_t>(n));
    EXPECT_EQ(stats.passes, passes);
    EXPECT_EQ(stats.bytes, static_cast<std::uint64_t>(passes) * host.size());
    if (chunk != 0) EXPECT_EQ(stats.chunks, passes * expected_chunks(host.size(), chunk, t));
  }
};

// ---- histogram ---------------------------------------------------------------------------------

// A range per dtype whose bins of `bins` have integer edges for the integer dtypes.
struct RangeCase {
  double lo, hi;
  std::int64_t bins;
};
RangeCase range_case(DType t) {
  switch (t) {
    case DType::uint8:
      return {10, 250, 24};
    case DType::uint16:
      return {100, 60100, 40};
    case DType::int32:
      return {-100000, 100000, 40};
    default:
      return {0.1, 0.7, 7};  // steps not exact in binary: edges rounded as numpy.linspace's
  }
}

// n values of t: uniform a little beyond [lo, hi], with every edge (and, for floats, its
// neighbours), NaN and ±inf mixed in when `specials`.
std::vector<unsigned char> histogram_values(DType t, std::int64_t n, const RangeCase& rc,
                                            std::mt19937_64& rng, bool specials) {
  std::vector<double> edges = HistogramBins::even(rc.bins, rc.lo, rc.hi).edge_values();
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(t));
  const double margin = (rc.hi - rc.lo) * 0.05;
  std::uniform_real_distribution<double> u(rc.lo - margin, rc.hi + margin);
  std::uniform_int_distribution<std::size_t> pick(0, edges.size() - 1);
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(out.data());
    for (std::int64_t i = 0; i < n; ++i) {
      double x = u(rng);
      if (specials && i % 7 == 0) x = edges[pick(rng)];
      if constexpr (std::is_floating_point_v<T>) {
        T y = static_cast<T>(x);
        if (specials && i % 11 == 0) y = std::nextafter(y, T(i % 2 ? 10 : -10));
        if (specials && i % 97 == 0) y = std::numeric_limits<T>::quiet_NaN();
        if (specials && i % 89 == 0) y = std::numeric_limits<T>::infinity();
        if (specials && i % 83 == 0) y = -std::numeric_limits<T>::infinity();
        p[i] = y;
      } else {
        const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
        const double hi = static_cast<double>(std::numeric_limits<T>::max());
        p[i] = static_cast<T>(std::clamp(std::round(x), lo, hi));
      }
    }
  });
  return out;
}

TEST_P(StreamHistogramTest, HistogramMatchesInMemory) {
  std::mt19937_64 rng(run_seed() + 4);
  const std::int64_t n = 10007;
  int k = 0;
  for (DType t : kHistogramTypes) {
    const RangeCase rc = range_case(t);
    auto special = histogram_values(t, n, rc, rng, true);
    auto finite = histogram_values(t, n, rc, rng, false);
    // Uneven explicit edges inside the range.
    std::vector<double> edges = {rc.lo,
                                 rc.lo + (rc.hi - rc.lo) * 0.01,
                                 rc.lo + (rc.hi - rc.lo) * 0.3,
                                 rc.lo + (rc.hi - rc.lo) * 0.31,
                                 rc.lo + (rc.hi - rc.lo) * 0.75,
                                 rc.hi};
    if (!is_float(t))
      for (auto& e : edges)
        e = std::round(e);
    std::string path =
        temp_path("stream_hist_" + device_name(device()) + std::to_string(k++) + ".npy");
    write_npy(path, t, {n}, special.data());
    for (std::size_t chunk : kChunkSizes) {
      Source s = Source::from_host(t, {n}, special.data());
      Source f = Source::from_host(t, {n}, finite.data());
      Source file = Source::open(path);
      check_histogram(s, t, special, HistogramBins::even(rc.bins, rc.lo, rc.hi), chunk, 1,
                      "even with a range");
      check_histogram(file, t, special, HistogramBins::even(rc.bins, rc.lo, rc.hi), chunk, 1,
                      "even with a range, from " + path);
      check_histogram(s, t, special, HistogramBins::even(1, rc.lo, rc.hi), chunk, 1, "one bin");
      check_histogram(f, t, finite, HistogramBins::even(rc.bins), chunk, 2, "even without range");
      check_histogram(file, t, special, HistogramBins::explicit_edges(edges), chunk, 1,
                      "explicit edges");
      if (!is_float(t)) {
        if (t == DType::int32) {
          // Per-value bins of int32 take a first pass for the largest value: small values, some
          // negative (underflow).
          std::vector<std::int32_t> small(static_cast<std::size_t>(n));
          std::uniform_int_distribution<std::int32_t> u(-5, 3000);
          for (auto& x : small)
            x = u(rng);
          auto bytes = bytes_of(small);
          Source ps = Source::from_host(t, {n}, bytes.data());
          check_histogram(ps, t, bytes, HistogramBins::per_value(), chunk, 2, "per value");
        } else if (t == DType::uint8 || chunk != 1000) {
          // (65536 bins of uint16 over chunks of 500 values is slow on some devices for nothing.)
          check_histogram(s, t, special, HistogramBins::per_value(), chunk, 1, "per value");
        }
      }
      if (HasFailure()) return;
    }
    std::remove(path.c_str());
  }
}

// Without a range the data's [min, max] is needed: NaN or ±inf in the data make a non-finite
// range, which the streamed call refuses as the in-memory one does.
TEST_P(StreamHistogramTest, HistogramWithoutRangeOfNonFiniteDataThrowsAsInMemory) {
  for (DType t : {DType::float32, DType::float64})
    for (double bad :
         {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
      std::vector<double> v(5000, 0.5);
      v[3333] = bad;
      std::vector<unsigned char> host(v.size() * dtype_size(t));
      visit_dtype(t, [&](auto x) {
        using T = decltype(x);
        for (std::size_t i = 0; i < v.size(); ++i)
          reinterpret_cast<T*>(host.data())[i] = static_cast<T>(v[i]);
      });
      const auto n = static_cast<std::int64_t>(v.size());
      Array in = Array::from_host(device(), t, {n}, host.data());
      Source s = Source::from_host(t, {n}, host.data());
      StreamOptions so;
      so.chunk_bytes = 1000;
      ErrorKind memory_kind = ErrorKind::backend, stream_kind = ErrorKind::backend;
      try {
        histogram(in, HistogramBins::even(10));
        ADD_FAILURE() << "in memory: no error for " << bad;
      } catch (const Error& e) {
        memory_kind = e.kind();
      }
      try {
        histogram(s, device(), HistogramBins::even(10), {}, so);
        ADD_FAILURE() << "streamed: no error for " << bad;
      } catch (const Error& e) {
        stream_kind = e.kind();
      }
      EXPECT_EQ(memory_kind, ErrorKind::invalid_argument) << dtype_name(t) << " " << bad;
      EXPECT_EQ(stream_kind, memory_kind) << dtype_name(t) << " " << bad;
    }
}

INSTANTIATE_TEST_SUITE_P(Devices, StreamHistogramTest, ::testing::ValuesIn(devices()),
                         device_test_name);

// ---- Histogrammer::run(accumulate) on every variant --------------------------------------------

detail::HistogramProblem problem_of(DType t, std::int64_t n, const HistogramBins& b) {
  detail::HistogramProblem p;
  p.dtype = t;
  p.n = n;
  p.even = b.kind == HistogramBins::Kind::even;
  p.bins = p.even ? b.count : static_cast<std::int64_t>(b.edges.size()) - 1;
  p.lo = b.lo;
  p.hi = b.hi;
  if (!p.even) p.edges = b.edges;
  return p;
}

class AccumulateTest : public ::testing::TestWithParam<Target> {};

TEST_P(AccumulateTest, RunningTwiceWithAccumulateDoublesTheCounts) {
  const Target& target = GetParam();
  const auto& variant = detail::find_histogram_variant(target.device.backend(), target.variant);
  std::mt19937_64 rng(run_seed() + 6);
  const std::int64_t n = 10007;
  int covered = 0;
  for (DType t : kHistogramTypes) {
    const RangeCase rc = range_case(t);
    auto host = histogram_values(t, n, rc, rng, true);
    const double w = rc.hi - rc.lo;
    for (const HistogramBins& bins :
         {HistogramBins::even(rc.bins, rc.lo, rc.hi), HistogramBins::even(1000, rc.lo, rc.hi),
          HistogramBins::explicit_edges({rc.lo, rc.lo + w * 0.25, rc.lo + w * 0.5, rc.hi})}) {
      auto p = problem_of(t, n, bins);
      if (!variant.supports(p, target.device.info())) continue;
      ++covered;
      SCOPED_TRACE(std::string(dtype_name(t)) + ", " + std::to_string(p.bins) + " bins, seed " +
                   std::to_string(run_seed()));
      std::vector<std::uint64_t> once(static_cast<std::size_t>(p.slots()));
      detail::histogram_reference(host.data(), p, once.data());
      Histogrammer plan(target.device, t, n, bins, {target.variant});
      ASSERT_EQ(plan.slots(), p.slots());
      Array in = Array::from_host(target.device, t, {n}, host.data());
      Buffer counts(target.device, once.size() * sizeof(std::uint64_t));
      std::vector<std::uint64_t> got(once.size());
      // Counts left over from another input must not leak into a run without accumulate.
      std::vector<std::uint64_t> junk(once.size(), 12345);
      counts.upload(junk.data(), junk.size() * sizeof(std::uint64_t));
      plan.run(in, counts, false);
      counts.download(got.data(), got.size() * sizeof(std::uint64_t));
      EXPECT_EQ(got, once) << "run without accumulate";
      plan.run(in, counts, true);
      counts.download(got.data(), got.size() * sizeof(std::uint64_t));
      std::vector<std::uint64_t> twice = once;
      for (auto& c : twice)
        c *= 2;
      EXPECT_EQ(got, twice) << "the second run, with accumulate";
      // Accumulating onto counts near 2^32 carries exactly.
      std::vector<std::uint64_t> start(once.size(), (std::uint64_t{1} << 32) - 3);
      counts.upload(start.data(), start.size() * sizeof(std::uint64_t));
      plan.run(in, counts, true);
      counts.download(got.data(), got.size() * sizeof(std::uint64_t));
      for (std::size_t i = 0; i < once.size(); ++i)
        start[i] += once[i];
      EXPECT_EQ(got, start) << "accumulate onto 2^32 - 3";
      if (HasFailure()) return;
    }
  }
  if (covered == 0) GTEST_SKIP() << "the variant covers none of these cases";
}

INSTANTIATE_TEST_SUITE_P(Variants, AccumulateTest,
                         ::testing::ValuesIn(variant_targets("histogram")), target_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AccumulateTest);

}  // namespace
}  // namespace parpat::test
