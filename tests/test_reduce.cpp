// Reduce: every backend × variant present against the CPU reference (DESIGN.md §2, §6), on
// fresh random inputs, the edge sizes, special values and 2-D shapes.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/reduce.hpp"
#include "parpat/registry.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/verify.hpp"
#include "runtime/device_impl.hpp"
#include "test_support.hpp"

#ifdef PARPAT_HAVE_CUDA
#include "parpat/cuda/reduce.hpp"
#endif

namespace parpat::test {
namespace {

std::vector<Target> targets() {
  return variant_targets("reduce");
}

constexpr DType kDTypes[] = {DType::boolean, DType::int8,    DType::uint8,   DType::int16,
                             DType::uint16,  DType::int32,   DType::uint32,  DType::int64,
                             DType::uint64,  DType::float32, DType::float64, DType::float16,
                             DType::bfloat16};
constexpr ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::prod,   ReduceOp::min,
                             ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax};

// Random elements: integers over their whole range (sums wrap), floats in [lo, 1).
std::vector<unsigned char> random_bytes(DType t, std::int64_t n, std::mt19937_64& rng,
                                        double lo = -1) {
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(t));
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(out.data());
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (is_float_type<T>) {
        p[i] = static_cast<T>(std::uniform_real_distribution<double>(lo, 1.0)(rng));
      } else {
        p[i] = static_cast<T>(rng());
      }
    }
  });
  return out;
}

// Products of many random values are all 0 or ±inf; keep them near 1 so the check means something.
void tame_for_prod(DType t, std::vector<unsigned char>& bytes) {
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(bytes.data());
    std::size_t n = bytes.size() / sizeof(T);
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (is_float_type<T>) p[i] = static_cast<T>(1.0 + static_cast<double>(p[i]) * 1e-3);
    }
  });
}

class ReduceTest : public ::testing::TestWithParam<Target> {
 protected:
  // Reduces `host` (laid out with `row_stride`) on the target and compares with the reference.
  // Returns false when the variant does not cover the case (its declared limits).
  bool check(DType t, ReduceOp op, Axis axis, std::int64_t rows, std::int64_t cols,
             std::int64_t row_stride, const std::vector<unsigned char>& host,
             const std::string& what) {
    const Target& target = GetParam();
    detail::ReduceShape s{t, op, axis, rows, cols, row_stride};
    const auto& variant = detail::find_reduce_variant(target.device.backend(), target.variant);
    if (s.extent() > 0 && s.outputs() > 0 && !variant.supports(s, target.device.info()))
      return false;
    std::vector<std::int64_t> shape = axis == Axis::all && rows == 1 && row_stride == cols
                                          ? std::vector<std::int64_t>{cols}
                                          : std::vector<std::int64_t>{rows, cols};
    SCOPED_TRACE(std::string(what) + ": " + reduce_op_name(op) + " of " + dtype_name(t) + " " +
                 std::to_string(rows) + "x" + std::to_string(cols) + " stride " +
                 std::to_string(row_stride) + " axis " + axis_name(axis) + ", seed " +
                 std::to_string(run_seed()));
    Array in = Array::from_host(target.device, t, shape, host.data(), row_stride);
    ReduceResult r = reduce(in, {op, axis, target.variant});
    DType out = reduce_result_dtype(t, op);
    EXPECT_EQ(r.dtype, out);
    std::vector<unsigned char> expected(static_cast<std::size_t>(s.outputs()) * dtype_size(out));
    std::vector<std::int64_t> expected_index(static_cast<std::size_t>(s.outputs()));
    detail::reduce_reference(host.data(), s, expected.data(), expected_index.data());
    // Σ|x| per output makes the float-sum tolerance meaningful on mixed-sign data.
    const std::vector<double> magnitude = sum_magnitudes(t, host, rows, cols, row_stride, axis);
    EXPECT_EQ(r.values.size(), static_cast<std::size_t>(s.outputs()));
    for (std::int64_t o = 0; o < s.outputs() && o < static_cast<std::int64_t>(r.values.size());
         ++o) {
      auto e = Scalar::from_bytes(out, expected.data() + o * dtype_size(out));
      std::string why = detail::reduce_mismatch(e, r.values[o], op, s.extent(), magnitude[o]);
      EXPECT_TRUE(why.empty()) << "output " << o << ": " << why;
      if (is_arg_op(op)) {
        EXPECT_EQ(r.indices.at(o), expected_index[o]) << "output " << o;
      }
      if (!why.empty()) break;
    }
    return true;
  }
};

TEST_P(ReduceTest, RandomInputsAtEdgeSizes) {
  std::mt19937_64 rng(run_seed());
  const std::int64_t sizes[] = {1, 2, 31, 32, 33, 1023, 1024, 1025, 4099, 65537, (1 << 20) + 7};
  int covered = 0;
  for (DType t : kDTypes)
    for (ReduceOp op : kOps)
      for (std::int64_t n : sizes) {
        if (GetParam().variant == "serial" && GetParam().device.backend() == Backend::cpu &&
            n > 70000)
          continue;  // the reference against itself: once per size class is enough
        auto host = random_bytes(t, n, rng);
        if (op == ReduceOp::prod) tame_for_prod(t, host);
        covered += check(t, op, Axis::all, 1, n, n, host, "random");
        if (HasFailure()) return;
      }
  EXPECT_GT(covered, 0) << "the variant covers no case at all";
}

// bool's min, max, argmin, argmax, any and all are decided by one element (the CPU stops at it):
// none, the first, a middle and the last element deciding, in inputs of one or many chunks.
TEST_P(ReduceTest, BoolDecidedByOneElement) {
  const ReduceOp ops[] = {ReduceOp::min,    ReduceOp::max, ReduceOp::argmin,
                          ReduceOp::argmax, ReduceOp::any, ReduceOp::all};
  for (std::int64_t n : {1, 33, 65537, 3 * 65536 + 5, (1 << 20) + 7})
    for (unsigned char fill : {0, 1})
      for (std::int64_t at : {std::int64_t{-1}, std::int64_t{0}, n / 2, n - 1}) {
        std::vector<unsigned char> host(static_cast<std::size_t>(n), fill);
        if (at >= 0) host[static_cast<std::size_t>(at)] = 1 - fill;
        for (ReduceOp op : ops)
          check(DType::boolean, op, Axis::all, 1, n, n, host,
                "fill " + std::to_string(fill) + ", other at " + std::to_string(at));
        if (HasFailure()) return;
      }
}

TEST_P(ReduceTest, FloatSumsAreAccurateOnOneSignData) {
  std::mt19937_64 rng(run_seed() + 1);
  for (DType t : {DType::float32, DType::float64})
    for (std::int64_t n : {std::int64_t{1000}, std::int64_t{(1 << 22) + 3}}) {
      auto host = random_bytes(t, n, rng, 0.0);
      check(t, ReduceOp::sum, Axis::all, 1, n, n, host, "one-sign");
    }
}

TEST_P(ReduceTest, EmptyInput) {
  const Target& target = GetParam();
  for (DType t : kDTypes) {
    Array empty(target.device, t, {0});
    auto s = reduce(empty, {ReduceOp::sum, Axis::all, target.variant});
    ASSERT_EQ(s.values.size(), 1u);
    EXPECT_EQ(s.values[0].as_double(), 0.0);
    auto p = reduce(empty, {ReduceOp::prod, Axis::all, target.variant});
    EXPECT_EQ(p.values[0].as_double(), 1.0);
    for (ReduceOp op : {ReduceOp::min, ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax}) {
      try {
        reduce(empty, {op, Axis::all, target.variant});
        ADD_FAILURE() << reduce_op_name(op) << " of an empty array must be an error";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      }
    }
  }
}

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

TEST_P(ReduceTest, NaNInfinityNegativeZeroAndTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  std::mt19937_64 rng(run_seed() + 2);
  for (std::int64_t n : {std::int64_t{5}, std::int64_t{1025}, std::int64_t{70001}}) {
    for (int placement = 0; placement < 8; ++placement) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (auto& x : v)
        x = std::uniform_real_distribution<float>(-1, 1)(rng);
      std::int64_t a = std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng);
      std::int64_t b = std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng);
      switch (placement) {
        case 0:
          v[a] = nan;
          v[b] = nan;
          break;  // first NaN wins for arg ops
        case 1:
          v[a] = inf;
          v[b] = -inf;
          break;  // infinities are ordinary extremes
        case 2:
          v[a] = 5;
          v[b] = 5;
          v[n - 1] = 5;
          break;  // ties: first index wins
        case 3:
          for (auto& x : v)
            x = -0.0f;
          v[a] = 0.0f;
          break;
        case 4:
          v[0] = 5;
          v[n - 1] = 5;
          v[b] = -5;
          break;  // the first element is the extreme, tied by the last
        case 5:
          v[n - 1] = -5;
          break;  // the extreme is the very last element
        case 6:
          for (std::int64_t k = std::min(a, n - 4); k < std::min(a, n - 4) + 4; ++k)
            v[k] = 5;
          break;  // four equal extremes side by side: ties inside one vector load
        case 7:
          v[std::min(a, n - 3) + 1] = nan;
          v[std::min(a, n - 3) + 2] = nan;
          break;  // two NaNs side by side
      }
      for (ReduceOp op : kOps) {
        if (op == ReduceOp::prod) continue;
        check(DType::float32, op, Axis::all, 1, n, n, bytes_of(v),
              "specials " + std::to_string(placement));
        if (HasFailure()) return;
      }
      std::vector<double> d(v.begin(), v.end());
      for (ReduceOp op : {ReduceOp::min, ReduceOp::argmax, ReduceOp::sum})
        check(DType::float64, op, Axis::all, 1, n, n, bytes_of(d), "specials f64");
    }
  }
}

TEST_P(ReduceTest, IntegerExtremesAndWrap) {
  std::int64_t n = 4097;
  std::vector<std::int64_t> i64(n, std::numeric_limits<std::int64_t>::max());
  i64[7] = std::numeric_limits<std::int64_t>::min();
  std::vector<std::uint64_t> u64(n, std::numeric_limits<std::uint64_t>::max());
  u64[100] = 0;
  std::vector<std::int32_t> i32(n, std::numeric_limits<std::int32_t>::min());
  i32[n - 1] = std::numeric_limits<std::int32_t>::max();
  std::vector<std::uint32_t> u32(n, std::numeric_limits<std::uint32_t>::max());
  std::vector<std::uint8_t> u8(n, 255);
  u8[3] = 0;
  for (ReduceOp op : kOps) {
    check(DType::int64, op, Axis::all, 1, n, n, bytes_of(i64), "int64 extremes");
    check(DType::uint64, op, Axis::all, 1, n, n, bytes_of(u64), "uint64 extremes");
    check(DType::int32, op, Axis::all, 1, n, n, bytes_of(i32), "int32 extremes");
    check(DType::uint32, op, Axis::all, 1, n, n, bytes_of(u32), "uint32 extremes");
    check(DType::uint8, op, Axis::all, 1, n, n, bytes_of(u8), "uint8 extremes");
    if (HasFailure()) return;
  }
}

TEST_P(ReduceTest, TwoDimensionalShapesAndStrides) {
  std::mt19937_64 rng(run_seed() + 3);
  struct Shape {
    std::int64_t rows, cols, pad;
  };
  const Shape shapes[] = {{1, 1000, 0},  {1000, 1, 0}, {4096, 3, 0},  {3, 4096, 0},
                          {33, 1025, 5}, {257, 64, 3}, {2, 70001, 1}, {1, 7, 9}};
  int covered = 0;
  for (DType t : {DType::float32, DType::int32, DType::uint8, DType::float64, DType::uint64})
    for (ReduceOp op : kOps)
      for (Axis axis : {Axis::all, Axis::rows, Axis::cols})
        for (const Shape& sh : shapes) {
          std::int64_t stride = sh.cols + sh.pad;
          auto host = random_bytes(t, (sh.rows - 1) * stride + sh.cols, rng);
          if (op == ReduceOp::prod) tame_for_prod(t, host);
          covered += check(t, op, axis, sh.rows, sh.cols, stride, host, "2-D");
          if (HasFailure()) return;
        }
  const auto& info =
      detail::find_reduce_variant(GetParam().device.backend(), GetParam().variant).info;
  if (info.limits.find("axis all") == std::string::npos) EXPECT_GT(covered, 0);
}

TEST_P(ReduceTest, DefaultIsDeterministic) {
  const auto& info =
      detail::find_reduce_variant(GetParam().device.backend(), GetParam().variant).info;
  if (!info.deterministic) GTEST_SKIP() << "declared timing-dependent";
  std::mt19937_64 rng(run_seed() + 4);
  std::int64_t n = (1 << 21) + 11;
  auto host = random_bytes(DType::float32, n, rng);
  Array in = Array::from_host(GetParam().device, DType::float32, {n}, host.data());
  auto first = reduce(in, {ReduceOp::sum, Axis::all, GetParam().variant});
  for (int k = 0; k < 5; ++k) {
    auto again = reduce(in, {ReduceOp::sum, Axis::all, GetParam().variant});
    EXPECT_EQ(std::memcmp(&first.values[0].f, &again.values[0].f, sizeof(double)), 0)
        << first.values[0].to_string() << " vs " << again.values[0].to_string();
  }
}

TEST_P(ReduceTest, Uint8SumBeyondTwoToThe31) {
  const Device& d = GetParam().device;
  if (!d.info().independent_groups || d.backend() == Backend::cpu || GetParam().variant != "fast")
    GTEST_SKIP() << "GPU `fast` only";
  std::int64_t n = (std::int64_t{1} << 31) + 4099;
  if (d.info().global_memory < static_cast<std::uint64_t>(n) * 2) GTEST_SKIP() << "device memory";
  std::vector<unsigned char> host(static_cast<std::size_t>(n));
  std::mt19937_64 rng(run_seed() + 5);
  for (auto& b : host)
    b = static_cast<unsigned char>(rng() >> 56);
  check(DType::uint8, ReduceOp::sum, Axis::all, 1, n, n, host, "uint8 > 2^31");
  check(DType::uint8, ReduceOp::argmax, Axis::all, 1, n, n, host, "uint8 > 2^31");
}

// The launch shapes `fast` picks for small inputs (one block, small blocks with few loads per
// thread, the bandwidth-bound grid) under other settings of its tuning knobs: every shape must
// give the reference's result.
TEST_P(ReduceTest, FastSmallInputShapesUnderOtherTunings) {
  const Device& d = GetParam().device;
  if (d.backend() == Backend::cpu || GetParam().variant != "fast") GTEST_SKIP() << "GPU `fast`";
  std::vector<const char*> settings = {
      "reduce.fast.single_block_bytes=0,reduce.fast.small_items=1,reduce.fast.small_block=64",
      "reduce.fast.single_block_bytes=1048576,reduce.fast.single_block_items=8,"
      "reduce.fast.small_items=8",
      "reduce.fast.single_block_bytes=256,reduce.fast.small_items=3,reduce.fast.small_block=96",
  };
  if (d.backend() == Backend::cuda) {
    // sm_90: the ticket where a cluster would run, small clusters over several batches of
    // loads, and launches that do not overlap (elsewhere these fall back to the ticket).
    settings.push_back("reduce.fast.cluster_bytes=0");
    settings.push_back("reduce.fast.cluster_size=2,reduce.fast.cluster_bytes=16777216");
    settings.push_back("reduce.fast.cluster_size=4,reduce.fast.overlap_launch=0");
  }
  std::mt19937_64 rng(run_seed() + 7);
  for (const char* setting : settings) {
    ScopedTuning tuning(setting);
    for (DType t : {DType::float32, DType::float64, DType::int32})
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::argmax})
        for (std::int64_t n : {std::int64_t{33}, std::int64_t{1025}, std::int64_t{4099},
                               std::int64_t{65537}, std::int64_t{(1 << 20) + 7}}) {
          auto host = random_bytes(t, n, rng);
          check(t, op, Axis::all, 1, n, n, host, setting);
          if (HasFailure()) break;
        }
    if (HasFailure()) break;
  }
}

// Axis rows of `fast` with rows longer than a warp's share, on a grid smaller than the rows: one
// group per compute unit makes every group take more than 32 rows (CUDA combines a group's rows
// 32 at a time), unaligned rows included; CUDA's 0 is one group per row.
TEST_P(ReduceTest, FastLongRowsStrideOverTheGrid) {
  const Device& d = GetParam().device;
  if (d.backend() == Backend::cpu || GetParam().variant != "fast") GTEST_SKIP() << "GPU `fast`";
  std::mt19937_64 rng(run_seed() + 11);
  const std::int64_t rows = 33 * d.info().compute_units + 5, cols = 2051;
  std::vector<const char*> settings = {"reduce.fast.rows_grid_per_cu=1"};
  if (d.backend() == Backend::cuda)
    settings = {"reduce.fast.rows_blocks_per_cu=1", "reduce.fast.rows_blocks_per_cu=0"};
  for (const char* setting : settings) {
    ScopedTuning tuning(setting);
    for (DType t : {DType::float32, DType::int32, DType::float64})
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::argmin})
        for (std::int64_t pad : {std::int64_t{0}, std::int64_t{1}}) {
          auto host = random_bytes(t, (rows - 1) * (cols + pad) + cols, rng);
          check(t, op, Axis::rows, rows, cols, cols + pad, host, setting);
          if (HasFailure()) return;
        }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, ReduceTest, ::testing::ValuesIn(targets()), target_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ReduceTest);

TEST(ReduceApi, RejectsBadArguments) {
  Device cpu = Device::open(Backend::cpu);
  Array a = Array::from_vector(cpu, std::vector<float>{1, 2, 3});
  EXPECT_THROW(reduce(a, {ReduceOp::sum, Axis::all, "no-such-variant"}), Error);
  EXPECT_THROW(reduce(a, {ReduceOp::sum, Axis::rows, ""}), Error);
  EXPECT_THROW(parse_reduce_op("median"), Error);
  EXPECT_THROW(parse_axis("depth"), Error);
  EXPECT_THROW(Device::open(Backend::cpu, 3), Error);
}

}  // namespace
}  // namespace parpat::test

#ifdef PARPAT_HAVE_CUDA

namespace parpat::test {
namespace {

// The first CUDA device, or none.
std::optional<Device> first_cuda_device() {
  for (const auto& d : devices())
    if (d.backend() == Backend::cuda) return d;
  return std::nullopt;
}

// The raw-pointer entry: workspace queried, zeroed by the caller, reused across calls.
TEST(ReduceCudaRaw, MatchesTheReference) {
  std::optional<Device> cuda = first_cuda_device();
  if (!cuda) GTEST_SKIP() << "no CUDA device";
  const Device& gpu = *cuda;
  std::mt19937_64 rng(run_seed() + 6);
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1025}, std::int64_t{(1 << 20) + 7}}) {
    std::vector<float> host(static_cast<std::size_t>(n));
    for (auto& x : host)
      x = std::uniform_real_distribution<float>(0, 1)(rng);
    Array in = Array::from_vector(gpu, host);
    Buffer value(gpu, sizeof(std::int64_t)), index(gpu, sizeof(std::int64_t));
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::argmax}) {
      std::size_t bytes = 0;
      cuda::reduce(in.buffer().handle(), DType::float32, n, op, value.handle(), nullptr, nullptr,
                   bytes);
      Buffer workspace(gpu, bytes);
      std::vector<unsigned char> zeros(bytes, 0);
      workspace.upload(zeros.data(), bytes);
      for (int again = 0; again < 2; ++again) {
        cuda::reduce(in.buffer().handle(), DType::float32, n, op, value.handle(),
                     static_cast<std::int64_t*>(index.handle()), workspace.handle(), bytes);
        // The call went to the legacy default stream, which the device's non-blocking stream
        // does not wait for.
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        float got = 0;
        std::int64_t got_index = 0;
        value.download(&got, sizeof got);
        index.download(&got_index, sizeof got_index);
        detail::ReduceShape s{DType::float32, op, Axis::all, 1, n, n};
        float expected = 0;
        std::int64_t expected_index = 0;
        detail::reduce_reference(host.data(), s, &expected, &expected_index);
        Scalar e{DType::float32}, g{DType::float32};
        e.f = expected;
        g.f = got;
        EXPECT_EQ(detail::reduce_mismatch(e, g, op, n), "") << "n " << n;
        if (op == ReduceOp::argmax) EXPECT_EQ(got_index, expected_index) << "n " << n;
      }
    }
  }
}

// One workspace, zeroed once and sized for the largest call, serves calls of every size, dtype
// and op in turn: a call must never take another call's leftover partials for its own.
TEST(ReduceCudaRaw, OneWorkspaceServesEveryCall) {
  std::optional<Device> cuda = first_cuda_device();
  if (!cuda) GTEST_SKIP() << "no CUDA device";
  const Device& gpu = *cuda;
  std::mt19937_64 rng(run_seed() + 9);
  const std::int64_t sizes[] = {(1 << 22) + 5, 65537, (1 << 20) + 7, 4099, (1 << 22) + 5};
  std::size_t largest = 0;
  for (std::int64_t n : sizes)
    for (DType t : {DType::float32, DType::int32, DType::float64})
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::argmax}) {
        std::size_t bytes = 0;
        cuda::reduce(nullptr, t, n, op, nullptr, nullptr, nullptr, bytes);
        largest = std::max(largest, bytes);
      }
  Buffer workspace(gpu, largest);
  std::vector<unsigned char> zeros(largest, 0);
  workspace.upload(zeros.data(), largest);
  Buffer value(gpu, sizeof(std::int64_t)), index(gpu, sizeof(std::int64_t));
  for (int round = 0; round < 2; ++round)
    for (std::int64_t n : sizes)
      for (DType t : {DType::float32, DType::int32, DType::float64})
        for (ReduceOp op : {ReduceOp::sum, ReduceOp::argmax}) {
          SCOPED_TRACE(std::string(dtype_name(t)) + " " + reduce_op_name(op) + " of " +
                       std::to_string(n) + ", seed " + std::to_string(run_seed()));
          auto host = random_bytes(t, n, rng);
          Array in = Array::from_host(gpu, t, {n}, host.data());
          std::size_t bytes = largest;
          cuda::reduce(in.buffer().handle(), t, n, op, value.handle(),
                       static_cast<std::int64_t*>(index.handle()), workspace.handle(), bytes);
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          DType out = reduce_result_dtype(t, op);
          detail::ReduceShape s{t, op, Axis::all, 1, n, n};
          unsigned char expected_bytes[8] = {}, got_bytes[8] = {};
          std::int64_t expected_index = 0, got_index = 0;
          detail::reduce_reference(host.data(), s, expected_bytes, &expected_index);
          value.download(got_bytes, dtype_size(out));
          index.download(&got_index, sizeof got_index);
          EXPECT_EQ(detail::reduce_mismatch(Scalar::from_bytes(out, expected_bytes),
                                            Scalar::from_bytes(out, got_bytes), op, n,
                                            sum_magnitudes(t, host, 1, n, n, Axis::all)[0]),
                    "");
          if (op == ReduceOp::argmax) EXPECT_EQ(got_index, expected_index);
          if (HasFailure()) return;
        }
}

// `fast` can be captured into a CUDA graph (as `parpat bench` times short cases): replays of
// several captured runs give bit for bit what one eager run gives, on every launch shape.
// Every GPU's plans made from a thread whose current device is the first: kernels, function
// attributes and cluster placement belong to the plan's device (an input this small runs as one
// cluster of up to 16 blocks, which needs the device's own opt-in).
TEST(ReduceCudaDevices, PlansForEveryGpuFromAThreadOnTheFirst) {
  const std::vector<Device> gpus = cuda_devices();
  if (gpus.size() < 2) GTEST_SKIP() << "needs two CUDA devices";
  std::mt19937_64 rng(run_seed() + 9);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> host(100003);
  for (auto& x : host)
    x = normal(rng);
  const auto want = std::max_element(host.begin(), host.end()) - host.begin();
  std::thread([&] {
    for (auto gpu = gpus.rbegin(); gpu != gpus.rend(); ++gpu) {
      SCOPED_TRACE(gpu->label());
      const ReduceResult r = reduce(Array::from_vector(*gpu, host), {ReduceOp::argmax});
      ASSERT_EQ(r.indices.size(), 1u);
      EXPECT_EQ(r.indices[0], want);
    }
  }).join();
}

TEST(ReduceCudaGraph, FastReplaysMatchEagerRuns) {
  std::optional<Device> cuda = first_cuda_device();
  if (!cuda) GTEST_SKIP() << "no CUDA device";
  const Device& gpu = *cuda;
  std::mt19937_64 rng(run_seed() + 8);
  for (std::int64_t n : {std::int64_t{1025}, std::int64_t{65537}, std::int64_t{(1 << 20) + 7},
                         std::int64_t{(1 << 25) + 3}}) {
    auto host = random_bytes(DType::float32, n, rng);
    Array in = Array::from_host(gpu, DType::float32, {n}, host.data());
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::argmax}) {
      SCOPED_TRACE(std::string(reduce_op_name(op)) + " of " + std::to_string(n) + ", seed " +
                   std::to_string(run_seed()));
      Reducer reducer(gpu, DType::float32, {n}, 0, {op, Axis::all, "fast"});
      Buffer value(gpu, sizeof(float)), index(gpu, sizeof(std::int64_t));
      reducer.run(in, value, index);
      float eager = 0, replayed = 0;
      std::int64_t eager_index = 0, replayed_index = 0;
      value.download(&eager, sizeof eager);
      index.download(&eager_index, sizeof eager_index);
      std::vector<float> zero(1, 0.0f);
      value.upload(zero.data(), sizeof(float));
      auto& impl = gpu.impl();
      ASSERT_TRUE(impl.capture_begin());
      for (int k = 0; k < 3; ++k)
        reducer.run(in, value, index);
      impl.capture_end();
      for (int k = 0; k < 2; ++k)
        impl.replay();
      gpu.synchronize();
      value.download(&replayed, sizeof replayed);
      index.download(&replayed_index, sizeof replayed_index);
      EXPECT_EQ(std::memcmp(&eager, &replayed, sizeof eager), 0) << eager << " vs " << replayed;
      if (op == ReduceOp::argmax) EXPECT_EQ(eager_index, replayed_index);
    }
  }
}
}  // namespace
}  // namespace parpat::test
#endif
