// float16 and bfloat16: the conversions of parpat/float16.hpp, then every reduce op on every
// backend and variant present against values worked out by hand (overflow of a sum to inf, the
// largest finite value, subnormals, NaN, ±inf, ±0) and against the reference (float64, rounded
// once) on random data, and the .npy reader's '<f2' and '>f2'.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/io.hpp"
#include "parpat/reduce.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/verify.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

constexpr DType kHalfTypes[] = {DType::float16, DType::bfloat16};

std::uint16_t bits_of(DType t, double v) {
  return t == DType::float16 ? float16(v).bits : bfloat16(v).bits;
}
double value_of(DType t, std::uint16_t bits) {
  return t == DType::float16 ? static_cast<double>(float16::from_bits(bits))
                             : static_cast<double>(bfloat16::from_bits(bits));
}

TEST(Float16, KnownBitPatterns) {
  EXPECT_EQ(float16(1.0).bits, 0x3c00);
  EXPECT_EQ(float16(-2.0).bits, 0xc000);
  EXPECT_EQ(float16(65504.0).bits, 0x7bff);
  EXPECT_EQ(float16(65519.99).bits, 0x7bff);
  EXPECT_EQ(float16(65520.0).bits, 0x7c00);  // the tie rounds to even: inf
  EXPECT_EQ(float16(std::ldexp(1.0, -24)).bits, 0x0001);
  EXPECT_EQ(float16(std::ldexp(1.0, -25)).bits, 0x0000);  // the tie rounds to even: zero
  EXPECT_EQ(float16(std::ldexp(1.5, -25)).bits, 0x0001);
  EXPECT_EQ(float16(std::ldexp(3.0, -25)).bits, 0x0002);  // 1.5 ulp: to even
  EXPECT_EQ(float16(-0.0).bits, 0x8000);
  EXPECT_EQ(float16(1.0 + std::ldexp(1.0, -11)).bits, 0x3c00);  // tie: to even
  EXPECT_EQ(float16(1.0 + std::ldexp(3.0, -11)).bits, 0x3c02);  // tie: to even
  EXPECT_EQ(float16(std::numeric_limits<double>::quiet_NaN()).bits & 0x7e00, 0x7e00);
  EXPECT_EQ(float16(-std::numeric_limits<double>::infinity()).bits, 0xfc00);
  EXPECT_EQ(bfloat16(1.0).bits, 0x3f80);
  EXPECT_EQ(bfloat16(1.0 + std::ldexp(1.0, -8)).bits, 0x3f80);  // tie: to even
  EXPECT_EQ(bfloat16(1.0 + std::ldexp(3.0, -8)).bits, 0x3f82);
  EXPECT_EQ(bfloat16(3.0e38).bits, 0x7f62);
  EXPECT_EQ(bfloat16(3.4e38).bits, 0x7f80);  // beyond the largest finite 3.3895e38
  EXPECT_EQ(bfloat16(std::ldexp(1.0, -133)).bits, 0x0001);
  EXPECT_EQ(bfloat16(std::ldexp(1.0, -134)).bits, 0x0000);
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x03ff)), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::isnan(static_cast<float>(float16::from_bits(0x7e01))));
  EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0xc040)), -3.0f);
}

// Every finite bit pattern reads back as itself, and values between two neighbours round to the
// nearer one (the even one at the midpoint).
TEST(Float16, EveryValueRoundTripsAndMidpointsRoundToEven) {
  for (DType t : kHalfTypes)
    for (unsigned b = 0; b < 0x7fff; ++b) {
      const auto bits = static_cast<std::uint16_t>(b);
      const double v = value_of(t, bits);
      if (std::isnan(v) || std::isinf(v)) continue;
      ASSERT_EQ(bits_of(t, v), bits) << dtype_name(t) << " " << b;
      ASSERT_EQ(bits_of(t, -v), bits | 0x8000) << dtype_name(t) << " " << b;
      const double next = value_of(t, static_cast<std::uint16_t>(b + 1));
      if (std::isnan(next) || std::isinf(next)) continue;
      const double mid = v + (next - v) / 2;
      const std::uint16_t even = b % 2 == 0 ? bits : static_cast<std::uint16_t>(b + 1);
      ASSERT_EQ(bits_of(t, mid), even) << dtype_name(t) << " midpoint above " << b;
      ASSERT_EQ(bits_of(t, std::nextafter(mid, 0.0)), bits) << dtype_name(t) << " " << b;
      ASSERT_EQ(bits_of(t, std::nextafter(mid, 1e300)), b + 1) << dtype_name(t) << " " << b;
    }
}

TEST(Float16, DTypeNamesSizesAndScalars) {
  EXPECT_EQ(parse_dtype("float16"), DType::float16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bfloat16);
  EXPECT_EQ(dtype_size(DType::float16), 2u);
  EXPECT_EQ(dtype_size(DType::bfloat16), 2u);
  EXPECT_TRUE(is_float(DType::float16));
  EXPECT_TRUE(is_float(DType::bfloat16));
  for (auto [t, v, text] :
       {std::tuple{DType::float16, 0.1, "0.1"}, std::tuple{DType::float16, 65504.0, "6.55e+04"},
        std::tuple{DType::float16, 1.0 / 3, "0.3333"}, std::tuple{DType::bfloat16, 0.1, "0.1"},
        std::tuple{DType::bfloat16, 1.0 / 3, "0.334"}}) {
    const std::uint16_t bits = bits_of(t, v);
    Scalar s = Scalar::from_bytes(t, &bits);
    EXPECT_EQ(s.as_double(), value_of(t, bits));
    EXPECT_EQ(s.to_string(), text) << dtype_name(t) << " " << v;
  }
  EXPECT_EQ(reduce_result_dtype(DType::float16, ReduceOp::sum), DType::float16);
  EXPECT_EQ(reduce_result_dtype(DType::bfloat16, ReduceOp::std), DType::bfloat16);
  EXPECT_EQ(reduce_result_dtype(DType::float16, ReduceOp::argmax), DType::float16);
  EXPECT_EQ(reduce_result_dtype(DType::float16, ReduceOp::count_nonzero), DType::int64);
  EXPECT_EQ(reduce_result_dtype(DType::bfloat16, ReduceOp::any), DType::boolean);
}

std::vector<std::uint16_t> encode(DType t, const std::vector<double>& v) {
  std::vector<std::uint16_t> out;
  for (double x : v)
    out.push_back(bits_of(t, x));
  return out;
}

class Float16ReduceTest : public ::testing::TestWithParam<Target> {
 protected:
  // The op on the target, or nothing when the variant does not cover it.
  std::optional<ReduceResult> run(DType t, ReduceOp op, const std::vector<std::uint16_t>& bits,
                                  std::vector<std::int64_t> shape = {}) {
    if (shape.empty()) shape = {static_cast<std::int64_t>(bits.size())};
    const std::int64_t cols = shape.back();
    const std::int64_t rows = cols ? static_cast<std::int64_t>(bits.size()) / cols : 0;
    detail::ReduceShape s{t, op, Axis::all, rows, cols, cols};
    const auto& variant =
        detail::find_reduce_variant(GetParam().device.backend(), GetParam().variant);
    if (!bits.empty() && !variant.supports(s, GetParam().device.info())) return std::nullopt;
    Array in = Array::from_host(GetParam().device, t, shape, bits.data());
    return reduce(in, {op, Axis::all, GetParam().variant});
  }

  // Expects the op's value (its 16-bit rounding for a float result).
  void expect(DType t, ReduceOp op, const std::vector<double>& values, double want,
              std::int64_t index = -1) {
    auto r = run(t, op, encode(t, values));
    if (!r) return;
    SCOPED_TRACE(std::string(reduce_op_name(op)) + " of " + dtype_name(t));
    ASSERT_EQ(r->values.size(), 1u);
    const double got = r->values[0].as_double();
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << got;
    } else {
      EXPECT_EQ(got, is_float(r->dtype) ? value_of(t, bits_of(t, want)) : want);
      if (want == 0 && is_float(r->dtype)) EXPECT_EQ(std::signbit(got), std::signbit(want));
    }
    if (index >= 0) EXPECT_EQ(r->indices.at(0), index);
  }
};

TEST_P(Float16ReduceTest, HandWorkedValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  for (DType t : kHalfTypes) {
    const double top = t == DType::float16 ? 65504.0 : value_of(t, 0x7f7f);
    const double tiny = t == DType::float16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -133);
    // Sums accumulate wide and round once: beyond the largest finite value they are inf.
    expect(t, ReduceOp::sum, {top, top}, inf);
    expect(t, ReduceOp::sum, {top, top, -top}, top);
    expect(t, ReduceOp::sum, {tiny, tiny, tiny}, 3 * tiny);
    expect(
        t, ReduceOp::sum, {0.1, 0.2, 0.3},
        value_of(t, bits_of(t, 0.1)) + value_of(t, bits_of(t, 0.2)) + value_of(t, bits_of(t, 0.3)));
    expect(t, ReduceOp::prod, {tiny, 2.0, 0.5}, tiny);
    expect(t, ReduceOp::prod, {top, 2.0}, inf);
    expect(t, ReduceOp::min, {1.0, -tiny, 3.0}, -tiny);
    expect(t, ReduceOp::max, {1.0, top, -inf}, top);
    expect(t, ReduceOp::max, {1.0, nan, top}, nan);
    expect(t, ReduceOp::argmin, {1.0, -inf, 3.0, -inf}, -inf, 1);
    expect(t, ReduceOp::argmax, {1.0, nan, 3.0, nan}, nan, 1);
    expect(t, ReduceOp::argmax, {-0.0, 0.0, -0.0}, -0.0, 0);
    expect(t, ReduceOp::mean, {1.0, 2.0, 4.0}, 7.0 / 3);
    expect(t, ReduceOp::mean, {top, top}, top);  // the mean of a float32-overflowing sum: finite
    expect(t, ReduceOp::var, {1.0, 2.0, 4.0}, 14.0 / 9);
    expect(t, ReduceOp::std, {1.0, 2.0, 4.0}, std::sqrt(14.0 / 9));
    expect(t, ReduceOp::nansum, {1.0, nan, 2.0}, 3.0);
    expect(t, ReduceOp::nanprod, {3.0, nan, 2.0}, 6.0);
    expect(t, ReduceOp::nanmin, {nan, 2.0, -1.0}, -1.0);
    expect(t, ReduceOp::nanmax, {nan, nan}, nan);
    expect(t, ReduceOp::nanargmin, {nan, 2.0, -1.0, -1.0}, -1.0, 2);
    expect(t, ReduceOp::nanargmax, {nan, 2.0, -1.0}, 2.0, 1);
    expect(t, ReduceOp::nanmean, {nan, 2.0, 4.0}, 3.0);
    expect(t, ReduceOp::nanvar, {nan, 2.0, 4.0}, 1.0);
    expect(t, ReduceOp::nanstd, {nan, 2.0, 4.0}, 1.0);
    expect(t, ReduceOp::count_nonzero, {0.0, -0.0, nan, tiny}, 2);
    expect(t, ReduceOp::any, {0.0, -0.0, tiny}, 1);
    expect(t, ReduceOp::any, {0.0, -0.0}, 0);
    expect(t, ReduceOp::all, {1.0, nan, tiny}, 1);
    expect(t, ReduceOp::all, {1.0, -0.0}, 0);
    if (HasFailure()) return;
  }
}

TEST_P(Float16ReduceTest, EmptyInput) {
  for (DType t : kHalfTypes) {
    auto s = run(t, ReduceOp::sum, {});
    EXPECT_EQ(s->values.at(0).as_double(), 0.0);
    EXPECT_EQ(s->dtype, t);
    EXPECT_EQ(run(t, ReduceOp::prod, {})->values.at(0).as_double(), 1.0);
    EXPECT_TRUE(std::isnan(run(t, ReduceOp::mean, {})->values.at(0).as_double()));
    EXPECT_THROW(run(t, ReduceOp::max, {}), Error);
    try {  // all NaN: numpy's error, where the variant takes nanargmin at all
      if (run(t, ReduceOp::nanargmin, encode(t, {NAN, NAN})))
        ADD_FAILURE() << "nanargmin of NaN alone must be an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    }
  }
}

// Random data with the special values sprinkled in, every op, the whole array and both axes of a
// 2-D view, against the reference.
TEST_P(Float16ReduceTest, RandomDataWithSpecialsAgainstTheReference) {
  std::mt19937_64 rng(run_seed());
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{1, 1},     {1, 33},   {1, 1025},
                                                               {1, 70001}, {37, 129}, {300, 8}};
  if (GetParam().device.backend() != Backend::cpu && GetParam().variant != "fast")
    shapes.resize(4);  // the classic GPU variants: axis all only
  for (DType t : kHalfTypes)
    for (auto [rows, cols] : shapes)
      for (int specials = 0; specials < 3; ++specials) {
        std::vector<std::uint16_t> bits(static_cast<std::size_t>(rows * cols));
        for (auto& b : bits) {
          const double x = std::uniform_real_distribution<double>(-2, 2)(rng);
          b = bits_of(t, specials == 2 ? 1 + x * 1e-3 : x);  // near 1: products stay finite
          const unsigned pick = static_cast<unsigned>(rng() % 64);
          if (specials == 1 && pick < 6) {
            const std::uint16_t kSpecial[] = {
                0x8000,
                0x0000,
                0x0001,
                0x8003,
                static_cast<std::uint16_t>(t == DType::float16 ? 0x7bff : 0x7f7f),
                static_cast<std::uint16_t>(t == DType::float16 ? 0x7e00 : 0x7fc0)};
            b = kSpecial[pick];
          }
        }
        for (ReduceOp op : kAllReduceOps)
          for (Axis axis : {Axis::all, Axis::rows, Axis::cols}) {
            if (rows == 1 && axis != Axis::all) continue;
            detail::ReduceShape s{t, op, axis, rows, cols, cols};
            const auto& variant =
                detail::find_reduce_variant(GetParam().device.backend(), GetParam().variant);
            if (!variant.supports(s, GetParam().device.info())) continue;
            SCOPED_TRACE(std::string(reduce_op_name(op)) + " of " + dtype_name(t) + " " +
                         std::to_string(rows) + "x" + std::to_string(cols) + " axis " +
                         axis_name(axis) + " specials " + std::to_string(specials) + ", seed " +
                         std::to_string(run_seed()));
            std::vector<unsigned char> want(static_cast<std::size_t>(s.outputs()) * 8);
            std::vector<std::int64_t> want_index(static_cast<std::size_t>(s.outputs()));
            detail::reduce_reference(bits.data(), s, want.data(), want_index.data());
            Array in = Array::from_host(GetParam().device, t, {rows, cols}, bits.data());
            // Σ|x| per output: the data is of mixed sign, and its sums may cancel.
            const std::vector<unsigned char> bytes(
                reinterpret_cast<const unsigned char*>(bits.data()),
                reinterpret_cast<const unsigned char*>(bits.data() + bits.size()));
            const std::vector<double> magnitude = sum_magnitudes(t, bytes, rows, cols, cols, axis);
            ReduceResult r;
            try {
              r = reduce(in, {op, axis, GetParam().variant});
            } catch (const Error& e) {
              // nanargmin/nanargmax of an extent of NaN alone: numpy's error, as the reference
              // says (index INT64_MAX).
              bool all_nan = false;
              for (auto i : want_index)
                all_nan |= i == std::numeric_limits<std::int64_t>::max();
              EXPECT_TRUE(all_nan) << e.what();
              continue;
            }
            const DType out = reduce_result_dtype(t, op);
            ASSERT_EQ(r.dtype, out);
            ASSERT_EQ(r.values.size(), static_cast<std::size_t>(s.outputs()));
            for (std::int64_t o = 0; o < s.outputs(); ++o) {
              auto e = Scalar::from_bytes(out, want.data() + o * dtype_size(out));
              std::string why = detail::reduce_mismatch(e, r.values[o], op, s.extent(),
                                                        magnitude[static_cast<std::size_t>(o)]);
              ASSERT_TRUE(why.empty()) << "output " << o << ": " << why;
              if (is_arg_op(op)) ASSERT_EQ(r.indices.at(o), want_index[o]) << "output " << o;
            }
          }
      }
}

// Sums over every launch shape a variant has (one block, a cluster, small and wide grids; a start
// off the 16-byte boundary; strided rows), of values whose sum is near 1024, so a sum that loses
// elements or comes back 0 is far from the reference.
TEST_P(Float16ReduceTest, SumsOfEveryLaunchShapeMatchTheReference) {
  const Device& device = GetParam().device;
  std::mt19937_64 rng(run_seed() + 1);
  std::vector<std::int64_t> sizes = {1, 2, 8, 9, 4099, 65537, (1 << 20) + 7};
  if (device.backend() == Backend::cuda) sizes.push_back((1 << 24) + 5);  // the bandwidth wave
  for (DType t : kHalfTypes)
    for (std::int64_t n : sizes) {
      const double scale = std::ldexp(1.0, 10 - static_cast<int>(std::ceil(std::log2(n + 1.0))));
      std::vector<std::uint16_t> bits(static_cast<std::size_t>(n) + 1);
      for (auto& b : bits)
        b = bits_of(t, scale * std::uniform_real_distribution<double>(0.5, 1.5)(rng));
      // Elements 1..n (the start one element past an aligned allocation, where the backend can
      // wrap a pointer), then 0..n-1, then rows of 3 elements, 4 apart.
      for (int layout = 0; layout < 3; ++layout) {
        const bool offset = layout == 0 && device.backend() != Backend::opencl;
        const std::int64_t rows = layout == 2 ? n / 4 : 1, cols = layout == 2 ? 3 : n;
        const std::int64_t stride = layout == 2 ? 4 : cols;
        if (rows == 0 || (layout == 0 && !offset)) continue;
        detail::ReduceShape s{t, ReduceOp::sum, Axis::all, rows, cols, stride};
        const auto& variant = detail::find_reduce_variant(device.backend(), GetParam().variant);
        if (!variant.supports(s, device.info())) continue;
        SCOPED_TRACE(std::string(dtype_name(t)) + " sum of " + std::to_string(rows) + "x" +
                     std::to_string(cols) + " layout " + std::to_string(layout) + ", seed " +
                     std::to_string(run_seed()));
        const std::uint16_t* first = bits.data() + (offset ? 1 : 0);
        Buffer storage(device, bits.size() * 2);
        storage.upload(bits.data(), bits.size() * 2);
        Array in = offset
                       ? Array::view(Buffer::wrap(device, static_cast<char*>(storage.handle()) + 2,
                                                  static_cast<std::size_t>(n) * 2),
                                     t, {n})
                   : layout == 2 ? Array::view(storage, t, {rows, cols}, stride)
                                 : Array::view(storage, t, {n});
        ReduceResult r = reduce(in, {ReduceOp::sum, Axis::all, GetParam().variant});
        ASSERT_EQ(r.dtype, t);
        std::uint16_t want = 0;
        detail::reduce_reference(first, s, &want, nullptr);
        EXPECT_GT(value_of(t, want), 0.0);
        EXPECT_EQ(detail::reduce_mismatch(Scalar::from_bytes(t, &want), r.values.at(0),
                                          ReduceOp::sum, rows * cols),
                  "");
      }
    }
}

// mean, var and std of the 16-bit floats are of the input's dtype: each output is 2 bytes, and
// nothing past the last one is written (bytes after it keep their pattern).
TEST_P(Float16ReduceTest, StatisticsWriteTwoBytesPerOutput) {
  const Device& device = GetParam().device;
  std::mt19937_64 rng(run_seed() + 2);
  const ReduceOp ops[] = {ReduceOp::mean,    ReduceOp::var,    ReduceOp::std,
                          ReduceOp::nanmean, ReduceOp::nanvar, ReduceOp::nanstd};
  constexpr std::size_t kGuard = 64;
  for (DType t : kHalfTypes)
    for (auto [rows, cols, axis] : {std::tuple{std::int64_t{1}, std::int64_t{1000}, Axis::all},
                                    std::tuple{std::int64_t{37}, std::int64_t{129}, Axis::rows},
                                    std::tuple{std::int64_t{37}, std::int64_t{129}, Axis::cols}}) {
      std::vector<std::uint16_t> bits(static_cast<std::size_t>(rows * cols));
      for (auto& b : bits)
        b = bits_of(t, std::uniform_real_distribution<double>(1, 3)(rng));
      Array in = Array::from_host(device, t, {rows, cols}, bits.data());
      for (ReduceOp op : ops) {
        detail::ReduceShape s{t, op, axis, rows, cols, cols};
        const auto& variant = detail::find_reduce_variant(device.backend(), GetParam().variant);
        if (!variant.supports(s, device.info())) continue;
        SCOPED_TRACE(std::string(reduce_op_name(op)) + " of " + dtype_name(t) + " axis " +
                     axis_name(axis));
        Reducer reducer(device, t, {rows, cols}, 0, {op, axis, GetParam().variant});
        ASSERT_EQ(reducer.result_dtype(), t);
        const auto outputs = static_cast<std::size_t>(reducer.outputs());
        std::vector<unsigned char> got(outputs * 2 + kGuard, 0xa5);
        Buffer values(device, got.size()), indices(device, 8);
        values.upload(got.data(), got.size());
        reducer.run(in, values, indices);
        values.download(got.data(), got.size());
        for (std::size_t k = outputs * 2; k < got.size(); ++k)
          ASSERT_EQ(got[k], 0xa5) << "byte " << k << " past the " << outputs << " outputs";
        std::vector<std::uint16_t> want(outputs);
        detail::reduce_reference(bits.data(), s, want.data(), nullptr);
        for (std::size_t o = 0; o < outputs; ++o)
          ASSERT_EQ(
              detail::reduce_mismatch(Scalar::from_bytes(t, &want[o]),
                                      Scalar::from_bytes(t, got.data() + 2 * o), op, s.extent()),
              "")
              << "output " << o;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Targets, Float16ReduceTest, ::testing::ValuesIn(variant_targets("reduce")),
                         target_name);

// numpy.save(np.array([1, -2.5, inf, 65504, 2**-24], '<f2')) and the same with '>f2'.
TEST(Float16Npy, ReadsBothByteOrders) {
  const std::uint16_t want[] = {0x3c00, 0xc100, 0x7c00, 0x7bff, 0x0001};
  for (bool big : {false, true}) {
    std::string header = std::string("{'descr': '") + (big ? ">" : "<") +
                         "f2', 'fortran_order': False, 'shape': (5,), }";
    header.resize(118, ' ');
    header += '\n';
    std::string file = std::string("\x93NUMPY\x01\x00", 8);
    file += static_cast<char>(header.size() & 0xff);
    file += static_cast<char>(header.size() >> 8);
    file += header;
    for (std::uint16_t w : want) {
      const char lo = static_cast<char>(w & 0xff), hi = static_cast<char>(w >> 8);
      file += big ? hi : lo;
      file += big ? lo : hi;
    }
    const std::string path = ::testing::TempDir() + (big ? "f2_big.npy" : "f2_little.npy");
    std::ofstream(path, std::ios::binary) << file;
    HostArray a = read_npy(path);
    EXPECT_EQ(a.dtype, DType::float16);
    ASSERT_EQ(a.shape, std::vector<std::int64_t>{5});
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(a.as<std::uint16_t>()[i], want[i]) << (big ? "big" : "little") << " " << i;
    std::remove(path.c_str());
  }
  const std::uint16_t one = 0x3c00;
  const std::string path = ::testing::TempDir() + "f2_written.npy";
  write_npy(path, DType::float16, {1}, &one);
  EXPECT_EQ(read_npy(path).dtype, DType::float16);
  std::remove(path.c_str());
  EXPECT_THROW(write_npy(path, DType::bfloat16, {1}, &one), Error);
}

}  // namespace
}  // namespace parpat::test
