// Reduce of N-D arrays with numpy's axis argument: every op and every axis form (None, each axis,
// negative axes, tuples in any order including non-adjacent ones, the empty tuple, keepdims) on
// 1-D to 4-D shapes with axes of length 1 and 0, and strided views (steps, middle slices,
// broadcasts, overlapping and transposed rows), on every backend and variant present, against
// the CPU reference of the same data rearranged on the host into [kept, reduced] rows. The
// expected result shapes and the empty-input rules are numpy's, written out here independently
// of the library's own axis planning. Streamed sources of N-D arrays give the in-memory answers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/reduce.hpp"
#include "parpat/stream.hpp"
#include "reduce/axes.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/verify.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

using Shape = std::vector<std::int64_t>;

std::vector<Target> targets() {
  return variant_targets("reduce");
}

std::string text(const std::vector<int>& v) {
  std::string s = "(";
  for (int a : v)
    s += std::to_string(a) + ",";
  return s + ")";
}
std::string text(const Shape& v) {
  std::string s = "(";
  for (auto a : v)
    s += std::to_string(a) + ",";
  return s + ")";
}

// Every axis argument numpy takes for `ndim` dimensions: None, each axis as itself and as its
// negative, every subset of two or more axes (in descending order, the last one negative) and
// the empty tuple. nullopt is None.
std::vector<std::optional<std::vector<int>>> axis_forms(int ndim) {
  std::vector<std::optional<std::vector<int>>> forms = {std::nullopt, std::vector<int>{}};
  for (int a = 0; a < ndim; ++a) {
    forms.push_back(std::vector<int>{a});
    forms.push_back(std::vector<int>{a - ndim});
  }
  for (unsigned mask = 0; mask < (1u << ndim); ++mask) {
    std::vector<int> axes;
    for (int a = ndim - 1; a >= 0; --a)
      if (mask & (1u << a)) axes.push_back(a);
    if (axes.size() < 2) continue;
    axes.back() -= ndim;
    forms.push_back(axes);
  }
  return forms;
}

// numpy's result shape, and the input rearranged into [outputs][extent] rows: output o holds
// the kept coordinates in C order, and its elements the reduced coordinates in C order.
struct Rearranged {
  Shape result_shape;
  std::int64_t outputs = 1, extent = 1;
  std::vector<unsigned char> rows;
};

Rearranged rearrange(const Shape& shape, std::vector<int> axes, bool keepdims, DType t,
                     const std::vector<unsigned char>& host) {
  const int ndim = static_cast<int>(shape.size());
  for (int& a : axes)
    a = (a + ndim) % ndim;
  auto reduced = [&](int d) { return std::find(axes.begin(), axes.end(), d) != axes.end(); };
  Rearranged r;
  for (int d = 0; d < ndim; ++d) {
    if (reduced(d)) {
      r.extent *= shape[d];
      if (keepdims) r.result_shape.push_back(1);
    } else {
      r.outputs *= shape[d];
      r.result_shape.push_back(shape[d]);
    }
  }
  const std::size_t item = dtype_size(t);
  r.rows.resize(host.size());
  const std::int64_t n = static_cast<std::int64_t>(host.size() / item);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t rest = i, o = 0, e = 0, o_scale = 1, e_scale = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      const std::int64_t c = rest % shape[d];
      rest /= shape[d];
      if (reduced(d)) {
        e += c * e_scale;
        e_scale *= shape[d];
      } else {
        o += c * o_scale;
        o_scale *= shape[d];
      }
    }
    std::copy_n(host.data() + i * item, item, r.rows.data() + (o * r.extent + e) * item);
  }
  return r;
}

// Integers in [-6, 6] (zeros for count_nonzero and all, small products), floats in [-1, 1)
// or near 1 for products, with one element in `nan_one_in` NaN (0: none).
std::vector<unsigned char> random_input(DType t, std::int64_t n, std::mt19937_64& rng,
                                        bool near_one, int nan_one_in = 0) {
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(t));
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(out.data());
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        const double x = std::uniform_real_distribution<double>(-1, 1)(rng);
        p[i] = static_cast<T>(near_one ? 1 + x * 1e-3 : x);
        if (nan_one_in && rng() % nan_one_in == 0) p[i] = std::numeric_limits<T>::quiet_NaN();
      } else if constexpr (std::is_same_v<T, bool>) {
        p[i] = rng() % 3 != 0;
      } else {
        p[i] = static_cast<T>(static_cast<int>(rng() % 13) - (std::is_signed_v<T> ? 6 : 0));
      }
    }
  });
  return out;
}

class ReduceAxesTest : public ::testing::TestWithParam<Target> {
 protected:
  // Reduces `host` of `shape` with `axes` (nullopt: None) on the target and compares shape,
  // values and indices with the reference of the rearranged input. Returns false when the
  // variant does not cover the case.
  // `strides` (in elements; empty: C order) lay out `host` as a strided view.
  bool check(DType t, ReduceOp op, const Shape& shape, const std::optional<std::vector<int>>& axes,
             bool keepdims, const std::vector<unsigned char>& host, const Shape& strides = {}) {
    const Target& target = GetParam();
    SCOPED_TRACE(std::string(reduce_op_name(op)) + " of " + dtype_name(t) + " " + text(shape) +
                 (strides.empty() ? "" : " strides " + text(strides)) + " axis " +
                 (axes ? text(*axes) : "None") + (keepdims ? " keepdims" : "") + ", seed " +
                 std::to_string(run_seed()));
    std::vector<int> all(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d)
      all[d] = static_cast<int>(d);
    const std::vector<unsigned char> dense = compact(t, shape, strides, host);
    Rearranged expect = rearrange(shape, axes.value_or(all), keepdims, t, dense);
    if (!axes && !keepdims) expect.result_shape.clear();
    ReduceOptions options{op, Axis::all, target.variant};
    options.axes = axes;
    options.keepdims = keepdims;
    Buffer memory(target.device, host.size());
    memory.upload(host.data(), host.size());
    const Array in = strides.empty() ? Array::view(memory, t, shape)
                                     : Array::strided_view(memory, t, shape, strides);
    if (expect.outputs > 0 && expect.extent == 0 && !has_identity(op)) {
      EXPECT_THROW(reduce(in, options), Error);
      return true;
    }
    ReduceResult r;
    try {
      r = reduce(in, options);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::unsupported) return false;
      if (!is_nan_all_slice(t, op, expect)) ADD_FAILURE() << e.what();
      return true;
    }
    EXPECT_EQ(r.shape, expect.result_shape);
    const DType out = reduce_result_dtype(t, op);
    EXPECT_EQ(r.dtype, out);
    EXPECT_EQ(r.values.size(), static_cast<std::size_t>(expect.outputs));
    if (expect.outputs == 0 || static_cast<std::int64_t>(r.values.size()) != expect.outputs)
      return true;
    std::vector<unsigned char> values(static_cast<std::size_t>(expect.outputs) * dtype_size(out));
    std::vector<std::int64_t> indices(static_cast<std::size_t>(expect.outputs));
    if (expect.extent == 0) {
      values = detail::empty_reduce_values(t, op, expect.outputs);
    } else {
      detail::ReduceShape s{
          t, op, Axis::rows, expect.outputs, expect.extent, expect.extent, options.ddof};
      detail::reduce_reference(expect.rows.data(), s, values.data(), indices.data());
    }
    for (std::int64_t o = 0; o < expect.outputs; ++o) {
      const auto e = Scalar::from_bytes(out, values.data() + o * dtype_size(out));
      const bool sum = op == ReduceOp::sum || op == ReduceOp::nansum || op == ReduceOp::mean ||
                       op == ReduceOp::nanmean;
      const std::string why = detail::reduce_mismatch(e, r.values[o], op, expect.extent,
                                                      sum ? magnitude(t, expect, o) : 0);
      EXPECT_TRUE(why.empty()) << "output " << o << ": " << why;
      if (is_arg_op(op)) {
        EXPECT_EQ(r.indices.at(o), indices[o]) << "output " << o;
      }
      if (!why.empty()) break;
    }
    return true;
  }

  // numpy: an empty extent of these is an error ("zero-size array to reduction operation ...
  // which has no identity", "attempt to get argmax of an empty sequence").
  static bool has_identity(ReduceOp op) {
    const ReduceOp none[] = {ReduceOp::min,       ReduceOp::max,      ReduceOp::argmin,
                             ReduceOp::argmax,    ReduceOp::nanmin,   ReduceOp::nanmax,
                             ReduceOp::nanargmin, ReduceOp::nanargmax};
    return std::find(std::begin(none), std::end(none), op) == std::end(none);
  }

  // Σ|x| of output o's elements (floats), which makes the sum tolerance meaningful.
  static double magnitude(DType t, const Rearranged& r, std::int64_t o) {
    double m = 0;
    if (!is_float(t)) return m;
    visit_dtype(t, [&](auto v) {
      using T = decltype(v);
      const T* p = reinterpret_cast<const T*>(r.rows.data()) + o * r.extent;
      for (std::int64_t e = 0; e < r.extent; ++e)
        if (!std::isnan(static_cast<double>(p[e]))) m += std::fabs(static_cast<double>(p[e]));
    });
    return m;
  }

  // nanargmin / nanargmax of an extent of NaN alone: numpy's error, which reduce() throws.
  static bool is_nan_all_slice(DType t, ReduceOp op, const Rearranged& r) {
    if ((op != ReduceOp::nanargmin && op != ReduceOp::nanargmax) || !is_float(t)) return false;
    bool found = false;
    visit_dtype(t, [&](auto v) {
      using T = decltype(v);
      const T* p = reinterpret_cast<const T*>(r.rows.data());
      for (std::int64_t o = 0; o < r.outputs && !found; ++o)
        found = std::all_of(p + o * r.extent, p + (o + 1) * r.extent,
                            [](T x) { return std::isnan(static_cast<double>(x)); });
    });
    return found;
  }

  // The elements of a strided view of `host`, dense in C order (each from its coordinates).
  static std::vector<unsigned char> compact(DType t, const Shape& shape, const Shape& strides,
                                            const std::vector<unsigned char>& host) {
    if (strides.empty()) return host;
    std::int64_t n = 1;
    for (auto e : shape)
      n *= e;
    const std::size_t item = dtype_size(t);
    std::vector<unsigned char> out(static_cast<std::size_t>(n) * item);
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t rest = i, at = 0;
      for (std::size_t d = shape.size(); d-- > 0;) {
        at += rest % shape[d] * strides[d];
        rest /= shape[d];
      }
      std::copy_n(host.data() + at * item, item, out.data() + i * item);
    }
    return out;
  }

  // Every axis form with and without keepdims, every op in `ops`.
  template <class Ops>
  int sweep(DType t, const Shape& shape, const Ops& ops, std::mt19937_64& rng, int nan_one_in) {
    std::int64_t n = 1;
    for (auto d : shape)
      n *= d;
    int covered = 0;
    for (ReduceOp op : ops) {
      const bool products = op == ReduceOp::prod || op == ReduceOp::nanprod;
      const auto host = random_input(t, n, rng, products, nan_one_in);
      for (const auto& axes : axis_forms(static_cast<int>(shape.size()))) {
        if (is_arg_op(op) && axes && axes->size() != 1) continue;  // numpy's TypeError
        for (bool keepdims : {false, true}) {
          covered += check(t, op, shape, axes, keepdims, host);
          if (HasFailure()) return covered;
        }
      }
    }
    return covered;
  }
};

const std::vector<Shape> kShapes = {{7},          {1},          {0},          {3, 5},
                                    {1, 6},       {4, 0},       {0, 3},       {2, 3, 4},
                                    {3, 1, 5},    {2, 0, 3},    {5, 7, 3},    {2, 3, 4, 5},
                                    {3, 1, 4, 2}, {2, 3, 0, 2}, {1, 1, 1, 1}, {4, 1, 1, 3}};

TEST_P(ReduceAxesTest, EveryOpAndAxisFormOnSmallShapes) {
  std::mt19937_64 rng(run_seed());
  int covered = 0;
  for (const Shape& shape : kShapes) {
    covered += sweep(DType::float32, shape, kAllReduceOps, rng, 0);
    if (HasFailure()) return;
  }
  EXPECT_GT(covered, 0) << "the variant covers no case at all";
}

TEST_P(ReduceAxesTest, IntegerAndBoolInputs) {
  std::mt19937_64 rng(run_seed() + 1);
  const ReduceOp ops[] = {ReduceOp::sum,  ReduceOp::prod,          ReduceOp::min, ReduceOp::argmax,
                          ReduceOp::mean, ReduceOp::count_nonzero, ReduceOp::all};
  for (DType t : {DType::int32, DType::boolean})
    for (const Shape& shape : {Shape{2, 3, 4}, Shape{3, 1, 4, 2}, Shape{4, 0}}) {
      sweep(t, shape, ops, rng, 0);
      if (HasFailure()) return;
    }
}

// NaN sprinkled in: the nan-ops skip them, min/max and the arg ops find them, per output.
TEST_P(ReduceAxesTest, NaNAlongEveryAxis) {
  std::mt19937_64 rng(run_seed() + 2);
  const ReduceOp ops[] = {ReduceOp::max,    ReduceOp::argmin,    ReduceOp::nansum,
                          ReduceOp::nanmin, ReduceOp::nanargmax, ReduceOp::nanmean,
                          ReduceOp::nanstd};
  for (const Shape& shape : {Shape{3, 4, 5}, Shape{2, 3, 2, 4}}) {
    sweep(DType::float64, shape, ops, rng, 4);
    if (HasFailure()) return;
  }
}

// Every item width of the gather (1, 2, 4 and 8 bytes), and inputs larger than one block of
// the gather and of the kernels, with interleaved axes.
TEST_P(ReduceAxesTest, LargerInputsAndEveryItemWidth) {
  std::mt19937_64 rng(run_seed() + 3);
  const std::vector<std::pair<Shape, std::vector<int>>> cases = {{{33, 65, 37}, {0, 2}},
                                                                 {{33, 65, 37}, {1}},
                                                                 {{17, 9, 33, 31}, {1, 3}},
                                                                 {{17, 9, 33, 31}, {-4, -2}},
                                                                 {{5, 300, 301}, {0, 2}}};
  for (DType t : {DType::uint8, DType::int16, DType::float32, DType::float64})
    for (const auto& [shape, axes] : cases) {
      std::int64_t n = 1;
      for (auto d : shape)
        n *= d;
      const auto host = random_input(t, n, rng, false);
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::mean})
        check(t, op, shape, axes, false, host);
      if (axes.size() == 1) check(t, ReduceOp::argmin, shape, axes, true, host);
      if (HasFailure()) return;
    }
}

// A 2-D input whose rows are padded: every axis form reads past the padding.
TEST_P(ReduceAxesTest, TwoDimensionalWithARowStride) {
  std::mt19937_64 rng(run_seed() + 4);
  const std::int64_t stride = 8;
  for (const Shape& shape : {Shape{6, 5}, Shape{6, 1}}) {  // rows, and a column, 8 apart
    const auto host = random_input(DType::float32, shape[0] * stride, rng, false);
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::argmax, ReduceOp::var})
      for (const auto& axes : axis_forms(2)) {
        if (is_arg_op(op) && axes && axes->size() != 1) continue;
        check(DType::float32, op, shape, axes, false, host, {stride, 1});
        if (HasFailure()) return;
      }
  }
}

// Views numpy makes without a copy, each over a buffer larger than its elements: every op that
// differs in how it folds, every axis form, with and without keepdims.
TEST_P(ReduceAxesTest, StridedViews) {
  std::mt19937_64 rng(run_seed() + 5);
  const std::vector<std::pair<Shape, Shape>> views = {
      {{7}, {3}},                // x[::3]
      {{5}, {0}},                // a broadcast scalar
      {{4, 5}, {11, 2}},         // x[::, ::2] of rows 11 apart
      {{3, 4, 5}, {40, 10, 1}},  // x[:, ::2, :] of (3, 8, 5)
      {{3, 4, 2}, {40, 5, 1}},   // x[:, :4, :2] of (3, 8, 5)
      {{4, 6}, {0, 1}},          // a row broadcast to 4 rows
      {{5, 3}, {1, 0}},          // a column broadcast to 3 columns
      {{6, 4}, {1, 1}},          // overlapping rows (a sliding window)
      {{5, 4}, {1, 5}},          // a transposed (4, 5)
      {{3, 1, 4}, {4, 999, 1}},  // C order but for an axis of length 1
      {{2, 3, 2, 4}, {61, 3, 29, 7}}};
  const ReduceOp ops[] = {ReduceOp::sum, ReduceOp::argmin, ReduceOp::nanmax, ReduceOp::var,
                          ReduceOp::count_nonzero};
  for (const auto& [shape, strides] : views) {
    std::int64_t reach = 1;
    for (std::size_t d = 0; d < shape.size(); ++d)
      reach += (shape[d] - 1) * strides[d];
    const auto host = random_input(DType::float32, reach + 3, rng, false, 5);
    for (ReduceOp op : ops)
      for (const auto& axes : axis_forms(static_cast<int>(shape.size()))) {
        if (is_arg_op(op) && axes && axes->size() != 1) continue;
        for (bool keepdims : {false, true})
          check(DType::float32, op, shape, axes, keepdims, host, strides);
        if (HasFailure()) return;
      }
  }
}

// Views whose innermost elements are a step apart, long enough for every way a variant that
// reads steps in place folds them (a thread, a warp or a block per row; columns; one block or a
// grid over a 1-D step): exact sums of small integers, first indices, moments and NaN rules.
TEST_P(ReduceAxesTest, SteppedViewsOfEverySize) {
  std::mt19937_64 rng(run_seed() + 6);
  struct View {
    Shape shape, strides;
    std::optional<std::vector<int>> axes;
  };
  const std::vector<View> views = {{{1}, {2}, std::nullopt},
                                   {{37}, {2}, std::nullopt},
                                   {{5000}, {3}, std::nullopt},
                                   {{70001}, {2}, std::nullopt},
                                   {{9000}, {33}, std::vector{0}},
                                   {{3, 7}, {19, 2}, std::vector{1}},
                                   {{70, 300}, {605, 2}, std::vector{-1}},
                                   {{5, 5000}, {15001, 3}, std::vector{1}},
                                   {{4, 3, 500}, {3000, 1000, 2}, std::vector{1, 2}},
                                   {{300}, {3}, std::vector<int>{}},
                                   {{70, 300}, {605, 2}, std::vector{0}},
                                   {{5000, 3}, {8, 3}, std::vector{0}}};
  for (DType t : {DType::float32, DType::int8, DType::float64}) {
    for (const View& v : views) {
      std::int64_t reach = 1;
      for (std::size_t d = 0; d < v.shape.size(); ++d)
        reach += (v.shape[d] - 1) * v.strides[d];
      const auto host = random_input(t, reach + 1, rng, false, t == DType::float32 ? 7 : 0);
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::argmax, ReduceOp::var, ReduceOp::nanmin,
                          ReduceOp::count_nonzero}) {
        if (is_arg_op(op) && v.axes && v.axes->size() != 1) continue;
        check(t, op, v.shape, v.axes, false, host, v.strides);
        if (HasFailure()) return;
      }
    }
  }
}

// A variant that reads steps is planned to: a 1-D step as one row (axis all), rows of a step
// as rows or columns, each without a gather; other variants gather those views.
TEST(ReduceAxesPlan, StepsAreReadInPlaceWhereTheVariantCan) {
  ReduceOptions o{ReduceOp::sum, Axis::all, ""};
  detail::AxesPlan p = detail::plan_reduce_axes({1000}, {3}, o, true);
  EXPECT_FALSE(p.gathers);
  EXPECT_EQ(p.axis, Axis::all);
  EXPECT_EQ(p.cols, 1000);
  EXPECT_EQ(p.col_step, 3);
  EXPECT_TRUE(detail::plan_reduce_axes({1000}, {3}, o, false).gathers);
  o.axes = std::vector<int>{-1};
  p = detail::plan_reduce_axes({4, 3, 500}, {3000, 1000, 2}, o, true);  // rows of (12, 500)
  EXPECT_FALSE(p.gathers);
  EXPECT_EQ(p.axis, Axis::rows);
  EXPECT_EQ(p.rows, 12);
  EXPECT_EQ(p.cols, 500);
  EXPECT_EQ(p.row_stride, 1000);
  EXPECT_EQ(p.col_step, 2);
  o.axes = std::vector<int>{0};
  p = detail::plan_reduce_axes({70, 300}, {605, 2}, o, true);  // columns of a step
  EXPECT_FALSE(p.gathers);
  EXPECT_EQ(p.axis, Axis::cols);
  EXPECT_EQ(p.col_step, 2);
  o.axes = std::vector<int>{1, 2};  // a step of both kinds of axis is gathered
  EXPECT_TRUE(detail::plan_reduce_axes({70, 30, 10}, {905, 21, 2}, o, true).gathers);
}

// A Reducer with a gather is reused: each run gathers its input afresh.
TEST_P(ReduceAxesTest, AGatheringReducerRunsAgain) {
  const Device& d = GetParam().device;
  ReduceOptions o{ReduceOp::sum, Axis::all, GetParam().variant};
  o.axes = std::vector<int>{0, 2};
  std::optional<Reducer> made;
  try {
    made.emplace(d, DType::int32, Shape{2, 3, 4}, 0, o);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::unsupported) GTEST_SKIP() << e.what();
    throw;
  }
  Reducer& reducer = *made;
  EXPECT_EQ(reducer.outputs(), 3);
  EXPECT_EQ(reducer.result_shape(), (Shape{3}));
  Buffer values(d, 3 * sizeof(std::int64_t)), indices(d, 0);
  for (int k = 1; k <= 2; ++k) {
    std::vector<std::int32_t> x(24);
    for (int i = 0; i < 24; ++i)
      x[static_cast<std::size_t>(i)] = k * i;
    Array in = Array::from_host(d, DType::int32, {2, 3, 4}, x.data());
    reducer.run(in, values, indices);
    std::vector<std::int64_t> got(3);
    values.download(got.data(), 3 * sizeof(std::int64_t));
    // output j: the sum over i and l of k · x[i][j][l], x[i][j][l] = 12 i + 4 j + l
    for (int j = 0; j < 3; ++j) {
      std::int64_t want = 0;
      for (int i = 0; i < 2; ++i)
        for (int l = 0; l < 4; ++l)
          want += k * (12 * i + 4 * j + l);
      EXPECT_EQ(got[static_cast<std::size_t>(j)], want) << "run " << k << ", output " << j;
    }
  }
  Array other(d, DType::int32, {2, 12});
  EXPECT_THROW(reducer.run(other, values, indices), Error);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, ReduceAxesTest, ::testing::ValuesIn(targets()), target_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ReduceAxesTest);

class ReduceAxesStreamTest : public ::testing::TestWithParam<Device> {};

// An N-D Source streamed in small chunks gives the in-memory answer for every axis form: as rows
// or columns of the 2-D view where the axes allow, through device memory where they interleave.
TEST_P(ReduceAxesStreamTest, StreamedAxesMatchInMemory) {
  const Device& d = GetParam();
  std::mt19937_64 rng(run_seed() + 5);
  for (const Shape& shape : {Shape{6, 35, 41}, Shape{3, 4, 5, 6}, Shape{2, 0, 3}}) {
    std::int64_t n = 1;
    for (auto e : shape)
      n *= e;
    const auto host = random_input(DType::int32, n, rng, false);
    const Array in = Array::from_host(d, DType::int32, shape, host.data());
    for (const auto& axes : axis_forms(static_cast<int>(shape.size())))
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::argmin}) {
        if (is_arg_op(op) && axes && axes->size() != 1) continue;
        SCOPED_TRACE(std::string(reduce_op_name(op)) + " of " + text(shape) + " axis " +
                     (axes ? text(*axes) : "None"));
        ReduceOptions o;
        o.op = op;
        o.axes = axes;
        o.keepdims = axes && axes->size() == 1;
        StreamOptions so;
        so.chunk_bytes = 256;
        StreamStats stats;
        Source source = Source::from_host(DType::int32, shape, host.data());
        ReduceResult want;
        try {
          want = reduce(in, o);
        } catch (const Error&) {
          EXPECT_THROW(reduce(source, d, o, so), Error);
          continue;
        }
        const ReduceResult got = reduce(source, d, o, so, &stats);
        EXPECT_EQ(got.shape, want.shape);
        EXPECT_EQ(got.indices, want.indices);
        ASSERT_EQ(got.values.size(), want.values.size());
        for (std::size_t k = 0; k < got.values.size(); ++k)
          EXPECT_EQ(got.values[k].i, want.values[k].i) << "output " << k;
        if (n > 0) EXPECT_EQ(stats.bytes, static_cast<std::uint64_t>(n) * sizeof(std::int32_t));
        if (HasFailure()) return;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ReduceAxesStreamTest, ::testing::ValuesIn(devices()),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return device_name(info.param);
                         });

ReduceOptions options_of(ReduceOp op, Axis axis = Axis::all) {
  ReduceOptions o;
  o.op = op;
  o.axis = axis;
  return o;
}

// Bad axes: numpy's reasons, as Error(invalid_argument), before anything runs.
TEST(ReduceAxes, BadAxesAreInvalidArguments) {
  Device cpu = Device::open(Backend::cpu);
  Array a(cpu, DType::float32, {2, 3, 4});
  auto expect_invalid = [&](ReduceOptions o, const std::string& words) {
    try {
      reduce(a, o);
      ADD_FAILURE() << "no error; expected one about " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  };
  ReduceOptions o = options_of(ReduceOp::sum);
  o.axes = std::vector<int>{3};
  expect_invalid(o, "axis 3 is out of bounds for array of dimension 3");
  o.axes = std::vector<int>{-4};
  expect_invalid(o, "axis -4 is out of bounds for array of dimension 3");
  o.axes = std::vector<int>{0, -3};
  expect_invalid(o, "duplicate value in 'axis'");
  o.axes = std::vector<int>{1, 1};
  expect_invalid(o, "duplicate value in 'axis'");
  ReduceOptions arg = options_of(ReduceOp::argmax);
  arg.axes = std::vector<int>{0, 1};
  expect_invalid(arg, "argmax takes one axis");
  arg.axes = std::vector<int>{};
  expect_invalid(arg, "argmax takes one axis");
  expect_invalid(options_of(ReduceOp::sum, Axis::rows), "needs 2-D");
  ReduceOptions both = options_of(ReduceOp::sum, Axis::cols);
  both.axes = std::vector<int>{0};
  expect_invalid(both, "both given");
}

TEST(ReduceAxes, ResultShapesAreNumpys) {
  ReduceOptions o = options_of(ReduceOp::sum);
  EXPECT_EQ(reduce_result_shape({2, 3, 4}, o), Shape{});
  o.keepdims = true;
  EXPECT_EQ(reduce_result_shape({2, 3, 4}, o), (Shape{1, 1, 1}));
  o.axes = std::vector<int>{-1, 0};
  EXPECT_EQ(reduce_result_shape({2, 3, 4}, o), (Shape{1, 3, 1}));
  o.keepdims = false;
  EXPECT_EQ(reduce_result_shape({2, 3, 4}, o), (Shape{3}));
  o.axes = std::vector<int>{};
  EXPECT_EQ(reduce_result_shape({2, 3, 4}, o), (Shape{2, 3, 4}));
  EXPECT_EQ(reduced_axes(3, o), std::vector<int>{});
  o.axes = std::vector<int>{2, -3};
  EXPECT_EQ(reduced_axes(3, o), (std::vector<int>{0, 2}));
  EXPECT_EQ(reduced_axes(2, options_of(ReduceOp::sum, Axis::rows)), std::vector<int>{1});
  EXPECT_EQ(reduced_axes(2, options_of(ReduceOp::sum, Axis::cols)), std::vector<int>{0});
}

}  // namespace
}  // namespace parpat::test
