// Helpers of the distributed tests: thread ranks, the checks that every rank failed alike or got
// the same bits, and random input.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "parpat/communicator.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/reduce.hpp"

namespace parpat::test {

// Runs `body(comm)` on one thread per communicator and returns each rank's exception.
inline std::vector<std::exception_ptr> run_ranks(
    const std::vector<std::shared_ptr<Communicator>>& comms,
    const std::function<void(Communicator&)>& body) {
  std::vector<std::exception_ptr> failed(comms.size());
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < comms.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        body(*comms[r]);
      } catch (...) {
        failed[r] = std::current_exception();
      }
    });
  for (auto& t : threads)
    t.join();
  return failed;
}

// The same on `size` thread ranks.
inline std::vector<std::exception_ptr> on_ranks(int size,
                                                const std::function<void(Communicator&)>& body,
                                                double timeout = 120) {
  return run_ranks(thread_communicators(size, timeout), body);
}

// The message of `e`'s Error and its kind; fails the test for anything else.
inline std::pair<std::string, ErrorKind> error_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    return {err.what(), err.kind()};
  } catch (...) {
    ADD_FAILURE() << "not a parpat::Error";
  }
  return {};
}

inline void expect_every_rank_failed_alike(const std::vector<std::exception_ptr>& failed,
                                           const std::string& part) {
  ASSERT_TRUE(failed[0]) << "rank 0 did not fail";
  const auto first = error_of(failed[0]);
  EXPECT_NE(first.first.find(part), std::string::npos) << first.first;
  for (std::size_t r = 1; r < failed.size(); ++r) {
    ASSERT_TRUE(failed[r]) << "rank " << r << " did not fail";
    EXPECT_EQ(error_of(failed[r]), first) << "rank " << r;
  }
}

// `n` random values of `t`: floats in [−1, 1) with a NaN every 97 elements, bools a third true,
// integers of any bits, or with `span` in [−span, span] (unsigned: [0, span]).
inline std::vector<unsigned char> random_values(DType t, std::int64_t n, std::mt19937_64& rng,
                                                std::uint64_t span = 0) {
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(t));
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(out.data());
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = rng() % 3 == 0;
      } else if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>(i % 97 == 5 ? NAN : u(rng));
      } else if (span == 0) {
        p[i] = static_cast<T>(rng());
      } else {
        const auto k = static_cast<std::int64_t>(rng() % (2 * span + 1));
        p[i] = static_cast<T>(std::is_signed_v<T> ? k - static_cast<std::int64_t>(span) : k / 2);
      }
    }
  });
  return out;
}

// Whether two results are the same to the bit: dtype, shape, values and indices.
inline bool same_bits(const ReduceResult& a, const ReduceResult& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.values.size() != b.values.size() ||
      a.indices != b.indices)
    return false;
  for (std::size_t k = 0; k < a.values.size(); ++k)
    if (std::memcmp(&a.values[k].f, &b.values[k].f, sizeof(double)) ||
        a.values[k].i != b.values[k].i || a.values[k].u != b.values[k].u)
      return false;
  return true;
}

// Every rank's histogram is `want`, exactly: counts, outliers and bins.
inline void expect_histograms(const std::vector<HistogramResult>& got,
                              const HistogramResult& want) {
  for (const auto& g : got) {
    EXPECT_EQ(g.counts, want.counts);
    EXPECT_EQ(g.underflow, want.underflow);
    EXPECT_EQ(g.overflow, want.overflow);
    EXPECT_EQ(g.nan, want.nan);
    EXPECT_EQ(g.bins.lo, want.bins.lo);
    EXPECT_EQ(g.bins.hi, want.bins.hi);
    EXPECT_EQ(g.bins.count, want.bins.count);
  }
}

}  // namespace parpat::test
