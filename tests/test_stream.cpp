// Streaming (parpat/stream.hpp): streamed reduce against the in-memory call on every device, with
// chunks forced small so that chunk boundaries fall inside rows and rows run longer than a chunk;
// NaN, ties, integer extremes and empty input; StreamStats. Streamed histograms:
// test_stream_histogram.cpp; the stream's pieces and sources: test_stream_sources.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
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
#include "reduce/verify.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

constexpr DType kReduceTypes[] = {DType::uint8,  DType::int32,   DType::uint32, DType::int64,
                                  DType::uint64, DType::float32, DType::float64};

std::int64_t elements_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s;
  for (auto d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

// Random elements: integers over their whole range (sums wrap), floats in [−1, 1). For
// products: odd integers (so products wrap without becoming 0) and floats near 1.
std::vector<unsigned char> random_bytes(DType t, std::int64_t n, std::mt19937_64& rng,
                                        bool for_prod = false) {
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(t));
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(out.data());
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>(for_prod ? 1.0 + u(rng) * 1e-3 : u(rng));
      } else {
        p[i] = static_cast<T>(for_prod ? rng() | 1 : rng());
      }
    }
  });
  return out;
}

// The output that element (r, c) of a rows × cols input folds into.
std::int64_t output_of(Axis axis, std::int64_t r, std::int64_t c) {
  return axis == Axis::all ? 0 : axis == Axis::rows ? r : c;
}

// Host answers for the float sums (long double, with Σ|x| per output for a tolerance on
// mixed-sign data) and for the arg ops' indices (the first NaN, else the first extreme; global,
// flattened for axis all).
struct HostAnswer {
  std::vector<long double> sum, magnitude;
  std::vector<std::int64_t> arg;
};

HostAnswer host_answer(DType t, ReduceOp op, Axis axis, std::int64_t rows, std::int64_t cols,
                       const unsigned char* host) {
  const std::int64_t outputs = axis == Axis::all ? 1 : axis == Axis::rows ? rows : cols;
  HostAnswer a;
  a.sum.assign(static_cast<std::size_t>(outputs), 0);
  a.magnitude.assign(static_cast<std::size_t>(outputs), 0);
  a.arg.assign(static_cast<std::size_t>(outputs), -1);
  visit_dtype(t, [&](auto v) {
    using S = decltype(v);  // stored; 16-bit floats are compared as float
    using T = std::conditional_t<is_float16_type<S>, float, S>;
    const S* p = reinterpret_cast<const S*>(host);
    std::vector<T> best(static_cast<std::size_t>(outputs));
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const auto o = static_cast<std::size_t>(output_of(axis, r, c));
        const T x = static_cast<T>(p[r * cols + c]);
        a.sum[o] += static_cast<long double>(x);
        a.magnitude[o] += std::fabs(static_cast<long double>(x));
        // The index an arg op reports: the flattened index for axis all, else the position
        // along the reduced axis.
        const std::int64_t index = axis == Axis::all ? r * cols + c : axis == Axis::rows ? c : r;
        if (!is_arg_op(op)) continue;
        auto& k = a.arg[o];
        if (k >= 0 && std::isnan(static_cast<double>(best[o]))) continue;  // a NaN stays
        bool take = k < 0 || std::isnan(static_cast<double>(x)) ||
                    (op == ReduceOp::argmin ? x < best[o] : x > best[o]);
        if (take) {
          k = index;
          best[o] = x;
        }
      }
  });
  return a;
}

// Expects `got` (streamed) to be `want` (the in-memory answer on the same device): exactly for
// integers, min, max and the arg ops (whose indices are also checked against the host); float
// sums within the accuracy contract against a long double host sum (relative 1e-6·log2(n) for
// float32, float64 held to its own scale); float products within 1e-5.
void expect_same_answer(const ReduceResult& got, const ReduceResult& want, DType t, ReduceOp op,
                        Axis axis, std::int64_t rows, std::int64_t cols,
                        const unsigned char* host) {
  EXPECT_EQ(got.dtype, reduce_result_dtype(t, op));
  ASSERT_EQ(got.values.size(), want.values.size());
  ASSERT_EQ(got.indices.size(), want.indices.size());
  const std::int64_t extent = axis == Axis::all ? rows * cols : axis == Axis::rows ? cols : rows;
  const bool host_needed = is_arg_op(op) || (op == ReduceOp::sum && is_float(t));
  HostAnswer a = host_needed ? host_answer(t, op, axis, rows, cols, host) : HostAnswer{};
  for (std::size_t o = 0; o < got.values.size(); ++o) {
    const Scalar& g = got.values[o];
    const Scalar& w = want.values[o];
    if (is_float(t) && op == ReduceOp::sum) {
      const double tol =
          (t == DType::float64 ? 1e-12 : 1e-6) *
          std::max(1.0, std::log2(static_cast<double>(std::max<std::int64_t>(extent, 2))));
      const long double exact = a.sum[o];
      const long double scale = std::max(std::fabs(exact), a.magnitude[o]);
      if (!std::isfinite(exact)) {  // a NaN or an infinity among the values
        EXPECT_TRUE(std::isnan(exact) ? std::isnan(g.f) : g.f == exact)
            << "output " << o << ": streamed " << g.to_string() << ", host sum "
            << static_cast<double>(exact);
        EXPECT_TRUE(same_scalar(g, w))
            << "output " << o << ": streamed " << g.to_string() << ", in memory " << w.to_string();
        continue;
      }
      EXPECT_LE(std::fabs(static_cast<long double>(g.f) - exact), tol * scale + 1e-30L)
          << "output " << o << ": streamed " << g.to_string() << ", host sum "
          << static_cast<double>(exact) << ", in memory " << w.to_string();
    } else if (is_float(t) && op == ReduceOp::prod) {
      std::string why = detail::reduce_mismatch(w, g, op, extent);
      EXPECT_TRUE(why.empty()) << "output " << o << ": " << why;
    } else {
      EXPECT_TRUE(same_scalar(g, w))
          << "output " << o << ": streamed " << g.to_string() << ", in memory " << w.to_string();
    }
    if (is_arg_op(op)) {
      EXPECT_EQ(got.indices[o], want.indices[o]) << "output " << o;
      EXPECT_EQ(got.indices[o], a.arg[o]) << "output " << o << " (host)";
    }
    if (::testing::Test::HasFailure()) return;  // one message per case is enough
  }
}

class StreamTest : public ::testing::TestWithParam<Device> {
 protected:
  const Device& device() const { return GetParam(); }

  // Streams `host` (C order, `shape`) through `source` with chunks of `chunk` bytes and compares
  // with parpat::reduce of the same data in memory on the same device. Returns the stats.
  StreamStats check_reduce(Source& source, DType t, ReduceOp op, Axis axis,
                           const std::vector<std::int64_t>& shape,
                           const std::vector<unsigned char>& host, std::size_t chunk,
                           const std::string& what) {
    SCOPED_TRACE(what + ": " + reduce_op_name(op) + " of " + dtype_name(t) + " " +
                 shape_text(shape) + " axis " + axis_name(axis) + ", chunk " +
                 std::to_string(chunk) + " bytes, seed " + std::to_string(run_seed()));
    const std::int64_t rows = shape.size() == 2 ? shape[0] : 1;
    const std::int64_t cols = shape.back();
    Array in = Array::from_host(device(), t, shape, host.data());
    ReduceResult want = reduce(in, {op, axis});
    StreamOptions so;
    so.chunk_bytes = chunk;
    StreamStats stats;
    ReduceResult got = reduce(source, device(), {op, axis}, so, &stats);
    expect_same_answer(got, want, t, op, axis, rows, cols, host.data());
    const std::uint64_t bytes = host.size();
    EXPECT_EQ(stats.bytes, bytes);
    EXPECT_EQ(stats.passes, 1);
    if (axis == Axis::all && chunk != 0) EXPECT_EQ(stats.chunks, expected_chunks(bytes, chunk, t));
    if (chunk == 0) EXPECT_EQ(stats.chunks, 1);  // the default chunk holds these inputs whole
    if (op == ReduceOp::sum && is_float(t)) {
      // Float sums add the chunks' sums in chunk order: the same chunking gives the same bits.
      ReduceResult again = reduce(source, device(), {op, axis}, so);
      for (std::size_t o = 0; o < got.values.size() && o < again.values.size(); ++o)
        EXPECT_EQ(std::memcmp(&got.values[o].f, &again.values[o].f, sizeof(double)), 0)
            << "output " << o << ": " << got.values[o].to_string() << " then "
            << again.values[o].to_string();
    }
    return stats;
  }

  void check_reduce_host(DType t, ReduceOp op, Axis axis, const std::vector<std::int64_t>& shape,
                         const std::vector<unsigned char>& host, std::size_t chunk,
                         const std::string& what) {
    Source source = Source::from_host(t, shape, host.data());
    check_reduce(source, t, op, axis, shape, host, chunk, what);
  }
};

// ---- reduce ------------------------------------------------------------------------------------

TEST_P(StreamTest, ReduceMatchesInMemoryForEveryOpDtypeAndAxis) {
  std::mt19937_64 rng(run_seed());
  // Rows of 300 and 333 elements (chunk boundaries inside rows), and of 5000 (longer than a chunk
  // of every dtype); the 1-D edge sizes.
  const std::vector<std::vector<std::int64_t>> shapes = {{1},      {2},      {31},     {1025},
                                                         {7, 300}, {9, 333}, {3, 5000}};
  for (DType t : kReduceTypes)
    for (ReduceOp op : kOps)
      for (const auto& shape : shapes) {
        auto host = random_bytes(t, elements_of(shape), rng, op == ReduceOp::prod);
        for (Axis axis : {Axis::all, Axis::rows, Axis::cols}) {
          if (shape.size() == 1 && axis != Axis::all) continue;
          for (std::size_t chunk : kChunkSizes) {
            check_reduce_host(t, op, axis, shape, host, chunk, "host memory");
            if (HasFailure()) return;
          }
        }
      }
}

TEST_P(StreamTest, ReduceOfNpyFilesMatchesInMemory) {
  std::mt19937_64 rng(run_seed() + 1);
  int k = 0;
  for (DType t : kReduceTypes)
    for (const std::vector<std::int64_t>& shape :
         {std::vector<std::int64_t>{1025}, std::vector<std::int64_t>{11, 333}}) {
      auto host = random_bytes(t, elements_of(shape), rng);
      auto odd = random_bytes(t, elements_of(shape), rng, true);
      std::string path =
          temp_path("stream_" + device_name(device()) + "_" + std::to_string(k) + ".npy");
      std::string prod_path =
          temp_path("stream_" + device_name(device()) + "_" + std::to_string(k++) + "_prod.npy");
      write_npy(path, t, shape, host.data());
      write_npy(prod_path, t, shape, odd.data());
      Source source = Source::open(path);
      Source prod_source = Source::open(prod_path);
      EXPECT_EQ(source.dtype(), t);
      EXPECT_EQ(source.shape(), shape);
      EXPECT_FALSE(source.raw());
      EXPECT_TRUE(source.rereadable());
      for (ReduceOp op : kOps)
        for (Axis axis : {Axis::all, Axis::rows, Axis::cols}) {
          if (shape.size() == 1 && axis != Axis::all) continue;
          for (std::size_t chunk : {std::size_t{1000}, std::size_t{0}}) {
            if (op == ReduceOp::prod)
              check_reduce(prod_source, t, op, axis, shape, odd, chunk, prod_path);
            else
              check_reduce(source, t, op, axis, shape, host, chunk, path);
            if (HasFailure()) return;
          }
        }
      std::remove(path.c_str());
      std::remove(prod_path.c_str());
    }
}

// 2^20 + 7 elements in a few dozen chunks of an odd size, from host memory and from a file.
TEST_P(StreamTest, ReduceOfALargeInputInManyChunks) {
  std::mt19937_64 rng(run_seed() + 2);
  const std::int64_t n = (std::int64_t{1} << 20) + 7;
  const std::size_t chunk = 200000;  // not a multiple of any power of two above 64
  for (DType t : kReduceTypes) {
    auto host = random_bytes(t, n, rng);
    auto odd = random_bytes(t, n, rng, true);
    for (ReduceOp op : kOps)
      check_reduce_host(t, op, Axis::all, {n}, op == ReduceOp::prod ? odd : host, chunk,
                        "host memory");
    if (HasFailure()) return;
  }
  auto host = random_bytes(DType::float32, n, rng);
  std::string path = temp_path("stream_large_" + device_name(device()) + ".npy");
  write_npy(path, DType::float32, {n}, host.data());
  Source source = Source::open(path);
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::argmax})
    check_reduce(source, DType::float32, op, Axis::all, {n}, host, chunk, path);
  // 1024 rows of 1024 + 7: every chunk boundary inside a row.
  std::vector<std::int64_t> shape = {1024, 1031};
  auto matrix = random_bytes(DType::float32, elements_of(shape), rng);
  Source m = Source::from_host(DType::float32, shape, matrix.data());
  for (Axis axis : {Axis::rows, Axis::cols})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::argmin})
      check_reduce(m, DType::float32, op, axis, shape, matrix, chunk, "1024x1031");
  std::remove(path.c_str());
}

// A NaN wins min and max, and the arg ops report the first NaN (global index); ties go to the
// first extreme, across chunk boundaries too.
TEST_P(StreamTest, NaNTiesAndInfinitiesAcrossChunks) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::int64_t n = 3000;
  for (DType t : {DType::float32, DType::float64}) {
    std::mt19937_64 rng(run_seed() + 3);
    auto base = random_bytes(t, n, rng);
    struct Case {
      const char* what;
      std::vector<std::pair<std::int64_t, double>> set;  // index, value
    };
    const Case cases[] = {
        {"NaN first", {{0, nan}}},
        {"two NaNs in different chunks", {{1777, nan}, {2500, nan}}},
        {"NaN last", {{n - 1, nan}}},
        {"NaN beside infinities", {{400, -inf}, {401, inf}, {2999, nan}}},
        {"infinities", {{1300, -inf}, {1301, inf}, {2600, -inf}, {5, inf}}},
        {"ties across chunks", {{130, 5.0}, {2900, 5.0}, {131, -5.0}, {1500, -5.0}}},
    };
    for (const Case& c : cases) {
      auto host = base;
      visit_dtype(t, [&](auto v) {
        using T = decltype(v);
        for (auto [i, x] : c.set)
          reinterpret_cast<T*>(host.data())[i] = static_cast<T>(x);
      });
      for (ReduceOp op :
           {ReduceOp::min, ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax, ReduceOp::sum})
        for (std::size_t chunk : {std::size_t{1000}, std::size_t{4096}}) {
          check_reduce_host(t, op, Axis::all, {n}, host, chunk, c.what);
          // The same values as 6 rows of 500: per row and per column.
          check_reduce_host(t, op, Axis::rows, {6, 500}, host, chunk, c.what);
          check_reduce_host(t, op, Axis::cols, {6, 500}, host, chunk, c.what);
          if (HasFailure()) return;
        }
    }
    // All equal: every arg op answers index 0 (of the row or the column).
    std::vector<unsigned char> equal(static_cast<std::size_t>(n) * dtype_size(t));
    visit_dtype(t, [&](auto v) {
      using T = decltype(v);
      std::fill_n(reinterpret_cast<T*>(equal.data()), n, T(0.25));
    });
    for (ReduceOp op : {ReduceOp::argmin, ReduceOp::argmax})
      for (Axis axis : {Axis::all, Axis::rows, Axis::cols}) {
        Source s = Source::from_host(t, {6, 500}, equal.data());
        StreamOptions so;
        so.chunk_bytes = 1000;
        ReduceResult r = reduce(s, device(), {op, axis}, so);
        for (auto i : r.indices)
          EXPECT_EQ(i, 0) << reduce_op_name(op) << " axis " << axis_name(axis);
      }
  }
  // One explicit case with its answers written out: NaN at (2, 10) and (4, 3) of 6 × 500.
  std::vector<float> v(3000, 1.0f);
  v[2 * 500 + 10] = NAN;
  v[4 * 500 + 3] = NAN;
  v[2999] = -7.0f;
  Source s = Source::from_host(DType::float32, {6, 500}, v.data());
  StreamOptions so;
  so.chunk_bytes = 1000;
  ReduceResult all = reduce(s, device(), {ReduceOp::argmax, Axis::all}, so);
  EXPECT_EQ(all.indices, std::vector<std::int64_t>{1010});
  EXPECT_TRUE(std::isnan(all.values.at(0).f));
  ReduceResult rows = reduce(s, device(), {ReduceOp::argmin, Axis::rows}, so);
  EXPECT_EQ(rows.indices, (std::vector<std::int64_t>{0, 0, 10, 0, 3, 499}));
  ReduceResult cols = reduce(s, device(), {ReduceOp::argmin, Axis::cols}, so);
  EXPECT_EQ(cols.indices.at(10), 2);
  EXPECT_EQ(cols.indices.at(3), 4);
  EXPECT_EQ(cols.indices.at(499), 5);
  EXPECT_EQ(cols.indices.at(0), 0);
  ReduceResult min = reduce(s, device(), {ReduceOp::min, Axis::all}, so);
  EXPECT_TRUE(std::isnan(min.values.at(0).f));
}

// Integer extremes: exact min/max/arg answers and sums that wrap modulo 2^64.
TEST_P(StreamTest, IntegerExtremesAndTies) {
  const std::int64_t n = 3000;
  for (DType t : {DType::uint8, DType::int32, DType::uint32, DType::int64, DType::uint64}) {
    std::vector<unsigned char> host(static_cast<std::size_t>(n) * dtype_size(t));
    visit_dtype(t, [&](auto v) {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T>) {
        T* p = reinterpret_cast<T*>(host.data());
        const T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        for (std::int64_t i = 0; i < n; ++i)
          p[i] = static_cast<T>(i % 2 ? hi - static_cast<T>(i % 5) : lo + static_cast<T>(i % 7));
        // The extremes several times, the first ones in different chunks than the later ones.
        p[1500] = lo;
        p[2998] = lo;
        p[200] = hi;
        p[2999] = hi;
      }
    });
    for (ReduceOp op : kOps)
      for (std::size_t chunk : {std::size_t{1000}, std::size_t{4096}}) {
        check_reduce_host(t, op, Axis::all, {n}, host, chunk, "extremes");
        check_reduce_host(t, op, Axis::rows, {6, 500}, host, chunk, "extremes");
        check_reduce_host(t, op, Axis::cols, {6, 500}, host, chunk, "extremes");
        if (HasFailure()) return;
      }
  }
  // The answers written out for int64: the first extreme wins, and the sum wraps.
  std::vector<std::int64_t> v = {
      std::numeric_limits<std::int64_t>::max(), 1, std::numeric_limits<std::int64_t>::min(),
      std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  Source s = Source::from_host(DType::int64, {5}, v.data());
  StreamOptions so;
  so.chunk_bytes = 8;  // one element per chunk
  StreamStats stats;
  ReduceResult sum = reduce(s, device(), {ReduceOp::sum, Axis::all}, so, &stats);
  EXPECT_EQ(stats.chunks, 5);
  // max + 1 + min + max + min = max + 1 − 2^63 + max − 2^63 ≡ 2·max + 1 − 2^64 = −1 (mod 2^64).
  EXPECT_EQ(sum.values.at(0).i, -1);
  EXPECT_EQ(reduce(s, device(), {ReduceOp::argmax, Axis::all}, so).indices.at(0), 0);
  EXPECT_EQ(reduce(s, device(), {ReduceOp::argmin, Axis::all}, so).indices.at(0), 2);
}

TEST_P(StreamTest, EmptyInput) {
  for (DType t : kReduceTypes) {
    SCOPED_TRACE(dtype_name(t));
    Source s = Source::from_host(t, {0}, nullptr);
    EXPECT_EQ(s.size(), 0);
    StreamOptions so;
    so.chunk_bytes = 1000;
    ReduceResult sum = reduce(s, device(), {ReduceOp::sum, Axis::all}, so);
    ReduceResult prod = reduce(s, device(), {ReduceOp::prod, Axis::all}, so);
    ASSERT_EQ(sum.values.size(), 1u);
    ASSERT_EQ(prod.values.size(), 1u);
    EXPECT_EQ(sum.values[0].as_double(), 0.0);
    EXPECT_EQ(prod.values[0].as_double(), 1.0);
    for (ReduceOp op : {ReduceOp::min, ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax}) {
      try {
        reduce(s, device(), {op, Axis::all}, so);
        ADD_FAILURE() << reduce_op_name(op) << " of empty input did not throw";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      }
    }
  }
  // An empty .npy file and an empty raw file stream like empty host memory.
  std::string npy = temp_path("stream_empty.npy");
  write_npy(npy, DType::float32, {0}, nullptr);
  std::string raw = temp_path("stream_empty.bin");
  std::ofstream(raw, std::ios::binary).close();
  for (const std::string& path : {npy, raw}) {
    Source s = Source::open(path);
    EXPECT_EQ(s.size(), 0) << path;
    EXPECT_EQ(reduce(s, device(), {ReduceOp::sum, Axis::all}).values.at(0).as_double(), 0.0);
    EXPECT_THROW(reduce(s, device(), {ReduceOp::max, Axis::all}), Error) << path;
    HistogramResult h = histogram(s, device(), HistogramBins::even(4, 0, 1));
    EXPECT_EQ(h.counts, std::vector<std::uint64_t>(4, 0)) << path;
  }
}

// ---- stats and options -------------------------------------------------------------------------

TEST_P(StreamTest, StatsCountChunksBytesAndPasses) {
  std::mt19937_64 rng(run_seed() + 5);
  const std::int64_t n = 100003;
  auto host = random_bytes(DType::float32, n, rng);
  const std::uint64_t bytes = host.size();
  Source s = Source::from_host(DType::float32, {n}, host.data());
  for (std::size_t chunk : {std::size_t{4096}, std::size_t{1000}, std::size_t{4098}}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    StreamOptions so;
    so.chunk_bytes = chunk;
    std::vector<StreamProgress> seen;
    so.progress = [&](const StreamProgress& p) { seen.push_back(p); };
    StreamStats stats;
    reduce(s, device(), {ReduceOp::max, Axis::all}, so, &stats);
    const std::int64_t chunks = expected_chunks(bytes, chunk, DType::float32);
    EXPECT_EQ(stats.chunks, chunks);
    EXPECT_EQ(stats.bytes, bytes);
    EXPECT_EQ(stats.passes, 1);
    EXPECT_GT(stats.wall_ms, 0);
    EXPECT_GE(stats.read_ms, 0);
    if (device().backend() == Backend::cpu) EXPECT_EQ(stats.transfer_ms, 0);
    EXPECT_EQ(static_cast<std::int64_t>(seen.size()), chunks);
    for (std::size_t i = 1; i < seen.size(); ++i)
      EXPECT_GT(seen[i].bytes_done, seen[i - 1].bytes_done);
    if (!seen.empty()) {
      EXPECT_EQ(seen.back().bytes_done, bytes);
      EXPECT_EQ(seen.back().bytes_total, bytes);
      EXPECT_EQ(seen.back().passes, 1);
    }

    // A histogram with a range: one pass; without: two, and every pass counts.
    seen.clear();
    histogram(s, device(), HistogramBins::even(16, -1, 1), {}, so, &stats);
    EXPECT_EQ(stats.passes, 1);
    EXPECT_EQ(stats.bytes, bytes);
    EXPECT_EQ(stats.chunks, chunks);
    seen.clear();
    histogram(s, device(), HistogramBins::even(16), {}, so, &stats);
    EXPECT_EQ(stats.passes, 2);
    EXPECT_EQ(stats.bytes, 2 * bytes);
    EXPECT_EQ(stats.chunks, 2 * chunks);
    ASSERT_EQ(static_cast<std::int64_t>(seen.size()), 2 * chunks);
    EXPECT_EQ(seen.front().pass, 1);
    EXPECT_EQ(seen.front().passes, 2);
    EXPECT_EQ(seen.back().pass, 2);
    EXPECT_EQ(seen.back().bytes_done, bytes);
  }
  // A chunk smaller than one element holds one element.
  std::vector<double> few = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};
  Source f = Source::from_host(DType::float64, {11}, few.data());
  StreamOptions tiny;
  tiny.chunk_bytes = 1;
  StreamStats tiny_stats;
  ReduceResult am = reduce(f, device(), {ReduceOp::argmax, Axis::all}, tiny, &tiny_stats);
  EXPECT_EQ(tiny_stats.chunks, 11);
  EXPECT_EQ(am.indices.at(0), 5);
  EXPECT_EQ(reduce(f, device(), {ReduceOp::sum, Axis::all}, tiny).values.at(0).f, 44.0);
  // A staging budget smaller than two default chunks makes the chunks smaller: every chunk fits
  // in half of it.
  StreamOptions tight;
  tight.staging_bytes = 3000;
  StreamStats stats;
  ReduceResult r = reduce(s, device(), {ReduceOp::sum, Axis::all}, tight, &stats);
  EXPECT_GE(stats.chunks, expected_chunks(bytes, 1500, DType::float32));
  ReduceResult whole = reduce(s, device(), {ReduceOp::sum, Axis::all});
  EXPECT_NEAR(r.values.at(0).f, whole.values.at(0).f, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Devices, StreamTest, ::testing::ValuesIn(devices()), device_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StreamTest);

}  // namespace
}  // namespace parpat::test
