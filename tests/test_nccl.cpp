// The NCCL communicators: what they refuse (every machine), and on this machine's CUDA devices,
// when NCCL loads, their collectives from host and device memory, the resident reduce, histogram
// and pairwise over them against the threads' ranks and the one-device call, and a rank that
// stops.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>

#include "distributed_support.hpp"
#include "parpat/array.hpp"
#include "parpat/distributed.hpp"
#include "parpat/pairwise.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

using Comms = std::vector<std::shared_ptr<Communicator>>;

// NCCL's communicators over `devices`, or why there are none (the test then skips).
Comms nccl_over(const std::vector<Device>& devices, std::string& why, double timeout = 120) {
  try {
    return nccl_communicators(devices, timeout);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::unsupported) throw;
    why = e.what();
    return {};
  }
}

// The device sets to try: the first GPU alone and, when there are more, all of them.
std::vector<std::vector<Device>> device_sets() {
  const auto all = cuda_devices();
  std::vector<std::vector<Device>> sets;
  if (!all.empty()) sets.push_back({all[0]});
  if (all.size() > 1) sets.push_back(all);
  return sets;
}

TEST(NcclCommunicators, RefuseWhatTheyCannotJoin) {
  const Device cpu = Device::open(Backend::cpu);
  EXPECT_THROW(nccl_communicators({}), Error);
  try {
    nccl_communicators({cpu});
    ADD_FAILURE() << "a CPU rank was taken";
  } catch (const Error& e) {
    // Built with NCCL: not a CUDA device; built without: no NCCL at all.
    EXPECT_TRUE(e.kind() == ErrorKind::invalid_argument || e.kind() == ErrorKind::unsupported);
  }
  // What NCCL cannot join runs over threads.
  const Comms comms = device_communicators({cpu, cpu});
  ASSERT_EQ(comms.size(), 2u);
  EXPECT_EQ(comms[0]->engine(), "threads");
  EXPECT_FALSE(comms[0]->has_device_collectives());
  const auto gpus = cuda_devices();
  if (gpus.empty()) return;
  try {
    nccl_communicators({gpus[0], gpus[0]});
    ADD_FAILURE() << "one GPU was taken twice";
  } catch (const Error& e) {
    EXPECT_TRUE(e.kind() == ErrorKind::invalid_argument || e.kind() == ErrorKind::unsupported);
  }
  EXPECT_EQ(device_communicators({gpus[0], gpus[0]})[0]->engine(), "threads");
}

TEST(NcclCommunicators, BootstrappedRanksRefuseWhatTheyCannotJoin) {
  const Device cpu = Device::open(Backend::cpu);
  const auto boots = thread_communicators(2, 60);
  auto failed = run_ranks(boots, [&](Communicator& comm) {
    nccl_communicator(cpu, boots[static_cast<std::size_t>(comm.rank())]);
  });
  expect_every_rank_failed_alike(failed, "NCCL");
}

// One NCCL rank per thread of a thread communicator, as MPI ranks across machines would be: the
// ranks' sums and gathers from device memory, and host collectives through the bootstrap.
TEST(NcclCommunicators, BootstrappedRanksJoinOneClique) {
  const auto gpus = cuda_devices();
  if (gpus.empty()) GTEST_SKIP() << "no CUDA device";
  const auto boots = thread_communicators(static_cast<int>(gpus.size()), 120);
  const std::size_t count = 4099;
  auto failed = run_ranks(boots, [&](Communicator& boot) {
    const auto r = static_cast<std::size_t>(boot.rank());
    std::shared_ptr<Communicator> comm;
    try {
      comm = nccl_communicator(gpus[r], boots[r], 120);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::unsupported) return;  // no NCCL here
      throw;
    }
    EXPECT_EQ(comm->engine(), "nccl");
    EXPECT_EQ(comm->rank(), boot.rank());
    std::vector<std::uint64_t> values(count, r + 1);
    Buffer on_device(gpus[r], count * sizeof(std::uint64_t));
    on_device.upload(values.data(), on_device.bytes());
    ASSERT_TRUE(
        comm->all_reduce_sum_on_device(static_cast<std::uint64_t*>(on_device.handle()), count));
    on_device.download(values.data(), on_device.bytes());
    const std::uint64_t size = gpus.size();
    for (auto v : values)
      ASSERT_EQ(v, size * (size + 1) / 2);
    const std::int64_t mine = static_cast<std::int64_t>(r) * 10;
    std::vector<std::int64_t> all(gpus.size());
    comm->all_gather(&mine, sizeof mine, all.data());
    for (std::size_t q = 0; q < all.size(); ++q)
      EXPECT_EQ(all[q], static_cast<std::int64_t>(q) * 10);
  });
  for (auto& f : failed)
    if (f) ADD_FAILURE() << error_of(f).first;
}

TEST(NcclCommunicators, CollectivesFromHostAndDeviceMemory) {
  const auto sets = device_sets();
  if (sets.empty()) GTEST_SKIP() << "no CUDA device";
  for (const auto& devices : sets) {
    std::string why;
    const Comms comms = nccl_over(devices, why);
    if (comms.empty()) GTEST_SKIP() << why;
    const auto size = static_cast<std::uint64_t>(devices.size());
    const std::size_t count = 65539, bytes = 1001;
    auto failed = run_ranks(comms, [&](Communicator& comm) {
      EXPECT_EQ(comm.engine(), "nccl");
      const auto rank = static_cast<std::uint64_t>(comm.rank());
      std::vector<unsigned char> mine(bytes);
      for (std::size_t k = 0; k < bytes; ++k)
        mine[k] = static_cast<unsigned char>(rank * 31 + k);
      const auto all = comm.all_gather(mine.data(), bytes);
      for (std::uint64_t r = 0; r < size; ++r)
        for (std::size_t k = 0; k < bytes; k += 97)
          ASSERT_EQ(all[r * bytes + k], static_cast<unsigned char>(r * 31 + k));
      std::vector<std::uint64_t> values(count);
      for (std::size_t k = 0; k < count; ++k)
        values[k] = (rank + 1) * k + (std::uint64_t{1} << 40);
      std::vector<std::uint64_t> on_host = values;
      comm.all_reduce_sum(on_host.data(), count);
      Buffer on_device(devices[rank], count * sizeof(std::uint64_t));
      on_device.upload(values.data(), count * sizeof(std::uint64_t));
      ASSERT_TRUE(
          comm.all_reduce_sum_on_device(static_cast<std::uint64_t*>(on_device.handle()), count));
      std::vector<std::uint64_t> from_device(count);
      on_device.download(from_device.data(), count * sizeof(std::uint64_t));
      for (std::size_t k = 0; k < count; ++k) {
        const std::uint64_t want = size * (size + 1) / 2 * k + size * (std::uint64_t{1} << 40);
        ASSERT_EQ(on_host[k], want) << k;
        ASSERT_EQ(from_device[k], want) << k;
      }
      ASSERT_TRUE(comm.has_device_collectives());
      Buffer mine_on_device(devices[rank], bytes), all_on_device(devices[rank], bytes * size);
      mine_on_device.upload(mine.data(), bytes);
      ASSERT_TRUE(
          comm.all_gather_on_device(mine_on_device.handle(), bytes, all_on_device.handle()));
      std::vector<unsigned char> gathered(bytes * size);
      all_on_device.download(gathered.data(), gathered.size());
      EXPECT_EQ(gathered, all);
    });
    for (auto& f : failed)
      if (f) ADD_FAILURE() << error_of(f).first;
  }
}

TEST(NcclCommunicators, ResidentReduceAndHistogramAgreeWithThreadsAndOneDevice) {
  const auto sets = device_sets();
  if (sets.empty()) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(run_seed());
  const std::int64_t n = (std::int64_t{1} << 20) + 3;
  const auto host = random_values(DType::float32, n, rng);
  const Array whole = Array::from_host(sets[0][0], DType::float32, {n}, host.data());
  const auto bins = HistogramBins::even(16384, -1, 1);  // counts large enough for NCCL
  const HistogramResult want_histogram = histogram(whole, bins);
  const ReduceOptions sum{ReduceOp::nansum, Axis::all, {}};
  const double want_sum = reduce(whole, sum).values.at(0).f;
  for (const auto& devices : sets) {
    std::string why;
    const Comms nccl = nccl_over(devices, why);
    if (nccl.empty()) GTEST_SKIP() << why;
    const std::size_t ranks = devices.size();
    std::vector<std::int64_t> edges{0};  // unequal parts: the first is the smallest
    for (std::size_t r = 1; r < ranks; ++r)
      edges.push_back(n / 3 + (n - n / 3) * static_cast<std::int64_t>(r - 1) /
                                  static_cast<std::int64_t>(ranks - 1));
    edges.push_back(n);
    std::vector<Array> parts;
    for (std::size_t r = 0; r < ranks; ++r)
      parts.push_back(Array::from_host(devices[r], DType::float32, {edges[r + 1] - edges[r]},
                                       host.data() + edges[r] * sizeof(float)));
    std::vector<ReduceResult> over_nccl(ranks), over_threads(ranks);
    std::vector<HistogramResult> histograms(ranks);
    auto run = [&](const Comms& comms, std::vector<ReduceResult>& sums, bool with_histogram) {
      auto failed = run_ranks(comms, [&](Communicator& comm) {
        const auto r = static_cast<std::size_t>(comm.rank());
        sums[r] = reduce(parts[r], comm, sum);
        if (with_histogram) histograms[r] = histogram(parts[r], comm, bins);
      });
      for (auto& f : failed)
        if (f) ADD_FAILURE() << error_of(f).first;
    };
    SCOPED_TRACE(std::to_string(ranks) + " rank(s)");
    run(thread_communicators(static_cast<int>(ranks)), over_threads, true);
    {
      SCOPED_TRACE("over threads");
      expect_histograms(histograms, want_histogram);
    }
    for (std::size_t r = 0; r < ranks; ++r) {  // each part alone, on its device
      SCOPED_TRACE("part " + std::to_string(r) + " alone");
      const Array whole_part = Array::from_host(sets[0][0], DType::float32, {parts[r].size()},
                                                host.data() + edges[r] * sizeof(float));
      expect_histograms({histogram(parts[r], bins)}, histogram(whole_part, bins));
    }
    run(nccl, over_nccl, true);
    SCOPED_TRACE("over NCCL");
    expect_histograms(histograms, want_histogram);
    for (std::size_t r = 0; r < ranks; ++r) {
      EXPECT_TRUE(same_bits(over_nccl[r], over_threads[0])) << "rank " << r;
      EXPECT_NEAR(over_nccl[r].values.at(0).f, want_sum, 1e-4 * std::sqrt(double(n)));
    }
    // Pairwise, split x over the parts' first values (C gathered between the devices under
    // NCCL): every rank's C has the bits of the one-device call on each part.
    std::vector<float> a(3001), b(257);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : a)
      v = u(rng);
    for (auto& v : b)
      v = u(rng);
    PairwiseOptions gaussian;
    gaussian.kernel = PairwiseKernel::gaussian;
    std::vector<std::int64_t> a_edges{0};
    for (std::size_t r = 1; r <= ranks; ++r)
      a_edges.push_back(static_cast<std::int64_t>(a.size() * r * r / (ranks * ranks)));
    std::vector<float> want_c;
    for (std::size_t r = 0; r < ranks; ++r) {
      const auto part = Array::from_host(devices[r], DType::float32, {a_edges[r + 1] - a_edges[r]},
                                         a.data() + a_edges[r]);
      const auto c = pairwise(part, Array::from_vector(devices[r], b), gaussian).c;
      want_c.insert(want_c.end(), c.begin(), c.end());
    }
    std::vector<std::vector<float>> got_c(ranks), planned_c(ranks);
    auto failed = run_ranks(nccl, [&](Communicator& comm) {
      const auto r = static_cast<std::size_t>(comm.rank());
      const auto part = Array::from_host(devices[r], DType::float32, {a_edges[r + 1] - a_edges[r]},
                                         a.data() + a_edges[r]);
      const Array bd = Array::from_vector(devices[r], b);
      got_c[r] = pairwise(part, bd, comm, gaussian).c;
      RankPairwise plan(part, bd, comm, gaussian);
      plan.run(part, bd);
      planned_c[r] = plan.run(part, bd).c;  // the second run through the same buffers
    });
    for (auto& f : failed)
      if (f) ADD_FAILURE() << error_of(f).first;
    for (std::size_t r = 0; r < ranks; ++r) {
      EXPECT_EQ(got_c[r], want_c) << "rank " << r;
      EXPECT_EQ(planned_c[r], want_c) << "plan, rank " << r;
    }
  }
}

// A histogram plan over NCCL whose rank 0 holds an empty part, run twice: the on-device sum is
// in place, so that rank's zeros must be written again for every run.
TEST(NcclCommunicators, HistogramPlanWithAnEmptyPartRunsTwice) {
  const auto gpus = cuda_devices();
  if (gpus.size() < 2) GTEST_SKIP() << "needs two CUDA devices";
  std::string why;
  const Comms comms = nccl_over(gpus, why);
  if (comms.empty()) GTEST_SKIP() << why;
  std::mt19937_64 rng(run_seed());
  const std::int64_t n = 100003;
  const auto host = random_values(DType::float32, n, rng);
  const auto bins = HistogramBins::even(16384, -1, 1);
  const HistogramResult want =
      histogram(Array::from_host(gpus[0], DType::float32, {n}, host.data()), bins);
  std::vector<std::vector<HistogramResult>> got(gpus.size());
  auto failed = run_ranks(comms, [&](Communicator& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    const std::int64_t first =
        r == 0 ? 0
               : n * static_cast<std::int64_t>(r - 1) / static_cast<std::int64_t>(gpus.size() - 1);
    const std::int64_t last =
        r == 0 ? 0 : n * static_cast<std::int64_t>(r) / static_cast<std::int64_t>(gpus.size() - 1);
    const Array part = Array::from_host(gpus[r], DType::float32, {last - first},
                                        host.data() + first * sizeof(float));
    RankHistogrammer plan(part, comm, bins);
    got[r].push_back(plan.run(part));
    got[r].push_back(plan.run(part));
  });
  for (auto& f : failed)
    if (f) ADD_FAILURE() << error_of(f).first;
  for (int run = 0; run < 2; ++run) {
    std::vector<HistogramResult> each;
    for (const auto& g : got)
      if (g.size() == 2) each.push_back(g[static_cast<std::size_t>(run)]);
    SCOPED_TRACE("run " + std::to_string(run));
    expect_histograms(each, want);
  }
}

TEST(NcclCommunicators, ARankThatStopsMakesTheOthersThrowInTime) {
  const auto gpus = cuda_devices();
  if (gpus.size() < 2) GTEST_SKIP() << "needs two CUDA devices";
  std::string why;
  const Comms comms = nccl_over({gpus[0], gpus[1]}, why, 2.0);
  if (comms.empty()) GTEST_SKIP() << why;
  const auto start = std::chrono::steady_clock::now();
  Buffer counts(gpus[0], 1024 * sizeof(std::uint64_t));
  auto failed = run_ranks(comms, [&](Communicator& comm) {
    if (comm.rank() == 1) return;  // stops before the collective
    comm.all_reduce_sum_on_device(static_cast<std::uint64_t*>(counts.handle()), 1024);
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(failed[0]) << "rank 0 returned from a collective rank 1 never joined";
  try {
    std::rethrow_exception(failed[0]);
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "timeout") << e.what();
  }
  EXPECT_FALSE(failed[1]);
  EXPECT_LT(seconds, 30.0);
}

}  // namespace
}  // namespace parpat::test
