// Distributed reduce and histogram (parpat/distributed.hpp) over thread communicators on every
// device: every rank count from 1 to 4 gives the in-memory answer (integers and histograms
// exactly, floats within the accuracy contract), every rank gets the same bits, shares may be
// empty, chunks fall inside shares; a failure or a mismatched call on one rank stops every rank
// with the same error, and a rank that never arrives costs the others no more than the time
// limit.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "distributed_support.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "parpat/io.hpp"
#include "reduce/verify.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

class DistributedTest : public ::testing::TestWithParam<Device> {
 protected:
  const Device& device() const { return GetParam(); }

  // Every rank's reduce of `host` over `size` ranks; expects them equal to each other and rank
  // 0's to be the in-memory answer `want`. Returns rank 0's.
  ReduceResult check_reduce(int size, DType t, const std::vector<std::int64_t>& shape,
                            const std::vector<unsigned char>& host, const ReduceOptions& o,
                            const ReduceResult& want, std::size_t chunk) {
    SCOPED_TRACE(std::to_string(size) + " ranks, " + reduce_op_name(o.op) + " of " + dtype_name(t) +
                 " axis " + axis_name(o.axis) + ", " + std::to_string(shape.size()) + "-D of " +
                 std::to_string(shape.back()) + " columns, chunk " + std::to_string(chunk) +
                 ", seed " + std::to_string(run_seed()));
    std::vector<ReduceResult> got(static_cast<std::size_t>(size));
    StreamOptions so;
    so.chunk_bytes = chunk;
    auto failed = on_ranks(size, [&](Communicator& comm) {
      Source s = Source::from_host(t, shape, host.data());
      got[static_cast<std::size_t>(comm.rank())] = reduce(s, device(), comm, o, so);
    });
    for (auto& f : failed)
      if (f) ADD_FAILURE() << error_of(f).first;
    if (::testing::Test::HasFailure()) return {};
    for (int r = 1; r < size; ++r)
      EXPECT_TRUE(same_bits(got[0], got[static_cast<std::size_t>(r)])) << "rank " << r;
    const std::int64_t rows = shape.size() == 2 ? shape[0] : 1, cols = shape.back();
    const std::int64_t extent = o.axis == Axis::all    ? rows * cols
                                : o.axis == Axis::rows ? cols
                                                       : rows;
    EXPECT_EQ(got[0].dtype, want.dtype);
    EXPECT_EQ(got[0].indices, want.indices);
    for (std::size_t k = 0; k < want.values.size() && k < got[0].values.size(); ++k) {
      const std::string why =
          detail::reduce_mismatch(want.values[k], got[0].values[k], o.op, extent,
                                  static_cast<double>(extent));  // |x| ≤ 1
      EXPECT_TRUE(why.empty()) << "output " << k << ": " << why;
    }
    return got[0];
  }

  void check_histogram(int size, DType t, const std::vector<unsigned char>& host,
                       const HistogramBins& bins, const std::string& what) {
    const auto n = static_cast<std::int64_t>(host.size() / dtype_size(t));
    SCOPED_TRACE(what + ", " + std::to_string(size) + " ranks, " + dtype_name(t));
    HistogramResult want = histogram(Array::from_host(device(), t, {n}, host.data()), bins);
    std::vector<HistogramResult> got(static_cast<std::size_t>(size));
    StreamOptions so;
    so.chunk_bytes = 4096;
    auto failed = on_ranks(size, [&](Communicator& comm) {
      Source s = Source::from_host(t, {n}, host.data());
      got[static_cast<std::size_t>(comm.rank())] = histogram(s, device(), comm, bins, {}, so);
    });
    for (auto& f : failed)
      if (f) ADD_FAILURE() << error_of(f).first;
    expect_histograms(got, want);
  }
};

std::string device_test_name(const ::testing::TestParamInfo<Device>& info) {
  return device_name(info.param);
}

TEST_P(DistributedTest, ReduceOverRanksMatchesInMemory) {
  std::mt19937_64 rng(run_seed());
  // Rows of 333 and 5000 elements; 2 rows over 3 ranks leave one rank without a row.
  const std::vector<std::vector<std::int64_t>> shapes = {{1}, {1025}, {9, 333}, {2, 5000}};
  const DType types[] = {DType::boolean, DType::int8,    DType::uint16, DType::int32,
                         DType::uint64,  DType::float32, DType::float64};
  const ReduceOp ops[] = {ReduceOp::sum,          ReduceOp::prod,   ReduceOp::min,
                          ReduceOp::max,          ReduceOp::argmin, ReduceOp::argmax,
                          ReduceOp::var,          ReduceOp::nanmax, ReduceOp::nanargmin,
                          ReduceOp::count_nonzero};
  for (DType t : types)
    for (const auto& shape : shapes) {
      std::int64_t n = 1;
      for (auto d : shape)
        n *= d;
      auto host = random_values(t, n, rng);
      Array in = Array::from_host(device(), t, shape, host.data());
      for (ReduceOp op : ops) {
        for (Axis axis : {Axis::all, Axis::rows, Axis::cols}) {
          if (shape.size() == 1 && axis != Axis::all) continue;
          ReduceOptions o;
          o.op = op;
          o.axis = axis;
          ReduceResult want;
          try {
            want = reduce(in, o);
          } catch (const Error&) {
            continue;  // all-NaN slices of nanargmin: covered by the stream's tests
          }
          for (int size : {1, 2, 3})
            check_reduce(size, t, shape, host, o, want, 0);
          if (HasFailure()) return;
        }
      }
    }
}

// N-D inputs with numpy's axes: axes whose reduced part makes one block stream over the ranks as
// rows or columns of the 2-D view and give the in-memory answer and shape; axes that interleave
// with kept ones are refused alike on every rank.
TEST_P(DistributedTest, NdAxesOverRanks) {
  std::mt19937_64 rng(run_seed() + 5);
  const std::vector<std::int64_t> shape = {5, 4, 3, 7};
  const auto host = random_values(DType::int32, 5 * 4 * 3 * 7, rng);
  Array in = Array::from_host(device(), DType::int32, shape, host.data());
  StreamOptions so;
  so.chunk_bytes = 64;
  for (const std::vector<int>& axes : {std::vector<int>{1, 2, 3}, std::vector<int>{0},
                                       std::vector<int>{1, 0}, std::vector<int>{-1}})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::argmax}) {
      if (is_arg_op(op) && axes.size() != 1) continue;
      ReduceOptions o;
      o.op = op;
      o.axes = axes;
      o.keepdims = axes.size() == 1;
      const ReduceResult want = reduce(in, o);
      for (int size : {1, 3}) {
        SCOPED_TRACE(std::string(reduce_op_name(op)) + " over " + std::to_string(size) +
                     " ranks, first axis " + std::to_string(axes[0]));
        std::vector<ReduceResult> got(static_cast<std::size_t>(size));
        auto failed = on_ranks(size, [&](Communicator& comm) {
          Source s = Source::from_host(DType::int32, shape, host.data());
          got[static_cast<std::size_t>(comm.rank())] = reduce(s, device(), comm, o, so);
        });
        for (auto& f : failed)
          if (f) ADD_FAILURE() << error_of(f).first;
        for (const ReduceResult& g : got) {
          EXPECT_EQ(g.shape, want.shape);
          EXPECT_EQ(g.indices, want.indices);
          ASSERT_EQ(g.values.size(), want.values.size());
          for (std::size_t k = 0; k < g.values.size(); ++k)
            EXPECT_EQ(g.values[k].i, want.values[k].i) << "output " << k;
        }
        if (HasFailure()) return;
      }
    }
  ReduceOptions interleaved;
  interleaved.axes = std::vector<int>{0, 2};
  auto failed = on_ranks(2, [&](Communicator& comm) {
    Source s = Source::from_host(DType::int32, shape, host.data());
    reduce(s, device(), comm, interleaved);
  });
  expect_every_rank_failed_alike(failed, "interleave");
}

TEST_P(DistributedTest, ChunksInsideSharesAndTheSameBitsForTheSameRanks) {
  std::mt19937_64 rng(run_seed() + 1);
  const std::int64_t n = 20011;
  for (DType t : {DType::float32, DType::float64}) {
    auto host = random_values(t, n, rng);
    std::vector<unsigned char> finite(host.size());  // the NaN replaced: sums must be numbers
    visit_dtype(t, [&](auto v) {
      using T = decltype(v);
      const T* p = reinterpret_cast<const T*>(host.data());
      T* q = reinterpret_cast<T*>(finite.data());
      for (std::int64_t i = 0; i < n; ++i)
        q[i] = std::isnan(static_cast<double>(p[i])) ? T(0.25) : p[i];
    });
    Array in = Array::from_host(device(), t, {n}, finite.data());
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::var, ReduceOp::argmax}) {
      ReduceOptions o;
      o.op = op;
      const ReduceResult want = reduce(in, o);
      for (int size : {2, 4}) {
        ReduceResult a = check_reduce(size, t, {n}, finite, o, want, 1000);
        ReduceResult b = check_reduce(size, t, {n}, finite, o, want, 1000);
        EXPECT_TRUE(same_bits(a, b)) << size << " ranks twice: " << a.values.at(0).to_string()
                                     << " then " << b.values.at(0).to_string();
      }
    }
  }
}

TEST_P(DistributedTest, HistogramOverRanksMatchesInMemory) {
  std::mt19937_64 rng(run_seed() + 2);
  const std::int64_t n = 10007;
  for (DType t : {DType::uint8, DType::uint16, DType::int32, DType::float32, DType::float64}) {
    std::vector<unsigned char> host(static_cast<std::size_t>(n) * dtype_size(t));
    visit_dtype(t, [&](auto v) {
      using T = decltype(v);
      T* p = reinterpret_cast<T*>(host.data());
      std::normal_distribution<double> normal(100, 30);
      for (std::int64_t i = 0; i < n; ++i)
        p[i] = static_cast<T>(std::clamp(std::round(normal(rng)), 0.0, 250.0));
      if constexpr (std::is_floating_point_v<T>) p[n / 2] = T(NAN);
    });
    for (int size : {1, 2, 3, 4}) {
      check_histogram(size, t, host, HistogramBins::even(64, 20, 180), "even with a range");
      check_histogram(size, t, host, HistogramBins::explicit_edges({0, 50, 99.5, 100.5, 300}),
                      "explicit edges");
      if (!is_float(t)) {
        check_histogram(size, t, host, HistogramBins::even(37), "even without a range");
        check_histogram(size, t, host, HistogramBins::per_value(), "per value");
      }
      if (HasFailure()) return;
    }
  }
}

// Weighted histograms over ranks: the values and their float32 or float64 weights split alike,
// each rank's float64 sums added in rank order. Every rank has the same bits; against the
// in-memory weighted histogram each sum agrees to within the reordered additions' rounding.
TEST_P(DistributedTest, WeightedHistogramOverRanksMatchesInMemory) {
  std::mt19937_64 rng(run_seed() + 3);
  const std::int64_t n = 10007;
  std::normal_distribution<double> normal(100, 30);
  std::uniform_real_distribution<double> weight(-2, 3);
  // n values of dtype t drawn from `draw`, and element i of such values as a double.
  auto host_of = [n](DType t, const std::function<double()>& draw) {
    std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(t));
    visit_dtype(t, [&](auto v) {
      using T = decltype(v);
      for (std::int64_t i = 0; i < n; ++i)
        reinterpret_cast<T*>(out.data())[i] = static_cast<T>(draw());
    });
    return out;
  };
  auto at = [](DType t, const std::vector<unsigned char>& host, std::int64_t i) {
    double x = 0;
    visit_dtype(t, [&](auto v) {
      x = static_cast<double>(reinterpret_cast<const decltype(v)*>(host.data())[i]);
    });
    return x;
  };
  for (DType t : {DType::int32, DType::float32})
    for (DType w : {DType::float32, DType::float64}) {
      const std::vector<unsigned char> values = host_of(t, [&] { return normal(rng); });
      const std::vector<unsigned char> weights = host_of(w, [&] { return weight(rng); });
      Array in = Array::from_host(device(), t, {n}, values.data());
      Array in_weights = Array::from_host(device(), w, {n}, weights.data());
      for (const HistogramBins& bins : {HistogramBins::even(64, 20, 180), HistogramBins::even(37),
                                        HistogramBins::explicit_edges({0, 50, 99.5, 100.5, 300})}) {
        const HistogramResult want = histogram(in, in_weights, bins);
        for (int size : {1, 2, 3, 4}) {
          SCOPED_TRACE(std::to_string(size) + " ranks, " + dtype_name(t) + " weighted by " +
                       dtype_name(w) + ", seed " + std::to_string(run_seed()));
          std::vector<HistogramResult> got(static_cast<std::size_t>(size));
          StreamOptions so;
          so.chunk_bytes = 4096;
          auto failed = on_ranks(size, [&](Communicator& comm) {
            Source s = Source::from_host(t, {n}, values.data());
            Source sw = Source::from_host(w, {n}, weights.data());
            got[static_cast<std::size_t>(comm.rank())] =
                histogram(s, sw, device(), comm, bins, {}, so);
          });
          for (auto& f : failed)
            if (f) ADD_FAILURE() << error_of(f).first;
          if (HasFailure()) return;
          for (const auto& g : got) {
            ASSERT_TRUE(g.weighted());
            EXPECT_EQ(g.sums, got[0].sums);  // the same bits on every rank
            EXPECT_EQ(g.bins.lo, want.bins.lo);
            EXPECT_EQ(g.bins.hi, want.bins.hi);
          }
          ASSERT_EQ(got[0].sums.size(), want.sums.size());
          double scale = 0;  // the sum of |weight|, a bound on any bin's rounding
          for (std::int64_t i = 0; i < n; ++i)
            scale += std::abs(at(w, weights, i));
          for (std::size_t b = 0; b < want.sums.size(); ++b)
            EXPECT_NEAR(got[0].sums[b], want.sums[b], 1e-12 * scale) << "bin " << b;
          EXPECT_NEAR(got[0].underflow_sum, want.underflow_sum, 1e-12 * scale);
          EXPECT_NEAR(got[0].overflow_sum, want.overflow_sum, 1e-12 * scale);
        }
      }
    }
}

// A rank whose share cannot be read (the file shrank after every rank opened it) stops every
// rank with its error. (The CPU backend reads mapped pages, where a vanished page is SIGBUS: the
// CLI turns that into one line, a test cannot.)
TEST_P(DistributedTest, AReadErrorOnOneRankStopsEveryRank) {
  if (device().backend() == Backend::cpu) GTEST_SKIP() << "reads mapped pages";
  const std::string path = temp_path("shrinks_" + device_name(device()) + ".npy");
  std::vector<float> v(100000, 1.0f);
  write_npy(path, DType::float32, {static_cast<std::int64_t>(v.size())}, v.data());
  auto comms = thread_communicators(2, 60);
  std::vector<Source> sources = {Source::open(path), Source::open(path)};
  ASSERT_EQ(::truncate(path.c_str(), 128 + 40000), 0);
  std::vector<std::exception_ptr> failed(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      try {
        reduce(sources[static_cast<std::size_t>(r)], device(), *comms[static_cast<std::size_t>(r)],
               {ReduceOp::sum});
      } catch (...) {
        failed[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads)
    t.join();
  expect_every_rank_failed_alike(failed, path);
  EXPECT_EQ(error_of(failed[0]).second, ErrorKind::io);
}

INSTANTIATE_TEST_SUITE_P(Devices, DistributedTest, ::testing::ValuesIn(devices()),
                         device_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DistributedTest);

Device cpu() {
  return Device::open(Backend::cpu);
}

// The threads' collectives themselves: every rank's sums and gathers right for 1–4 ranks and
// any count (shares of the slots that are empty, unequal, or one element), many rounds in a row
// with their sizes changing, each rank's own buffer written in place.
TEST(ThreadCollectives, AllReduceAndAllGatherOfEverySize) {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    on_thread_ranks(ranks, [ranks](Communicator& comm) {
      const auto r = static_cast<std::uint64_t>(comm.rank());
      int round = 0;
      for (std::size_t count : {0, 1, 2, 3, 5, 7, 1000, 65539, 3, 0, 4096}) {
        ++round;
        std::vector<std::uint64_t> values(count);
        for (std::size_t i = 0; i < count; ++i)
          values[i] = (r + 1) * 1000003 + i * 7 + round;
        comm.all_reduce_sum(values.data(), count);
        const std::uint64_t rank_sum = std::uint64_t(ranks) * (ranks + 1) / 2;
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(values[i], rank_sum * 1000003 + ranks * (i * 7 + round)) << "slot " << i;
        const std::vector<std::uint64_t> mine(count % 5, r + round);
        const auto all = comm.all_gather(mine.data(), mine.size() * sizeof(std::uint64_t));
        ASSERT_EQ(all.size(), mine.size() * sizeof(std::uint64_t) * ranks);
        const auto* got = reinterpret_cast<const std::uint64_t*>(all.data());
        for (std::size_t k = 0; k < mine.size() * ranks; ++k)
          ASSERT_EQ(got[k], k / mine.size() + round);
      }
    });
  }
}

TEST(DistributedFaults, AStepThatFailsOnOneRankFailsOnEveryRank) {
  auto failed = on_ranks(3, [](Communicator& comm) {
    on_every_rank(comm, [&] {
      if (comm.rank() == 2) throw Error(ErrorKind::io, "rank two cannot open its file");
    });
  });
  expect_every_rank_failed_alike(failed, "rank two cannot open its file");
  EXPECT_EQ(error_of(failed[1]).second, ErrorKind::io);
}

TEST(DistributedFaults, RanksGivenDifferentCallsAllRefuseBeforeExchangingResults) {
  std::vector<float> v(1000, 0.5f);
  auto failed = on_ranks(2, [&](Communicator& comm) {
    Source s = Source::from_host(DType::float32, {comm.rank() == 0 ? 1000 : 999}, v.data());
    reduce(s, cpu(), comm, {ReduceOp::sum});
  });
  expect_every_rank_failed_alike(failed, "rank 1 was given another call than rank 0");
  EXPECT_EQ(error_of(failed[0]).second, ErrorKind::invalid_argument);
  failed = on_ranks(2, [&](Communicator& comm) {
    Source s = Source::from_host(DType::float32, {1000}, v.data());
    histogram(s, cpu(), comm, HistogramBins::even(comm.rank() == 0 ? 10 : 11, 0, 1));
  });
  expect_every_rank_failed_alike(failed, "rank 1 was given another call than rank 0");
  failed = on_ranks(2, [&](Communicator& comm) {
    Source s = Source::from_host(DType::float32, {10, 100}, v.data());
    ReduceOptions o;
    o.op = ReduceOp::sum;
    o.axis = comm.rank() == 0 ? Axis::rows : Axis::cols;
    reduce(s, cpu(), comm, o);
  });
  expect_every_rank_failed_alike(failed, "rank 1 was given another call than rank 0");
}

TEST(DistributedFaults, BadInputIsTheSameErrorOnEveryRank) {
  std::vector<float> v(1000, 0.5f);
  v[7] = NAN;
  // No range and a NaN in the data: numpy's "autodetected range ... is not finite".
  auto failed = on_ranks(2, [&](Communicator& comm) {
    Source s = Source::from_host(DType::float32, {1000}, v.data());
    histogram(s, cpu(), comm, HistogramBins::even(10));
  });
  expect_every_rank_failed_alike(failed, "finite");
  // One rank's values alone would fit per-value bins; the whole input's largest does not.
  std::vector<std::int64_t> wide(100, 1);
  wide[97] = std::int64_t{1} << 40;
  failed = on_ranks(2, [&](Communicator& comm) {
    Source s = Source::from_host(DType::int64, {100}, wide.data());
    histogram(s, cpu(), comm, HistogramBins::per_value());
  });
  expect_every_rank_failed_alike(failed, "per-value bins");
  // Weights of another length than the values.
  std::vector<double> w(999, 1.0);
  failed = on_ranks(2, [&](Communicator& comm) {
    Source s = Source::from_host(DType::float32, {1000}, v.data());
    Source sw = Source::from_host(DType::float64, {999}, w.data());
    histogram(s, sw, cpu(), comm, HistogramBins::even(10, 0, 1));
  });
  expect_every_rank_failed_alike(failed, "weights should have the same shape as the values");
  EXPECT_EQ(error_of(failed[0]).second, ErrorKind::invalid_argument);
}

TEST(DistributedFaults, ARankThatNeverArrivesCostsTheOthersOnlyTheTimeLimit) {
  std::vector<float> v(1000, 0.5f);
  const auto start = std::chrono::steady_clock::now();
  auto failed = on_ranks(
      2,
      [&](Communicator& comm) {
        if (comm.rank() == 1) return;  // stops before the call
        Source s = Source::from_host(DType::float32, {1000}, v.data());
        reduce(s, cpu(), comm, {ReduceOp::sum});
      },
      0.5);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(failed[0]);
  EXPECT_FALSE(failed[1]);
  try {
    std::rethrow_exception(failed[0]);
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "timeout");
    EXPECT_NE(std::string(e.what()).find("rank(s) 1"), std::string::npos) << e.what();
  }
  EXPECT_LT(s, 30.0);
}

// A rank that arrives after another timed out at the same collective throws too, rather than
// completing the round with what the timed-out rank published (and has since freed).
TEST(DistributedFaults, ARankArrivingAfterATimeoutThrowsToo) {
  auto failed = on_ranks(
      2,
      [&](Communicator& comm) {
        std::vector<unsigned char> mine(4096, static_cast<unsigned char>(comm.rank()));
        if (comm.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(600));
        comm.all_gather(mine.data(), mine.size());
      },
      0.2);
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(failed[static_cast<std::size_t>(r)]) << "rank " << r << " did not throw";
    try {
      std::rethrow_exception(failed[static_cast<std::size_t>(r)]);
    } catch (const Error& e) {
      EXPECT_EQ(e.call(), "timeout") << e.what();
    }
  }
}

TEST(DistributedFaults, EmptyInputGivesTheInMemoryAnswerOnEveryRank) {
  auto failed = on_ranks(3, [&](Communicator& comm) {
    Source s = Source::from_host(DType::int32, {0}, nullptr);
    ReduceResult r = reduce(s, cpu(), comm, {ReduceOp::sum});
    EXPECT_EQ(r.values.at(0).i, 0);
    HistogramResult h = histogram(s, cpu(), comm, HistogramBins::even(4));
    EXPECT_EQ(h.counts, std::vector<std::uint64_t>(4, 0));
    reduce(s, cpu(), comm, {ReduceOp::max});  // numpy: zero-size array
  });
  expect_every_rank_failed_alike(failed, "zero-size");
}

}  // namespace
}  // namespace parpat::test
