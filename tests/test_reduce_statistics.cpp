// mean, var, std, the nan-ops, count_nonzero, any and all: every variant that claims them against
// the CPU reference on fresh random inputs (NaN sprinkled into floats) along every axis, and
// against numpy's own answers on small inputs, empty and all-NaN ones, ddof and infinities.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/reduce.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/verify.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

constexpr ReduceOp kStatisticOps[] = {
    ReduceOp::mean,          ReduceOp::var,     ReduceOp::std,    ReduceOp::nansum,
    ReduceOp::nanprod,       ReduceOp::nanmin,  ReduceOp::nanmax, ReduceOp::nanargmin,
    ReduceOp::nanargmax,     ReduceOp::nanmean, ReduceOp::nanvar, ReduceOp::nanstd,
    ReduceOp::count_nonzero, ReduceOp::any,     ReduceOp::all};

std::vector<Target> targets() {
  return variant_targets("reduce");
}

// Integers over a small range (so zeros occur for count_nonzero) or their whole range; floats
// near 1 (products stay finite) with about one element in eight NaN.
std::vector<unsigned char> random_input(DType t, std::int64_t n, std::mt19937_64& rng,
                                        bool whole_range) {
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(t));
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(out.data());
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (is_float_type<T>) {
        p[i] = static_cast<T>(rng() % 8 == 0
                                  ? std::numeric_limits<double>::quiet_NaN()
                                  : 1.0 + std::uniform_real_distribution<double>(-1e-3, 1e-3)(rng));
        if (rng() % 5 == 0) p[i] = T(0.0);
      } else {
        p[i] = static_cast<T>(whole_range ? rng() : rng() % 4);
      }
    }
  });
  return out;
}

class ReduceStatisticsTest : public ::testing::TestWithParam<Target> {
 protected:
  bool claims(const detail::ReduceShape& s) const {
    const auto& variant =
        detail::find_reduce_variant(GetParam().device.backend(), GetParam().variant);
    return variant.supports(s, GetParam().device.info());
  }

  void check(DType t, ReduceOp op, Axis axis, std::int64_t rows, std::int64_t cols, double ddof,
             const std::vector<unsigned char>& host) {
    detail::ReduceShape s{t, op, axis, rows, cols, cols, ddof};
    if (!claims(s)) return;
    SCOPED_TRACE(std::string(reduce_op_name(op)) + " of " + dtype_name(t) + " " +
                 std::to_string(rows) + "x" + std::to_string(cols) + " axis " + axis_name(axis) +
                 " ddof " + std::to_string(ddof) + ", seed " + std::to_string(run_seed()));
    Array in = Array::from_host(GetParam().device, t, {rows, cols}, host.data());
    ReduceOptions o{op, axis, GetParam().variant};
    o.ddof = ddof;
    ReduceResult r = reduce(in, o);
    const DType out = reduce_result_dtype(t, op);
    ASSERT_EQ(r.dtype, out);
    ASSERT_EQ(r.values.size(), static_cast<std::size_t>(s.outputs()));
    std::vector<unsigned char> expected(static_cast<std::size_t>(s.outputs()) * dtype_size(out));
    std::vector<std::int64_t> expected_index(static_cast<std::size_t>(s.outputs()));
    detail::reduce_reference(host.data(), s, expected.data(), expected_index.data());
    // Sums and means of mixed signs that cancel are held to the scale of their terms (Σ|x| per
    // output); var and std to their own.
    const bool sum = op == ReduceOp::sum || op == ReduceOp::nansum || op == ReduceOp::mean ||
                     op == ReduceOp::nanmean;
    std::vector<double> magnitude(static_cast<std::size_t>(s.outputs()));
    if (sum) magnitude = sum_magnitudes(t, host, rows, cols, cols, axis);
    for (std::int64_t o = 0; o < s.outputs(); ++o) {
      auto e = Scalar::from_bytes(out, expected.data() + o * dtype_size(out));
      std::string why = detail::reduce_mismatch(e, r.values[o], op, s.extent(),
                                                magnitude[static_cast<std::size_t>(o)]);
      EXPECT_TRUE(why.empty()) << "output " << o << ": " << why;
      if (is_arg_op(op)) EXPECT_EQ(r.indices.at(o), expected_index[o]) << "output " << o;
      if (!why.empty()) break;
    }
  }

  void every_axis(std::initializer_list<DType> dtypes);

  // reduce of a 1-D float64 input.
  ReduceResult run(const std::vector<double>& x, ReduceOp op, double ddof = 0) {
    Array in = Array::from_host(GetParam().device, DType::float64,
                                {static_cast<std::int64_t>(x.size())}, x.data());
    ReduceOptions o{op, Axis::all, GetParam().variant};
    o.ddof = ddof;
    return reduce(in, o);
  }
};

// Every statistic op, every axis form and ddof, on random inputs of `dtypes`. The dtypes are
// split over the tests below so that gtest's shards share the programs an OpenCL device builds
// for each (dtype, op), seconds each on NVIDIA's compiler.
void ReduceStatisticsTest::every_axis(std::initializer_list<DType> dtypes) {
  std::mt19937_64 rng(run_seed());
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1}, {1, 37}, {1, 4099}, {1, 100003}, {3, 1000}, {257, 19}, {64, 2100}, {2000, 40}};
  for (DType t : dtypes)
    for (auto [rows, cols] : shapes) {
      auto host = random_input(t, rows * cols, rng, rows * cols % 2 == 1);
      if (is_float(t))
        visit_dtype(t, [&](auto v) {
          using T = decltype(v);
          reinterpret_cast<T*>(host.data())[0] = T(1);
        });
      for (ReduceOp op : kStatisticOps)
        for (Axis axis : {Axis::all, Axis::rows, Axis::cols}) {
          // An extent of NaN alone has no nanargmin: checked below, not here.
          if (is_float(t) && is_arg_op(op) && axis != Axis::all) continue;
          check(t, op, axis, rows, cols, 0, host);
          if (HasFatalFailure()) return;
        }
      check(t, ReduceOp::var, Axis::all, rows, cols, 1, host);
      check(t, ReduceOp::nanstd, Axis::cols, rows, cols, 2.5, host);
    }
}

TEST_P(ReduceStatisticsTest, BoolAndBytesAlongEveryAxis) {
  every_axis({DType::boolean, DType::int8, DType::uint8});
}

TEST_P(ReduceStatisticsTest, TwoByteTypesAlongEveryAxis) {
  every_axis({DType::int16, DType::uint16, DType::float16, DType::bfloat16});
}

TEST_P(ReduceStatisticsTest, FourByteTypesAlongEveryAxis) {
  every_axis({DType::int32, DType::uint32, DType::float32});
}

TEST_P(ReduceStatisticsTest, EightByteTypesAlongEveryAxis) {
  every_axis({DType::int64, DType::uint64, DType::float64});
}

// nanmin, nanmax, nansum, nanargmin and nanargmax where NaN comes in runs or not at all: a leading
// run longer than a vector step, NaN all through but one number (at the start, the middle, the
// end), NaN alone, and ±0 and ±inf among NaN, at sizes around the CPU's lane steps and the GPUs'
// blocks.
TEST_P(ReduceStatisticsTest, NanExtremesSkipRunsOfNaN) {
  std::mt19937_64 rng(run_seed() + 9);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (DType t : {DType::float32, DType::float64})
    for (std::int64_t n : {256, 1000, 4099, 100003}) {
      std::uniform_int_distribution<std::int64_t> place(0, n - 1);
      std::vector<std::vector<double>> inputs;
      std::vector<double> leading(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        leading[static_cast<std::size_t>(i)] =
            i < 100 || rng() % 3 == 0 ? nan : std::uniform_real_distribution<>(-1, 1)(rng);
      inputs.push_back(leading);
      for (std::int64_t at : {std::int64_t{0}, place(rng), n - 1}) {
        std::vector<double> one(static_cast<std::size_t>(n), nan);
        one[static_cast<std::size_t>(at)] = -2.5;
        inputs.push_back(one);
      }
      inputs.emplace_back(static_cast<std::size_t>(n), nan);
      std::vector<double> specials(static_cast<std::size_t>(n));
      const double pool[] = {nan, nan, 0.0, -0.0, inf, -inf, 1.0};
      for (auto& x : specials)
        x = pool[rng() % 7];
      inputs.push_back(specials);
      // No NaN at all (the CPU's nanarg ops take argmin/argmax's lanes there): ties of ±0, ±inf
      // and 1 at many places, and spread values whose extremes come late.
      std::vector<double> ties(static_cast<std::size_t>(n)), spread(ties.size());
      for (auto& x : ties)
        x = pool[2 + rng() % 5];
      for (std::size_t i = 0; i < spread.size(); ++i)
        spread[i] = std::uniform_real_distribution<>(-1, 1)(rng) * static_cast<double>(i % 97);
      inputs.push_back(ties);
      inputs.push_back(spread);
      for (const auto& values : inputs) {
        std::vector<unsigned char> host(values.size() * dtype_size(t));
        visit_dtype(t, [&](auto v) {
          using T = decltype(v);
          for (std::size_t i = 0; i < values.size(); ++i)
            reinterpret_cast<T*>(host.data())[i] = static_cast<T>(values[i]);
        });
        // nanargmin and nanargmax of NaN alone raise, as numpy's do.
        const bool all_nan =
            std::all_of(values.begin(), values.end(), [](double x) { return std::isnan(x); });
        for (ReduceOp op : {ReduceOp::nanmin, ReduceOp::nanmax, ReduceOp::nansum,
                            ReduceOp::nanargmin, ReduceOp::nanargmax}) {
          if (all_nan && (op == ReduceOp::nanargmin || op == ReduceOp::nanargmax)) continue;
          check(t, op, Axis::all, 1, n, 0, host);
          if (HasFatalFailure()) return;
        }
      }
    }
}

// any and all hinge on one element:// any and all hinge on one element: zeros with one non-zero
// element at a random place (any true, and false without it), and ones with one zero (all false,
// and true without it), at sizes around the variants' block and grid boundaries, along every axis
// of a 2-D view.
TEST_P(ReduceStatisticsTest, AnyAndAllFindTheOneElement) {
  std::mt19937_64 rng(run_seed());
  for (DType t : {DType::boolean, DType::int8, DType::uint16, DType::int32, DType::uint64,
                  DType::float32, DType::float64, DType::float16, DType::bfloat16})
    for (std::int64_t n : {1, 31, 4097, 65537, (1 << 20) + 3}) {
      std::vector<unsigned char> zeros(static_cast<std::size_t>(n) * dtype_size(t), 0);
      std::vector<unsigned char> ones = zeros;
      visit_dtype(t, [&](auto v) {
        using T = decltype(v);
        std::fill_n(reinterpret_cast<T*>(ones.data()), n, T(1));
      });
      // Float negative zero is zero, and NaN is non-zero.
      const std::int64_t at = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
      if (is_float(t) && n > 1)
        visit_dtype(t, [&](auto v) {
          using T = decltype(v);
          reinterpret_cast<T*>(zeros.data())[(at + 1) % n] = T(-0.0);
        });
      const std::int64_t cols = n % 2 == 1 && n > 31 ? 1 : n;  // a column too
      for (Axis axis : {Axis::all, Axis::rows, Axis::cols}) {
        check(t, ReduceOp::any, axis, n / cols, cols, 0, zeros);
        check(t, ReduceOp::all, axis, n / cols, cols, 0, ones);
      }
      visit_dtype(t, [&](auto v) {
        using T = decltype(v);
        T one = T(1);
        if constexpr (is_float_type<T>)
          if (rng() % 2) one = static_cast<T>(std::numeric_limits<double>::quiet_NaN());
        reinterpret_cast<T*>(zeros.data())[at] = one;
        reinterpret_cast<T*>(ones.data())[at] = T(0);
      });
      for (Axis axis : {Axis::all, Axis::rows, Axis::cols}) {
        check(t, ReduceOp::any, axis, n / cols, cols, 0, zeros);
        check(t, ReduceOp::all, axis, n / cols, cols, 0, ones);
      }
      // The reference itself must see the element (the check above compares with it).
      detail::ReduceShape whole{t, ReduceOp::any, Axis::all, 1, n, n, 0};
      unsigned char found = 0;
      detail::reduce_reference(zeros.data(), whole, &found, nullptr);
      EXPECT_EQ(found, 1) << "any of " << dtype_name(t) << " with element " << at << " set";
      whole.op = ReduceOp::all;
      detail::reduce_reference(ones.data(), whole, &found, nullptr);
      EXPECT_EQ(found, 0) << "all of " << dtype_name(t) << " with element " << at << " zero";
      if (HasFatalFailure()) return;
    }
}

// numpy's answers (numpy 2, printed by hand from np.var, np.nanmean, ...).
TEST_P(ReduceStatisticsTest, MatchNumpyOnSmallInputs) {
  if (!claims({DType::float64, ReduceOp::var, Axis::all, 1, 4, 4})) GTEST_SKIP() << "not claimed";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_DOUBLE_EQ(run({1, 2, 3, 4}, ReduceOp::mean).values[0].f, 2.5);
  EXPECT_DOUBLE_EQ(run({1, 2, 3, 4}, ReduceOp::var).values[0].f, 1.25);
  EXPECT_DOUBLE_EQ(run({1, 2, 3, 4}, ReduceOp::var, 1).values[0].f, 5.0 / 3);
  EXPECT_DOUBLE_EQ(run({1, 2, 3, 4}, ReduceOp::std, 1.5).values[0].f, std::sqrt(5.0 / 2.5));
  EXPECT_DOUBLE_EQ(run({1, nan, 3}, ReduceOp::nanmean).values[0].f, 2);
  EXPECT_DOUBLE_EQ(run({1, nan, 3}, ReduceOp::nanvar).values[0].f, 1);
  EXPECT_DOUBLE_EQ(run({1, nan, 3}, ReduceOp::nansum).values[0].f, 4);
  EXPECT_DOUBLE_EQ(run({2, nan, 3}, ReduceOp::nanprod).values[0].f, 6);
  EXPECT_DOUBLE_EQ(run({nan, 5, -2, nan}, ReduceOp::nanmin).values[0].f, -2);
  EXPECT_EQ(run({nan, 1, 3, 3}, ReduceOp::nanargmax).indices[0], 2);
  EXPECT_EQ(run({nan, 1, 3, 1}, ReduceOp::nanargmin).indices[0], 1);
  EXPECT_EQ(run({0, nan, -0.0, 2}, ReduceOp::count_nonzero).values[0].i, 2);
  EXPECT_EQ(run({0, -0.0}, ReduceOp::any).values[0].u, 0u);
  EXPECT_EQ(run({0, nan}, ReduceOp::any).values[0].u, 1u);
  EXPECT_EQ(run({1, nan, -2}, ReduceOp::all).values[0].u, 1u);
  EXPECT_EQ(run({1, -0.0, 3}, ReduceOp::all).values[0].u, 0u);
  EXPECT_EQ(run({1, 2}, ReduceOp::all).dtype, DType::boolean);
  EXPECT_TRUE(std::isnan(run({1, nan}, ReduceOp::mean).values[0].f));
  EXPECT_EQ(run({1, inf}, ReduceOp::mean).values[0].f, inf);
  EXPECT_TRUE(std::isnan(run({1, inf}, ReduceOp::var).values[0].f));
  // ddof ≥ n: var gives inf for a positive M2 and NaN for a zero one; nanvar NaN either way.
  EXPECT_EQ(run({1, 2}, ReduceOp::var, 2).values[0].f, inf);
  EXPECT_TRUE(std::isnan(run({1, 1}, ReduceOp::var, 2).values[0].f));
  EXPECT_TRUE(std::isnan(run({1, 2, nan}, ReduceOp::nanvar, 2).values[0].f));
  // ... also of integer input, whose nanvar is computed as var.
  const std::int32_t ints[] = {1, 2};
  ReduceOptions nanvar{ReduceOp::nanvar, Axis::all, GetParam().variant};
  nanvar.ddof = 2;
  auto int_var = [&](const ReduceOptions& o) {
    return reduce(Array::from_host(GetParam().device, DType::int32, {2}, ints), o).values[0].f;
  };
  EXPECT_TRUE(std::isnan(int_var(nanvar)));
  nanvar.op = ReduceOp::var;
  EXPECT_EQ(int_var(nanvar), inf);
  // All NaN: nanmin, nanmean and nanvar give NaN; nanargmin is numpy's error.
  EXPECT_TRUE(std::isnan(run({nan, nan}, ReduceOp::nanmin).values[0].f));
  EXPECT_TRUE(std::isnan(run({nan, nan}, ReduceOp::nanmean).values[0].f));
  EXPECT_TRUE(std::isnan(run({nan, nan}, ReduceOp::nanstd).values[0].f));
  EXPECT_DOUBLE_EQ(run({nan, nan}, ReduceOp::nansum).values[0].f, 0);
  EXPECT_THROW(run({nan, nan}, ReduceOp::nanargmin), Error);
}

TEST_P(ReduceStatisticsTest, EmptyInputFollowsNumpy) {
  Array empty(GetParam().device, DType::float32, {0});
  auto value = [&](ReduceOp op) {
    return reduce(empty, {op, Axis::all, GetParam().variant}).values.at(0);
  };
  EXPECT_TRUE(std::isnan(value(ReduceOp::mean).f));
  EXPECT_TRUE(std::isnan(value(ReduceOp::var).f));
  EXPECT_TRUE(std::isnan(value(ReduceOp::nanstd).f));
  EXPECT_EQ(value(ReduceOp::nansum).f, 0);
  EXPECT_EQ(value(ReduceOp::nanprod).f, 1);
  EXPECT_EQ(value(ReduceOp::count_nonzero).i, 0);
  EXPECT_EQ(value(ReduceOp::any).u, 0u);  // numpy: any([]) is False, all([]) True
  EXPECT_EQ(value(ReduceOp::all).u, 1u);
  EXPECT_EQ(reduce_result_dtype(DType::int32, ReduceOp::mean), DType::float64);
  for (ReduceOp op : {ReduceOp::nanmin, ReduceOp::nanargmax})
    EXPECT_THROW(reduce(empty, {op, Axis::all, GetParam().variant}), Error);
  ReduceOptions bad{ReduceOp::var, Axis::all, GetParam().variant};
  bad.ddof = -1;
  EXPECT_THROW(reduce(empty, bad), Error);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, ReduceStatisticsTest, ::testing::ValuesIn(targets()),
                         target_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ReduceStatisticsTest);

}  // namespace
}  // namespace parpat::test
