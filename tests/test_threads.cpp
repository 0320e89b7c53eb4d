// Thread safety (README, "Threads"): eight threads share one device, each with reduce, histogram
// and pairwise plans of its own, and run them many times on their own random inputs. Every answer
// must equal the host's (exactly for integer sums and counts, within the accuracy contract for
// the float pairwise sums). On OpenCL this fails if two plans share a kernel object, whose
// arguments another thread could set between a plan's setArg and its launch.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/pairwise.hpp"
#include "parpat/reduce.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 12;

// One thread's work: its plans, built on the shared device, and kRounds of fresh inputs each
// checked against the host. Returns the first mismatch, or an empty string.
std::string run_thread(const Device& device, std::uint64_t seed, int thread) {
  std::mt19937_64 rng(seed + static_cast<std::uint64_t>(thread) * 7919);
  // Sizes differ per thread, so a plan that ran another thread's launch would be noticed.
  const std::int64_t n = 50000 + 1013 * thread;
  const std::int64_t x = 257 + 31 * thread, y = 1021 + 17 * thread;

  Reducer sum(device, DType::int32, {n}, 0, {ReduceOp::sum});
  Reducer max(device, DType::int32, {n}, 0, {ReduceOp::max});
  const HistogramBins bins = HistogramBins::even(10, 0, 1000);
  Histogrammer histogram(device, DType::int32, n, bins);
  PairwiseOptions brute;
  brute.brute_force = true;  // the all-pairs kernel, whose arguments a shared kernel would mix
  Pairwise pairwise(device, x, y, brute);

  Buffer sum_out(device, sizeof(std::int64_t)), max_out(device, sizeof(std::int32_t));
  Buffer counts(device, static_cast<std::size_t>(histogram.slots()) * sizeof(std::uint64_t));
  Array a(device, DType::float32, {x}), b(device, DType::float32, {y}),
      c(device, DType::float32, {x});
  Array values(device, DType::int32, {n});

  std::vector<std::int32_t> host(static_cast<std::size_t>(n));
  std::vector<float> host_a(static_cast<std::size_t>(x)), host_b(static_cast<std::size_t>(y));
  std::uniform_int_distribution<std::int32_t> value(-50, 1049);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (int round = 0; round < kRounds; ++round) {
    std::int64_t expected_sum = 0;
    std::int32_t expected_max = INT32_MIN;
    std::vector<std::uint64_t> expected_counts(static_cast<std::size_t>(histogram.slots()), 0);
    for (auto& v : host) {
      v = value(rng);
      expected_sum += v;
      expected_max = std::max(expected_max, v);
      std::size_t slot = v < 0      ? 10
                         : v > 1000 ? 11
                                    : static_cast<std::size_t>(std::min(v / 100, 9));
      expected_counts[slot]++;
    }
    for (auto& v : host_a)
      v = unit(rng);
    double b_total = 0;
    for (auto& v : host_b) {
      v = unit(rng);
      b_total += v;
    }
    values.upload(host.data());
    a.upload(host_a.data());
    b.upload(host_b.data());
    sum.run(values, sum_out, Buffer());
    max.run(values, max_out, Buffer());
    histogram.run(values, counts);
    pairwise.run(a, b, c);

    std::int64_t got_sum = 0;
    std::int32_t got_max = 0;
    std::vector<std::uint64_t> got_counts(expected_counts.size());
    sum_out.download(&got_sum, sizeof got_sum);
    max_out.download(&got_max, sizeof got_max);
    counts.download(got_counts.data(), got_counts.size() * sizeof(std::uint64_t));
    std::vector<float> got_c = c.to_vector<float>();

    const std::string where =
        "thread " + std::to_string(thread) + ", round " + std::to_string(round);
    if (got_sum != expected_sum)
      return where + ": sum " + std::to_string(got_sum) + ", expected " +
             std::to_string(expected_sum);
    if (got_max != expected_max)
      return where + ": max " + std::to_string(got_max) + ", expected " +
             std::to_string(expected_max);
    if (got_counts != expected_counts) return where + ": histogram counts differ";
    for (std::int64_t i = 0; i < x; ++i) {
      double want = static_cast<double>(host_a[static_cast<std::size_t>(i)]) * b_total;
      double err = std::fabs(got_c[static_cast<std::size_t>(i)] - want);
      if (err > 1e-4 * std::max(1.0, std::fabs(want)))
        return where + ": pairwise C[" + std::to_string(i) + "] " +
               std::to_string(got_c[static_cast<std::size_t>(i)]) + ", expected " +
               std::to_string(want);
    }
  }
  return {};
}

class ThreadsTest : public ::testing::TestWithParam<Device> {};

TEST_P(ThreadsTest, EightThreadsOfPlansShareOneDevice) {
  const Device& device = GetParam();
  const std::uint64_t seed = run_seed();
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        failures[static_cast<std::size_t>(t)] = run_thread(device, seed, t);
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] =
            "thread " + std::to_string(t) + " threw: " + e.what();
      }
    });
  }
  for (auto& th : threads)
    th.join();
  for (const auto& f : failures)
    EXPECT_TRUE(f.empty()) << f << " (seed " << seed << ")";
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, ThreadsTest, ::testing::ValuesIn(devices()),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return device_name(info.param);
                         });

}  // namespace
}  // namespace parpat::test
