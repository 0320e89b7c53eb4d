// Strided views into the patterns other than reduce (histogram, its weights and per-value bins,
// histogramdd's table, coordinate arrays and weights, pairwise's inputs), read in place (views of
// one step, by the histogram kernels that read steps) or through a dense copy, on every device:
// each answer equals the answer for the same elements copied into a dense array on the host
// first. Steps, 2-D rows with gaps, slices of a middle axis and broadcasts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/histogram.hpp"
#include "parpat/histogramdd.hpp"
#include "parpat/pairwise.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

using Shape = std::vector<std::int64_t>;

// A strided view of `memory` (the values of `host`) and its elements in C order on the host.
template <class T>
struct View {
  Array array;
  std::vector<T> dense;
};

template <class T>
View<T> view_of(const Buffer& memory, const std::vector<T>& host, const Shape& shape,
                const Shape& strides) {
  View<T> v{Array::strided_view(memory, dtype_of<T>::value, shape, strides), {}};
  std::int64_t n = 1;
  for (auto e : shape)
    n *= e;
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t rest = i, offset = 0;
    for (std::size_t d = shape.size(); d-- > 0;) {
      offset += rest % shape[d] * strides[d];
      rest /= shape[d];
    }
    v.dense.push_back(host[static_cast<std::size_t>(offset)]);
  }
  return v;
}

template <class T>
Buffer device_copy(const Device& dev, const std::vector<T>& host) {
  Buffer b(dev, host.size() * sizeof(T));
  b.upload(host.data(), host.size() * sizeof(T));
  return b;
}

template <class T>
Array dense_array(const Device& dev, const std::vector<T>& dense, const Shape& shape) {
  return Array::from_host(dev, dtype_of<T>::value, shape, dense.data());
}

// Float64 sums added in any order: equal within the rounding of their magnitudes.
void expect_sums_near(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-12 * (1 + std::abs(want[i]))) << "bin " << i;
}

class StridedInputs : public ::testing::TestWithParam<Device> {};

const std::vector<std::pair<Shape, Shape>>& views() {
  static const std::vector<std::pair<Shape, Shape>> v = {
      {{1000}, {3}},             // x[::3]
      {{40, 30}, {100, 2}},      // x[::, ::2] of rows 100 apart
      {{50, 20}, {25, 1}},       // 2-D rows with gaps
      {{6, 4, 9}, {80, 11, 1}},  // a slice of a middle axis
      {{7, 5}, {0, 1}},          // a row broadcast to 7 rows
      {{1}, {5}}};
  return v;
}

TEST_P(StridedInputs, HistogramsOfViewsCountTheirElements) {
  const Device& dev = GetParam();
  std::mt19937_64 rng(run_seed());
  std::uniform_real_distribution<float> u(-0.1f, 1.1f);
  std::vector<float> host(4096);
  for (float& x : host)
    x = u(rng);
  std::vector<double> weights_host(8192);
  for (double& w : weights_host)
    w = std::uniform_real_distribution<double>(-1, 1)(rng);
  const Buffer memory = device_copy(dev, host), weight_memory = device_copy(dev, weights_host);
  for (const auto& [shape, strides] : views()) {
    SCOPED_TRACE("strides " + std::to_string(strides[0]) + " of a " + std::to_string(shape.size()) +
                 "-D view, seed " + std::to_string(run_seed()));
    const View<float> v = view_of(memory, host, shape, strides);
    if (v.array.size() > 1) ASSERT_FALSE(v.array.contiguous());
    const Array dense = dense_array(dev, v.dense, shape);
    for (const HistogramBins& bins : {HistogramBins::even(16, 0, 1), HistogramBins::even(7)}) {
      const HistogramResult got = histogram(v.array, bins), want = histogram(dense, bins);
      EXPECT_EQ(got.counts, want.counts);
      EXPECT_EQ(got.bins.lo, want.bins.lo);
      EXPECT_EQ(got.bins.hi, want.bins.hi);
      EXPECT_EQ(got.underflow, want.underflow);
      EXPECT_EQ(got.overflow, want.overflow);
    }
    // Weights of another layout: every other float64 of their own buffer, in the view's shape.
    Shape weight_strides(shape.size(), 2);
    for (std::size_t d = shape.size() - 1; d > 0; --d)
      weight_strides[d - 1] = weight_strides[d] * shape[d];
    const View<double> w = view_of(weight_memory, weights_host, shape, weight_strides);
    const HistogramBins bins = HistogramBins::even(16, 0, 1);
    const HistogramResult got = histogram(v.array, w.array, bins);
    const HistogramResult want = histogram(dense, dense_array(dev, w.dense, shape), bins);
    expect_sums_near(got.sums, want.sums);
    expect_sums_near({got.underflow_sum, got.overflow_sum},
                     {want.underflow_sum, want.overflow_sum});
    if (HasFailure()) return;
  }
}

// One plan runs views of one size but different layouts, and a contiguous array, in turn: each
// run counts its own elements (the plan's gather follows the layout).
TEST_P(StridedInputs, APlanRunsViewsOfEveryLayout) {
  const Device& dev = GetParam();
  std::mt19937_64 rng(run_seed() + 4);
  std::vector<float> host(3000);
  for (float& x : host)
    x = std::uniform_real_distribution<float>(0, 1)(rng);
  const Buffer memory = device_copy(dev, host);
  const HistogramBins bins = HistogramBins::even(10, 0, 1);
  Histogrammer plan(dev, DType::float32, 600, bins);
  Buffer counts(dev, static_cast<std::size_t>(plan.slots()) * sizeof(std::uint64_t));
  for (const auto& [shape, strides] : std::vector<std::pair<Shape, Shape>>{
           {{600}, {5}}, {{20, 30}, {100, 3}}, {{600}, {5}}, {{600}, {1}}, {{600}, {2}}}) {
    const View<float> v = view_of(memory, host, shape, strides);
    plan.run(v.array, counts);
    std::vector<std::uint64_t> got(static_cast<std::size_t>(plan.slots()));
    counts.download(got.data(), got.size() * sizeof(std::uint64_t));
    got.resize(10);
    EXPECT_EQ(got, histogram(dense_array(dev, v.dense, shape), bins).counts)
        << "strides " << strides[0];
  }
}

// Views of one step throughout (x[::s], 2-D rows following on at the step) of `host`, counted as
// their elements copied dense, for sizes about the 32 vectors a warp gathers at a time and steps
// 2, 3 and 7: the CUDA `fast` kernels read them in place, the others through the dense copy.
template <class T>
void expect_steps_counted(const Device& dev, const std::vector<T>& host, const HistogramBins& bins,
                          const std::vector<std::int64_t>& sizes) {
  const Buffer memory = device_copy(dev, host);
  for (std::int64_t step : {2, 3, 7}) {
    for (std::int64_t n : sizes) {
      if ((n - 1) * step >= static_cast<std::int64_t>(host.size())) continue;
      SCOPED_TRACE(std::string(dtype_name(dtype_of<T>::value)) + ", " + std::to_string(bins.count) +
                   " bins, " + std::to_string(n) + " values " + std::to_string(step) + " apart");
      const View<T> v = view_of(memory, host, {n}, {step});
      const Array dense = dense_array(dev, v.dense, {n});
      const HistogramResult got = histogram(v.array, bins), want = histogram(dense, bins);
      EXPECT_EQ(got.counts, want.counts);
      EXPECT_EQ(got.underflow, want.underflow);
      EXPECT_EQ(got.overflow, want.overflow);
      EXPECT_EQ(got.nan, want.nan);
      if (n % 4 == 0) {  // rows of n / 4 values, the next row a step on from the last
        const View<T> rows = view_of(memory, host, {4, n / 4}, {n / 4 * step, step});
        EXPECT_EQ(histogram(rows.array, bins).counts, want.counts);
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Every layout of CUDA `fast`'s counters: values counted per byte and per 16-bit value, the
// 16-bit rule, striped rows, packed rows drained between windows, global counting; and 2^20 bins
// over as many values, which `fast` sorts into buckets from a dense copy.
TEST_P(StridedInputs, ViewsOfOneStepOfEveryDtype) {
  const Device& dev = GetParam();
  std::mt19937_64 rng(run_seed() + 5);
  const std::vector<std::int64_t> sizes = {1, 64, 513, 5000, 70001};
  const std::size_t reach = 7 * 70001;
  auto values = [&](auto pick) {
    std::vector<decltype(pick())> host(reach);
    for (auto& x : host)
      x = pick();
    return host;
  };
  expect_steps_counted(dev, values([&] { return static_cast<std::uint8_t>(rng()); }),
                       HistogramBins::even(7, 0, 256), sizes);
  const auto int16s = values([&] { return static_cast<std::int16_t>(rng()); });
  expect_steps_counted(dev, int16s, HistogramBins::even(65536, -32768, 32768), sizes);
  expect_steps_counted(dev, int16s, HistogramBins::even(100, -1000, 1000), sizes);
  std::uniform_real_distribution<float> u(-0.1f, 1.1f);
  const auto floats = values([&] { return rng() % 97 ? u(rng) : NAN; });
  for (std::int64_t count : {16, 65536, 1 << 20})
    expect_steps_counted(dev, floats, HistogramBins::even(count, 0, 1), sizes);
  expect_steps_counted(dev, values([&] { return static_cast<double>(u(rng)); }),
                       HistogramBins::even(300, 0, 1), sizes);
  expect_steps_counted(dev, values([&] { return static_cast<std::int32_t>(rng() % 80000) - 5; }),
                       HistogramBins::even(1000, -5, 70000), sizes);
  std::vector<float> many(std::size_t{3} << 20);
  for (float& x : many)
    x = u(rng);
  expect_steps_counted(dev, many, HistogramBins::even(1 << 20, 0, 1), {(1 << 20) + 5});
}

TEST_P(StridedInputs, BincountOfAStep) {
  const Device& dev = GetParam();
  std::mt19937_64 rng(run_seed() + 1);
  std::vector<std::int32_t> host(3000);
  for (auto& x : host)
    x = static_cast<std::int32_t>(rng() % 50);
  const Buffer memory = device_copy(dev, host);
  const View<std::int32_t> v = view_of(memory, host, {1000}, {3});
  const HistogramBins per_value = HistogramBins::per_value();
  EXPECT_EQ(histogram(v.array, per_value).counts,
            histogram(dense_array(dev, v.dense, {1000}), per_value).counts);
}

TEST_P(StridedInputs, JointHistogramsOfColumnsAndTables) {
  const Device& dev = GetParam();
  std::mt19937_64 rng(run_seed() + 2);
  std::uniform_real_distribution<float> u(0, 1);
  const std::int64_t n = 3000, width = 5;
  std::vector<float> host(static_cast<std::size_t>(n * width));
  for (float& x : host)
    x = u(rng);
  std::vector<double> weights_host(static_cast<std::size_t>(2 * n));
  for (double& w : weights_host)
    w = u(rng);
  const Buffer memory = device_copy(dev, host), weight_memory = device_copy(dev, weights_host);
  const std::vector<HistogramBins> bins = {HistogramBins::even(8, 0, 1), HistogramBins::even(5)};
  // Columns 1 and 3 of an (n, 5) table: as an (n, 2) view, and as two coordinate arrays.
  const View<float> table = view_of(memory, host, {n, 2}, {width, 2});
  const View<float> x = view_of(memory, host, {n}, {width}), y = view_of(memory, host, {n}, {3});
  const Array dense_table = dense_array(dev, table.dense, {n, 2});
  const HistogramDDResult want = histogramdd(dense_table, bins);
  EXPECT_EQ(histogramdd(table.array, bins).counts, want.counts);
  const std::vector<Array> dense_columns = {dense_array(dev, x.dense, {n}),
                                            dense_array(dev, y.dense, {n})};
  EXPECT_EQ(histogramdd({x.array, y.array}, bins).counts, histogramdd(dense_columns, bins).counts);
  const View<double> w = view_of(weight_memory, weights_host, {n}, {2});
  const Array dense_weights = dense_array(dev, w.dense, {n});
  expect_sums_near(histogramdd(table.array, w.array, bins).sums,
                   histogramdd(dense_table, dense_weights, bins).sums);
  expect_sums_near(histogramdd({x.array, y.array}, w.array, bins).sums,
                   histogramdd(dense_columns, dense_weights, bins).sums);
}

TEST_P(StridedInputs, PairwiseOfSteps) {
  const Device& dev = GetParam();
  std::mt19937_64 rng(run_seed() + 3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> host(4000);
  for (float& x : host)
    x = u(rng);
  const Buffer memory = device_copy(dev, host);
  const View<float> a = view_of(memory, host, {700}, {3}), b = view_of(memory, host, {500}, {7});
  PairwiseOptions o;
  o.kernel = PairwiseKernel::gaussian;
  o.h = 0.5;
  const PairwiseResult got = pairwise(a.array, b.array, o);
  const PairwiseResult want =
      pairwise(dense_array(dev, a.dense, {700}), dense_array(dev, b.dense, {500}), o);
  ASSERT_EQ(got.c.size(), want.c.size());
  for (std::size_t i = 0; i < got.c.size(); ++i)
    EXPECT_NEAR(got.c[i], want.c[i], 1e-5f * (1 + std::abs(want.c[i]))) << "x " << i;
}

std::string test_name(const ::testing::TestParamInfo<Device>& info) {
  return device_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Devices, StridedInputs, ::testing::ValuesIn(devices()), test_name);

}  // namespace
}  // namespace parpat::test
