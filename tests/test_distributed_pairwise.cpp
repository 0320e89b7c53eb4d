// Distributed pairwise (parpat/distributed.hpp), of files and of resident parts of A, over thread
// communicators on every device: 1 to 4 ranks give the float64 reference within the pattern's
// tolerance, every rank the same whole C, and the same ranks the same bits twice; shares may be
// empty and chunks fall inside them; a bad or mismatched call stops every rank alike.
#include <cstring>
#include <random>

#include "distributed_support.hpp"
#include "pairwise/pairwise_internal.hpp"
#include "parpat/distributed.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

constexpr double kTolerance = 1e-4;

std::vector<float> uniform(std::int64_t n, std::mt19937_64& rng) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto& x : v)
    x = static_cast<float>(u(rng));
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class DistributedPairwiseTest : public ::testing::TestWithParam<Device> {
 protected:
  const Device& device() const { return GetParam(); }

  // Every rank's C over `size` ranks; expects all ranks' C to be the same bits and returns it.
  std::vector<float> over_ranks(int size, const std::vector<float>& a, const std::vector<float>& b,
                                const PairwiseOptions& options, std::size_t chunk) {
    std::vector<std::vector<float>> got(static_cast<std::size_t>(size));
    StreamOptions so;
    so.chunk_bytes = chunk;
    auto failed = on_ranks(size, [&](Communicator& comm) {
      Source as =
          Source::from_host(DType::float32, {static_cast<std::int64_t>(a.size())}, a.data());
      Source bs =
          Source::from_host(DType::float32, {static_cast<std::int64_t>(b.size())}, b.data());
      got[static_cast<std::size_t>(comm.rank())] = pairwise(as, bs, device(), comm, options, so).c;
    });
    for (auto& f : failed)
      if (f) ADD_FAILURE() << error_of(f).first;
    for (int r = 1; r < size; ++r)
      EXPECT_TRUE(same_bits(got[0], got[static_cast<std::size_t>(r)])) << "rank " << r;
    return got[0];
  }
};

std::string device_test_name(const ::testing::TestParamInfo<Device>& info) {
  return device_name(info.param);
}

TEST_P(DistributedPairwiseTest, RanksMatchTheReferenceWithTheSameBitsTwice) {
  std::mt19937_64 rng(run_seed());
  // Split x (X ≥ Y), split y (X < Y), X smaller than the ranks (split y with empty shares of
  // B), Y = 0 and X = Y = 1.
  const std::vector<std::pair<std::int64_t, std::int64_t>> sizes = {
      {2053, 1031}, {263, 4099}, {3, 10}, {7, 0}, {1, 1}};
  for (PairwiseKernel kernel : {PairwiseKernel::product, PairwiseKernel::gaussian})
    for (auto [x, y] : sizes) {
      PairwiseOptions options;
      options.kernel = kernel;
      options.h = 0.5;
      options.brute_force = true;
      auto a = uniform(x, rng), b = uniform(y, rng);
      detail::PairwiseProblem p;
      p.x = x;
      p.y = y;
      p.kernel = kernel;
      p.h = static_cast<float>(options.h);
      std::vector<double> expected(static_cast<std::size_t>(x)), magnitude(expected.size());
      detail::pairwise_reference(a.data(), b.data(), p, expected.data());
      detail::pairwise_magnitude(a.data(), b.data(), p, magnitude.data());
      const std::size_t chunk = 1024;  // several chunks of B inside each rank's share
      for (int size : {1, 2, 3, 4}) {
        SCOPED_TRACE(std::string(pairwise_kernel_name(kernel)) + " X=" + std::to_string(x) +
                     " Y=" + std::to_string(y) + ", " + std::to_string(size) + " ranks, split " +
                     pairwise_split_name(pairwise_split(x, y, size)) + ", seed " +
                     std::to_string(run_seed()));
        const std::vector<float> c = over_ranks(size, a, b, options, chunk);
        ASSERT_EQ(c.size(), static_cast<std::size_t>(x));
        EXPECT_LE(detail::pairwise_max_relative_error(c, expected, magnitude), kTolerance);
        EXPECT_TRUE(same_bits(c, over_ranks(size, a, b, options, chunk))) << "twice";
        if (HasFailure()) return;
      }
    }
}

// Resident parts of A (unequal, one empty with 3 ranks), B whole on every rank's device: the
// reference within the tolerance, every C[x] the bits of the one-device call over its part; a
// RankPairwise plan gives the one-shot bits on these parts and on the next batch of parts.
TEST_P(DistributedPairwiseTest, ResidentPartsOfAGiveTheWholeC) {
  std::mt19937_64 rng(run_seed() + 7);
  const auto a = uniform(3001, rng), b = uniform(517, rng), next_a = uniform(3001, rng);
  PairwiseOptions options;
  options.kernel = PairwiseKernel::gaussian;
  options.h = 0.5;
  detail::PairwiseProblem p;
  p.x = 3001;
  p.y = 517;
  p.kernel = options.kernel;
  p.h = 0.5f;
  std::vector<double> expected(a.size()), magnitude(a.size());
  detail::pairwise_reference(a.data(), b.data(), p, expected.data());
  detail::pairwise_magnitude(a.data(), b.data(), p, magnitude.data());
  for (int size : {1, 2, 3, 4}) {
    std::vector<std::int64_t> first;
    for (int r = 0; r <= size; ++r)
      first.push_back(3001 * r * r / (size * size));
    if (size == 3) first[2] = first[1];
    auto part_of = [&](const std::vector<float>& values, std::size_t r) {
      return Array::from_host(device(), DType::float32, {first[r + 1] - first[r]},
                              values.data() + first[r]);
    };
    // The one-device call over each part, the parts' C concatenated.
    auto alone = [&](const std::vector<float>& values) {
      std::vector<float> c;
      for (std::size_t r = 0; r < static_cast<std::size_t>(size); ++r) {
        if (first[r + 1] == first[r]) continue;
        const auto part_c =
            pairwise(part_of(values, r), Array::from_vector(device(), b), options).c;
        c.insert(c.end(), part_c.begin(), part_c.end());
      }
      return c;
    };
    std::vector<std::vector<float>> got(static_cast<std::size_t>(size)), planned(got.size()),
        planned_next(got.size());
    auto failed = on_ranks(size, [&](Communicator& comm) {
      const auto r = static_cast<std::size_t>(comm.rank());
      const Array bd = Array::from_vector(device(), b);
      got[r] = pairwise(part_of(a, r), bd, comm, options).c;
      RankPairwise plan(part_of(a, r), bd, comm, options);
      planned[r] = plan.run(part_of(a, r), bd).c;
      planned_next[r] = plan.run(part_of(next_a, r), bd).c;
    });
    for (auto& f : failed)
      if (f) ADD_FAILURE() << error_of(f).first;
    SCOPED_TRACE(std::to_string(size) + " ranks, seed " + std::to_string(run_seed()));
    const std::vector<float> whole = alone(a), whole_next = alone(next_a);
    for (std::size_t r = 0; r < got.size(); ++r) {
      EXPECT_TRUE(same_bits(got[r], whole)) << "rank " << r;
      EXPECT_TRUE(same_bits(planned[r], whole)) << "plan, rank " << r;
      EXPECT_TRUE(same_bits(planned_next[r], whole_next)) << "plan's next run, rank " << r;
    }
    EXPECT_LE(detail::pairwise_max_relative_error(got[0], expected, magnitude), kTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, DistributedPairwiseTest, ::testing::ValuesIn(devices()),
                         device_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DistributedPairwiseTest);

TEST(DistributedPairwiseSplit, TheLongerExtentWhileEveryRankHasAnX) {
  EXPECT_EQ(pairwise_split(1 << 21, 1 << 15, 2), PairwiseSplit::x);
  EXPECT_EQ(pairwise_split(1000, 1000, 4), PairwiseSplit::x);
  EXPECT_EQ(pairwise_split(1000, 1001, 4), PairwiseSplit::y);
  EXPECT_EQ(pairwise_split(3, 0, 4), PairwiseSplit::y);
}

TEST(DistributedPairwiseFaults, BadOrMismatchedCallsStopEveryRankAlike) {
  const Device cpu = Device::open(Backend::cpu);
  std::vector<float> v(100, 0.5f);
  auto failed = on_ranks(2, [&](Communicator& comm) {
    Source a = Source::from_host(DType::float32, {100}, v.data());
    Source b = Source::from_host(DType::float32, {100}, v.data());
    PairwiseOptions o;
    o.kernel = PairwiseKernel::gaussian;
    o.h = comm.rank() == 0 ? 1.0 : 2.0;
    pairwise(a, b, cpu, comm, o);
  });
  expect_every_rank_failed_alike(failed, "rank 1 was given another call than rank 0");
  EXPECT_EQ(error_of(failed[0]).second, ErrorKind::invalid_argument);
  failed = on_ranks(3, [&](Communicator& comm) {
    Source a = Source::from_host(DType::float32, {0}, v.data());
    Source b = Source::from_host(DType::float32, {100}, v.data());
    pairwise(a, b, cpu, comm);
  });
  expect_every_rank_failed_alike(failed, "X must be at least 1");
  failed = on_ranks(2, [&](Communicator& comm) {
    Source a = Source::from_host(DType::float32, {100}, v.data());
    Source b = Source::from_host(DType::int32, {50}, v.data());
    pairwise(a, b, cpu, comm);
  });
  expect_every_rank_failed_alike(failed, "1-D float32 B");
  failed = on_ranks(2, [&](Communicator& comm) {  // resident: B of another length on rank 1
    pairwise(Array::from_vector(cpu, v), Array(cpu, DType::float32, {comm.rank() == 0 ? 10 : 11}),
             comm);
  });
  expect_every_rank_failed_alike(failed, "rank 1 was given another call than rank 0");
  failed = on_ranks(2, [&](Communicator& comm) {
    pairwise(Array(cpu, DType::float32, {0}), Array::from_vector(cpu, v), comm);
  });
  expect_every_rank_failed_alike(failed, "X must be at least 1");
  failed = on_ranks(2, [&](Communicator& comm) {  // a plan run on a part of another length
    const Array b = Array::from_vector(cpu, v);
    RankPairwise plan(Array::from_vector(cpu, v), b, comm);
    plan.run(Array(cpu, DType::float32, {comm.rank() == 0 ? 100 : 99}), b);
  });
  expect_every_rank_failed_alike(failed, "the lengths (100, 100) and the device it was made for");
}

}  // namespace
}  // namespace parpat::test
