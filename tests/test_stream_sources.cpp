// The pieces a stream is built of (Buffer::wrap, Array::view, plans that check their arrays'
// device) and its sources (raw files, directories, truncated and missing files); the streamed
// calls themselves: test_stream.cpp.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/io.hpp"
#include "parpat/reduce.hpp"
#include "parpat/stream.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

// ---- Buffer::wrap, Array::view, plans of another device ----------------------------------------

const Device* cpu_device() {
  for (const auto& d : devices())
    if (d.backend() == Backend::cpu) return &d;
  return nullptr;
}

TEST(StreamBuffers, WrapOfHostMemoryAndArrayViewOnTheCpu) {
  const Device* cpu = cpu_device();
  if (!cpu) GTEST_SKIP() << "no CPU device";
  std::mt19937_64 rng(run_seed() + 7);
  std::vector<float> v(1000);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : v)
    x = u(rng);
  Buffer b = Buffer::wrap(*cpu, v.data(), v.size() * sizeof(float));
  EXPECT_EQ(b.bytes(), v.size() * sizeof(float));
  EXPECT_EQ(b.handle(), v.data());
  Array a = Array::view(b, DType::float32, {1000});
  EXPECT_EQ(a.size(), 1000);
  Array copy = Array::from_vector(*cpu, v);
  for (ReduceOp op : kOps) {
    ReduceResult r = reduce(a, {op, Axis::all});
    ReduceResult c = reduce(copy, {op, Axis::all});
    if (op == ReduceOp::prod) continue;  // 1000 values in [−1, 1): underflows to ±0 anyway
    EXPECT_TRUE(same_scalar(r.values.at(0), c.values.at(0))) << reduce_op_name(op);
    EXPECT_EQ(r.indices, c.indices) << reduce_op_name(op);
  }
  // No copy: the view sees the caller's memory as it is now.
  v[637] = 1e6f;
  ReduceResult m = reduce(a, {ReduceOp::argmax, Axis::all});
  EXPECT_EQ(m.values.at(0).f, 1e6);
  EXPECT_EQ(m.indices.at(0), 637);
  // A 2-D view with a row stride: 10 rows of 90 of every 100.
  Array rows = Array::view(b, DType::float32, {10, 90}, 100);
  ReduceResult r = reduce(rows, {ReduceOp::max, Axis::rows});
  ASSERT_EQ(r.values.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    float want = *std::max_element(v.begin() + i * 100, v.begin() + i * 100 + 90);
    EXPECT_EQ(r.values[static_cast<std::size_t>(i)].f, want) << "row " << i;
  }
  // A histogram of the view.
  HistogramResult h = histogram(a, HistogramBins::even(4, -1, 1));
  EXPECT_EQ(h.overflow, 1u);  // 1e6
  // Views larger than the buffer are refused.
  for (auto make :
       std::vector<std::function<Array()>>{[&] { return Array::view(b, DType::float32, {1001}); },
                                           [&] { return Array::view(b, DType::float64, {501}); },
                                           [&] {
                                             return Array::view(b, DType::float32, {10, 90}, 112);
                                           },
                                           [&] {
                                             return Array::view(b, DType::uint8, {2, 2001});
                                           }}) {
    try {
      make();
      ADD_FAILURE() << "a view past the buffer's end was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
    }
  }
  EXPECT_NO_THROW(Array::view(b, DType::float64, {500}));
  EXPECT_NO_THROW(Array::view(b, DType::uint8, {4000}));
  EXPECT_THROW(Buffer::wrap(*cpu, nullptr, 16), Error);
}

TEST(StreamBuffers, ViewOfADeviceBufferOnEveryDevice) {
  for (const auto& d : devices()) {
    SCOPED_TRACE(d.label());
    Buffer b(d, 400);
    std::vector<std::int32_t> v(100);
    for (int i = 0; i < 100; ++i)
      v[static_cast<std::size_t>(i)] = i * 3 - 50;
    b.upload(v.data(), 400);
    Array a = Array::view(b, DType::int32, {100});
    EXPECT_EQ(reduce(a, {ReduceOp::sum, Axis::all}).values.at(0).i, 3 * 4950 - 5000);
    EXPECT_EQ(
        reduce(Array::view(b, DType::int32, {10, 10}), {ReduceOp::argmax, Axis::cols}).indices,
        std::vector<std::int64_t>(10, 9));
    try {
      Array::view(b, DType::int32, {101});
      ADD_FAILURE() << "a view of 404 bytes over 400 was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
    }
  }
}

TEST(StreamBuffers, PlansRefuseArraysOfAnotherDevice) {
  if (devices().size() < 2) GTEST_SKIP() << "needs two devices";
  const Device& d0 = devices()[0];
  const Device& d1 = devices()[1];
  SCOPED_TRACE(d0.label() + " and " + d1.label());
  std::vector<float> v(100, 1.0f);
  Array a0 = Array::from_vector(d0, v), a1 = Array::from_vector(d1, v);
  Reducer reducer(d0, DType::float32, {100}, 0, {ReduceOp::argmax, Axis::all});
  Buffer values0(d0, 8), indices0(d0, 8), values1(d1, 8), indices1(d1, 8);
  EXPECT_NO_THROW(reducer.run(a0, values0, indices0));
  auto expect_invalid = [](const std::function<void()>& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << what << ": " << e.what();
    }
  };
  expect_invalid([&] { reducer.run(a1, values0, indices0); }, "reducer, array of d1");
  expect_invalid([&] { reducer.run(a0, values1, indices0); }, "reducer, values of d1");
  expect_invalid([&] { reducer.run(a0, values0, indices1); }, "reducer, indices of d1");
  Histogrammer h(d0, DType::float32, 100, HistogramBins::even(8, 0, 2));
  Buffer counts0(d0, 11 * 8), counts1(d1, 11 * 8);
  EXPECT_NO_THROW(h.run(a0, counts0));
  expect_invalid([&] { h.run(a1, counts0); }, "histogrammer, array of d1");
  expect_invalid([&] { h.run(a0, counts1); }, "histogrammer, counts of d1");
  expect_invalid([&] { h.run(a1, counts1, true); }, "histogrammer, both of d1");
}

// ---- sources -----------------------------------------------------------------------------------

void expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& fragment,
                  const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << what << ": '" << e.what() << "' does not name '" << fragment << "'";
  }
}

TEST(StreamSources, ARawFileReadsAsUint8Bytes) {
  std::mt19937_64 rng(run_seed() + 8);
  std::vector<std::uint8_t> bytes(10007);
  for (auto& b : bytes)
    b = static_cast<std::uint8_t>(rng());
  bytes[4321] = 0;
  std::string path = temp_path("stream_raw.bin");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  Source s = Source::open(path);
  EXPECT_TRUE(s.raw());
  EXPECT_EQ(s.dtype(), DType::uint8);
  EXPECT_EQ(s.shape(), std::vector<std::int64_t>{10007});
  EXPECT_EQ(s.size(), 10007);
  EXPECT_TRUE(s.rereadable());
  std::uint64_t sum = 0;
  for (auto b : bytes)
    sum += b;
  const auto first_max =
      std::max_element(bytes.begin(), bytes.end()) - bytes.begin();  // the first of the largest
  std::vector<std::uint64_t> bincount(256);
  for (auto b : bytes)
    ++bincount[b];
  for (const auto& d : devices()) {
    SCOPED_TRACE(d.label());
    StreamOptions so;
    so.chunk_bytes = 1000;
    EXPECT_EQ(reduce(s, d, {ReduceOp::sum, Axis::all}, so).values.at(0).u, sum);
    EXPECT_EQ(reduce(s, d, {ReduceOp::argmax, Axis::all}, so).indices.at(0), first_max);
    HistogramResult h = histogram(s, d, HistogramBins::per_value(), {}, so);
    EXPECT_EQ(h.counts, bincount);
  }
  // The .npy magic makes a file an array whatever its name.
  std::vector<float> v = {1, 2, 3.5f};
  std::string disguised = temp_path("stream_array.dat");
  write_npy(disguised, DType::float32, {3}, v.data());
  Source a = Source::open(disguised);
  EXPECT_FALSE(a.raw());
  EXPECT_EQ(a.dtype(), DType::float32);
  EXPECT_EQ(reduce(a, devices().front()).values.at(0).f, 6.5);
  std::remove(path.c_str());
  std::remove(disguised.c_str());
}

TEST(StreamSources, BadInputsThrowTheRightError) {
  // A directory.
  std::string dir = temp_path("stream_a_directory");
  ::mkdir(dir.c_str(), 0700);
  expect_error([&] { Source::open(dir); }, ErrorKind::invalid_argument, dir, "directory");
  // A missing file.
  std::string missing = temp_path("stream_no_such_file.npy");
  expect_error([&] { Source::open(missing); }, ErrorKind::io, missing, "missing file");
  expect_error([&] { Source::open(temp_path("stream_no_such_file.bin")); }, ErrorKind::io,
               "stream_no_such_file.bin", "missing raw file");
  // A truncated .npy: the header promises more than the file holds.
  std::vector<float> v(1000, 1.0f);
  std::string truncated = temp_path("stream_truncated.npy");
  write_npy(truncated, DType::float32, {1000}, v.data());
  ASSERT_EQ(::truncate(truncated.c_str(), 128 + 3000), 0);
  expect_error([&] { Source::open(truncated); }, ErrorKind::invalid_argument, "header promises",
               "truncated .npy");
  // A truncated header.
  ASSERT_EQ(::truncate(truncated.c_str(), 30), 0);
  EXPECT_THROW(Source::open(truncated), Error);
  // Shapes and dtypes the patterns do not take.
  EXPECT_THROW(Source::from_host(DType::float32, {-1}, nullptr), Error);
  const Device& d = devices().front();
  Source flat = Source::from_host(DType::float32, {1000}, v.data());
  expect_error(
      [&] {
        reduce(flat, d, {ReduceOp::sum, Axis::rows});
      },
      ErrorKind::invalid_argument, "2-D", "axis rows of 1-D input");
  std::vector<std::int64_t> i64(10, 1);
  i64[3] = std::int64_t{1} << 40;
  Source s64 = Source::from_host(DType::int64, {10}, i64.data());
  expect_error([&] { histogram(s64, d, HistogramBins::per_value()); }, ErrorKind::invalid_argument,
               "int64", "per-value bins beyond 2^26");
  // A file that shrank after it was opened: an io error, not a crash (read, not mapped, on
  // devices other than the CPU; the CPU maps windows and would take SIGBUS, which the CLI turns
  // into one line).
  for (const auto& dev : devices()) {
    if (dev.backend() == Backend::cpu) continue;
    SCOPED_TRACE(dev.label());
    std::string shrinking = temp_path("stream_shrinking.npy");
    std::vector<float> w(100000, 1.0f);
    write_npy(shrinking, DType::float32, {100000}, w.data());
    Source s = Source::open(shrinking);
    ASSERT_EQ(::truncate(shrinking.c_str(), 1000), 0);
    StreamOptions so;
    so.chunk_bytes = 4096;
    expect_error(
        [&] {
          reduce(s, dev, {ReduceOp::sum, Axis::all}, so);
        },
        ErrorKind::io, "shrank", "a file that shrank");
  }
  ::rmdir(dir.c_str());
  std::remove(truncated.c_str());
}

}  // namespace
}  // namespace parpat::test
