// Weighted histograms (numpy.histogram(..., weights=) and numpy.bincount(x, w)) on every backend
// × variant that takes weights, against sums worked out here in long double: every slot within
// the bound of float64 addition in any order (k weights added: k·2^-52 of the sum of their
// magnitudes), so a weight in the wrong bin is always caught. Integer and float values, float32
// and float64 weights, even bins (including more than shared memory holds), explicit edges,
// per-value bins with minlength, NaN values and weights, accumulation across calls, the streamed
// path in small chunks, `fast` under other layouts, bad input, and the CLI against numpy.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "histogram/histogram_internal.hpp"
#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/stream.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

// Values and weights of some dtypes, as the bytes the library reads, and their float64 values.
struct Weighted {
  DType dtype, weights;
  std::vector<unsigned char> value_bytes, weight_bytes;
  std::vector<double> x, w;  // as float64
  std::int64_t size() const { return static_cast<std::int64_t>(x.size()); }
};

// `n` values of t (integers in [lo, hi), floats uniform over [lo, hi) with some NaN) and weights
// uniform in [-1, 1] of dtype `weights`.
Weighted make_weighted(DType t, DType weights, std::int64_t n, double lo, double hi,
                       std::mt19937_64& rng) {
  Weighted d{t,
             weights,
             std::vector<unsigned char>(n * dtype_size(t)),
             std::vector<unsigned char>(n * dtype_size(weights)),
             std::vector<double>(n),
             std::vector<double>(n)};
  std::uniform_real_distribution<double> u(lo, hi), unit(-1, 1);
  std::bernoulli_distribution nan(0.01);
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    const double lowest = static_cast<double>(std::numeric_limits<T>::lowest());
    const double highest = static_cast<double>(std::numeric_limits<T>::max());
    for (std::int64_t i = 0; i < n; ++i) {
      T value{};
      if constexpr (std::is_floating_point_v<T>) {
        value = nan(rng) ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(u(rng));
      } else {
        value = static_cast<T>(std::clamp(std::floor(u(rng)), lowest, highest));
      }
      std::memcpy(d.value_bytes.data() + i * sizeof(T), &value, sizeof(T));
      d.x[static_cast<std::size_t>(i)] = static_cast<double>(value);
    }
  });
  for (std::int64_t i = 0; i < n; ++i) {
    double w = unit(rng);
    if (weights == DType::float32) {
      const float f = static_cast<float>(w);
      std::memcpy(d.weight_bytes.data() + i * 4, &f, 4);
      w = f;
    } else {
      std::memcpy(d.weight_bytes.data() + i * 8, &w, 8);
    }
    d.w[static_cast<std::size_t>(i)] = w;
  }
  return d;
}

// Each slot's exact sum, the sum of its weights' magnitudes and its number of weights.
struct Expected {
  std::vector<long double> sum, magnitude;
  std::vector<std::int64_t> count;
};

Expected expected_sums(const Weighted& d, const std::vector<double>& edges) {
  const std::size_t bins = edges.size() - 1;
  Expected e{std::vector<long double>(bins + 3), std::vector<long double>(bins + 3),
             std::vector<std::int64_t>(bins + 3)};
  for (std::size_t i = 0; i < d.x.size(); ++i) {
    const double v = d.x[i];
    std::size_t s = bins + 2;
    if (std::isnan(v)) {
      s = bins + 2;
    } else if (v < edges.front()) {
      s = bins;
    } else if (v > edges.back()) {
      s = bins + 1;
    } else {
      const auto right = std::upper_bound(edges.begin(), edges.end(), v) - edges.begin();
      s = std::min<std::size_t>(static_cast<std::size_t>(right - 1), bins - 1);
    }
    e.sum[s] += d.w[i];
    e.magnitude[s] += std::fabs(d.w[i]);
    ++e.count[s];
  }
  return e;
}

std::vector<double> slots_of(const HistogramResult& r) {
  std::vector<double> s = r.sums;
  s.insert(s.end(), {r.underflow_sum, r.overflow_sum, r.nan_sum});
  return s;
}

void expect_near(const std::vector<double>& got, const Expected& e, const std::string& what) {
  ASSERT_EQ(got.size(), e.sum.size()) << what;
  for (std::size_t s = 0; s < got.size(); ++s) {
    const long double bound = static_cast<long double>(e.count[s]) * 0x1p-52L * e.magnitude[s];
    EXPECT_LE(std::fabs(static_cast<long double>(got[s]) - e.sum[s]), bound)
        << what << ": slot " << s << " of " << got.size() << " holds " << got[s] << ", expected "
        << static_cast<double>(e.sum[s]) << " (" << e.count[s] << " weights), seed " << run_seed();
  }
}

class HistogramWeighted : public ::testing::TestWithParam<Target> {
 protected:
  void SetUp() override {
    const auto& variant =
        detail::find_histogram_variant(GetParam().device.backend(), GetParam().variant);
    if (!variant.make_weighted) GTEST_SKIP() << GetParam().variant << " takes no weights";
    const DeviceInfo& info = GetParam().device.info();
    if (info.backend == Backend::opencl && (!info.fp64 || !info.int64_atomics))
      GTEST_SKIP() << "this OpenCL device lacks cl_khr_fp64 or 64-bit atomics";
  }

  HistogramResult run(const Weighted& d, const HistogramBins& bins) const {
    const Device& dev = GetParam().device;
    Array x = Array::from_host(dev, d.dtype, {d.size()}, d.value_bytes.data());
    Array w = Array::from_host(dev, d.weights, {d.size()}, d.weight_bytes.data());
    return histogram(x, w, bins, {GetParam().variant});
  }
};

TEST_P(HistogramWeighted, SumsEveryDTypeIntoEveryKindOfBins) {
  std::mt19937_64 rng(run_seed() + 11);
  // 128 bins over [-2, 254] have width 2: 4- and 8-byte integers take the integer rule there.
  for (DType t : {DType::uint8, DType::int16, DType::int32, DType::uint32, DType::int64,
                  DType::uint64, DType::float32, DType::float64})
    for (DType weights : {DType::float32, DType::float64})
      for (const HistogramBins& bins :
           {HistogramBins::even(7, -3, 100), HistogramBins::even(1000, -3, 250),
            HistogramBins::even(128, -2, 254), HistogramBins::even(70000, 0, 200),
            HistogramBins::explicit_edges({-2, 0, 0.5, 40})}) {
        const Weighted d = make_weighted(t, weights, 100003, -5, 260, rng);
        const std::string what = std::string(dtype_name(t)) + " weighed by " + dtype_name(weights) +
                                 " into " + std::to_string(bins.count) + " bins";
        expect_near(slots_of(run(d, bins)), expected_sums(d, bins.edge_values()), what);
      }
}

// Every float16 and bfloat16 bit pattern (NaN and the infinities too), weighted by multiples of
// 0.25 (exact sums), over bins where the 16-bit rule holds and where the float rule settles values
// next to an edge from their bits (4096 bins of [-0.02693, 0.03023]: a value such as 0.003647 lies
// 1e-8 above its edge).
TEST_P(HistogramWeighted, SumsEvery16BitFloatPattern) {
  for (DType t : {DType::float16, DType::bfloat16}) {
    Weighted d{t,
               DType::float64,
               std::vector<unsigned char>(65536 * 2),
               std::vector<unsigned char>(65536 * 8),
               std::vector<double>(65536),
               std::vector<double>(65536)};
    for (std::uint32_t b = 0; b < 65536; ++b) {
      const auto bits = static_cast<std::uint16_t>(b);
      std::memcpy(d.value_bytes.data() + 2 * b, &bits, 2);
      d.x[b] = t == DType::float16 ? static_cast<double>(float16::from_bits(bits))
                                   : static_cast<double>(bfloat16::from_bits(bits));
      d.w[b] = 1 + 0.25 * (b % 5);
      std::memcpy(d.weight_bytes.data() + 8 * b, &d.w[b], 8);
    }
    for (const HistogramBins& bins :
         {HistogramBins::even(100, -3, 5),
          HistogramBins::even(4096, -0.026929900347039362, 0.030232277940055237)}) {
      const std::string what =
          std::string(dtype_name(t)) + " into " + std::to_string(bins.count) + " bins";
      expect_near(slots_of(run(d, bins)), expected_sums(d, bins.edge_values()), what);
    }
  }
}

TEST_P(HistogramWeighted, PerValueBinsWithMinlengthAreBincount) {
  std::mt19937_64 rng(run_seed() + 12);
  const Weighted d = make_weighted(DType::int32, DType::float64, 50001, 0, 100, rng);
  const HistogramResult r = run(d, HistogramBins::per_value(150));
  ASSERT_EQ(r.sums.size(), 150u);
  std::vector<double> edges(151);
  for (std::size_t i = 0; i < edges.size(); ++i)
    edges[i] = static_cast<double>(i) - 0.5;
  expect_near(slots_of(r), expected_sums(d, edges), "bincount with minlength 150");
  for (std::size_t v = 100; v < 150; ++v)
    EXPECT_EQ(r.sums[v], 0.0) << v;
}

TEST_P(HistogramWeighted, NanWeightsMakeTheirBinNan) {
  const Device& dev = GetParam().device;
  const std::vector<float> x = {0.5f, 1.5f, 1.5f, 2.5f, -1.0f};
  const std::vector<double> w = {1.0, std::nan(""), 2.0, -0.25, 3.0};
  HistogramResult r = histogram(Array::from_vector(dev, x), Array::from_vector(dev, w),
                                HistogramBins::even(3, 0, 3), {GetParam().variant});
  EXPECT_EQ(r.sums[0], 1.0);
  EXPECT_TRUE(std::isnan(r.sums[1]));
  EXPECT_EQ(r.sums[2], -0.25);
  EXPECT_EQ(r.underflow_sum, 3.0);
  EXPECT_TRUE(r.counts.empty());
}

TEST_P(HistogramWeighted, AccumulatesAcrossCalls) {
  std::mt19937_64 rng(run_seed() + 13);
  const Device& dev = GetParam().device;
  const Weighted d = make_weighted(DType::float32, DType::float32, 40000, 0, 10, rng);
  const HistogramBins bins = HistogramBins::even(33, 0, 10);
  Histogrammer plan(dev, d.dtype, d.weights, d.size(), bins, {GetParam().variant});
  Array x = Array::from_host(dev, d.dtype, {d.size()}, d.value_bytes.data());
  Array w = Array::from_host(dev, d.weights, {d.size()}, d.weight_bytes.data());
  Buffer sums(dev, static_cast<std::size_t>(plan.slots()) * sizeof(double));
  plan.run(x, w, sums);
  plan.run(x, w, sums, true);
  std::vector<double> got(static_cast<std::size_t>(plan.slots()));
  sums.download(got.data(), got.size() * sizeof(double));
  Expected e = expected_sums(d, bins.edge_values());
  for (std::size_t s = 0; s < e.sum.size(); ++s) {
    e.sum[s] *= 2;
    e.magnitude[s] *= 2;
    e.count[s] *= 2;
  }
  expect_near(got, e, "two calls into one set of sums");
}

TEST_P(HistogramWeighted, EmptyInputSumsToZero) {
  const Device& dev = GetParam().device;
  HistogramResult r = histogram(Array(dev, DType::float64, {0}), Array(dev, DType::float32, {0}),
                                HistogramBins::even(4, 0, 1), {GetParam().variant});
  EXPECT_EQ(r.sums, std::vector<double>(4, 0.0));
}

INSTANTIATE_TEST_SUITE_P(Devices, HistogramWeighted,
                         ::testing::ValuesIn(variant_targets("histogram")), target_name);

// `fast` on GPUs with the sums in fewer striped copies, and with every slot in global memory.
TEST(HistogramWeightedFast, EveryLayoutMatches) {
  std::mt19937_64 rng(run_seed() + 14);
  for (const auto& d : devices()) {
    if (d.backend() == Backend::cpu) continue;
    for (const char* setting : {"histogram.fast.max_columns=1", "histogram.fast.striped_kib=1"}) {
      ScopedTuning tuning(setting);
      for (DType t : {DType::uint16, DType::float32}) {
        const Weighted w = make_weighted(t, DType::float32, 65537, 0, 300, rng);
        const HistogramBins bins = HistogramBins::even(257, 0, 300);
        Array x = Array::from_host(d, t, {w.size()}, w.value_bytes.data());
        Array wa = Array::from_host(d, w.weights, {w.size()}, w.weight_bytes.data());
        expect_near(slots_of(histogram(x, wa, bins, {"fast"})),
                    expected_sums(w, bins.edge_values()), setting);
      }
    }
  }
}

// The streamed path: values and weights read chunk by chunk, beside each other.
TEST(HistogramWeightedStream, ChunksMatchTheWholeInput) {
  std::mt19937_64 rng(run_seed() + 15);
  const Weighted d = make_weighted(DType::int16, DType::float64, 200001, -10, 500, rng);
  for (const auto& dev : devices()) {
    Source x = Source::from_host(d.dtype, {d.size()}, d.value_bytes.data());
    Source w = Source::from_host(d.weights, {d.size()}, d.weight_bytes.data());
    StreamOptions o;
    o.chunk_bytes = 16 << 10;
    StreamStats stats;
    const HistogramResult r = histogram(x, w, dev, HistogramBins::even(64), {}, o, &stats);
    EXPECT_GT(stats.chunks, 10);
    EXPECT_EQ(stats.passes, 2);  // the range first
    expect_near(slots_of(r), expected_sums(d, r.bins.edge_values()), device_name(dev));
  }
}

TEST(HistogramWeightedErrors, BadWeightsAreRefused) {
  const Device& dev = devices().front();
  Array x = Array::from_vector(dev, std::vector<float>(10, 1.0f));
  auto kind_of = [](auto call) {
    try {
      call();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::backend;  // nothing thrown
  };
  EXPECT_EQ(kind_of([&] { histogram(x, Array::from_vector(dev, std::vector<double>(9, 1.0))); }),
            ErrorKind::invalid_argument);
  EXPECT_EQ(
      kind_of([&] { histogram(x, Array::from_vector(dev, std::vector<std::int32_t>(10, 1))); }),
      ErrorKind::invalid_argument);
  for (const auto& d : devices()) {
    const char* counting_only = d.backend() == Backend::cpu ? nullptr : "privatized";
    if (!counting_only) continue;
    Array xd = Array::from_vector(d, std::vector<float>(10, 1.0f));
    Array wd = Array::from_vector(d, std::vector<double>(10, 1.0));
    EXPECT_EQ(kind_of([&] { histogram(xd, wd, HistogramBins::even(4, 0, 2), {counting_only}); }),
              ErrorKind::unsupported)
        << device_name(d);
  }
}

// The CLI against numpy: numpy.histogram with weights (and density), numpy.bincount with weights
// and minlength, each streamed in small chunks; bad weights give one line and status 2.
TEST(HistogramWeightedCli, AgreesWithNumpy) {
  if (!python_numpy_available()) GTEST_SKIP() << "python3 with numpy is not available";
  // x64: numpy 2 bins float32 data against float32 edges, parpat against float64 ones (the
  // documented difference), so the histograms, whose edges are inexact, read float64 values.
  const std::string x = temp_path("weighted_x.npy"), x64 = temp_path("weighted_x64.npy"),
                    w = temp_path("weighted_w.npy"), xi = temp_path("weighted_xi.npy"),
                    wi = temp_path("weighted_wi.npy"), bad = temp_path("weighted_bad.npy");
  run_python("import numpy as np; r = np.random.default_rng(" + std::to_string(run_seed()) +
             "); np.save('" + x + "', r.normal(size=30011).astype(np.float32)); np.save('" + x64 +
             "', np.load('" + x + "').astype(np.float64)); np.save('" + w +
             "', r.random(30011)); np.save('" + xi + "', r.integers(0, 40, 20000)); np.save('" +
             wi + "', r.random(20000).astype(np.float32)); np.save('" + bad +
             "', np.ones(30011, np.int32))");
  struct Case {
    std::string args, numpy, field;
  };
  for (const Case& c : std::vector<Case>{
           {"--bins 9 --weights " + w + " " + x64,
            "np.histogram(np.load('" + x64 + "'), bins=9, weights=np.load('" + w + "'))[0]",
            "sums"},
           {"--bins 5 --range -1 1 --density --weights " + w + " " + x64,
            "np.histogram(np.load('" + x64 +
                "'), bins=5, range=(-1, 1), density=True, weights=np.load('" + w + "'))[0]",
            "density"},
           {"--per-value --minlength 50 --weights " + wi + " " + xi,
            "np.bincount(np.load('" + xi + "'), weights=np.load('" + wi + "'), minlength=50)",
            "sums"}}) {
    const auto want = nlohmann::json::parse(run_python(
        "import numpy as np, json; print(json.dumps([float(v) for v in " + c.numpy + "]))"));
    for (const auto& d : devices()) {
      const std::string backend = backend_name(d.backend());
      auto r = run_command("PARPAT_TUNING=stream.chunk_kib=4 " + cli_path() +
                           " histogram --json --backend " + backend + " " + c.args);
      ASSERT_EQ(r.status, 0) << c.args << ": " << r.err;
      const auto answer = nlohmann::json::parse(r.out);
      auto got = answer[c.field];
      ASSERT_EQ(got.size(), want.size()) << c.args;
      EXPECT_EQ(answer["bins"], want.size()) << c.args;
      for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(got[i].get<double>(), want[i].get<double>(),
                    1e-9 * (1 + std::fabs(want[i].get<double>())))
            << c.args << " on " << backend << ", bin " << i;
    }
  }
  for (const std::string& args : {"--weights " + bad + " " + x, "--weights " + wi + " " + x}) {
    auto r = run_cli("histogram " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find("weights"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace parpat::test
