// Resident data over ranks (parpat/distributed.hpp: reduce and histogram of each rank's part of
// one array) on thread communicators and every device: 1 to 4 ranks, parts of unequal lengths
// and empty ones, give the in-memory answer of the whole array (integers, indices and counts
// exactly, floats within the accuracy contract) with the same bits on every rank; parts that do
// not fit together, or calls that differ, stop every rank alike.
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include "distributed_support.hpp"
#include "parpat/distributed.hpp"
#include "reduce/verify.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

// Where each rank's part of `length` rows along axis 0 starts: unequal parts, and with 3 ranks
// an empty one in the middle.
std::vector<std::int64_t> part_starts(std::int64_t length, int ranks) {
  std::vector<std::int64_t> starts;
  for (int r = 0; r <= ranks; ++r)
    starts.push_back(length * r * r / (ranks * ranks));
  if (ranks == 3) starts[2] = starts[1];
  return starts;
}

// Runs `body(comm, part)` on each rank's part of the whole array `host` of `shape`.
template <class Body>
std::vector<std::exception_ptr> on_parts(const Device& device, DType t,
                                         const std::vector<std::int64_t>& shape,
                                         const std::vector<unsigned char>& host, int ranks,
                                         Body body) {
  const auto starts = part_starts(shape[0], ranks);
  std::size_t row_bytes = dtype_size(t);
  for (std::size_t d = 1; d < shape.size(); ++d)
    row_bytes *= static_cast<std::size_t>(shape[d]);
  return on_ranks(ranks, [&](Communicator& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    std::vector<std::int64_t> part_shape = shape;
    part_shape[0] = starts[r + 1] - starts[r];
    body(comm, Array::from_host(device, t, part_shape,
                                host.data() + static_cast<std::size_t>(starts[r]) * row_bytes));
  });
}

class ResidentTest : public ::testing::TestWithParam<Device> {
 protected:
  const Device& device() const { return GetParam(); }
};

std::string device_test_name(const ::testing::TestParamInfo<Device>& info) {
  return device_name(info.param);
}

TEST_P(ResidentTest, ReduceOfPartsIsTheReduceOfTheWhole) {
  std::mt19937_64 rng(run_seed());
  const std::vector<std::vector<std::int64_t>> shapes = {{1025}, {9, 333}, {5, 4, 3, 7}};
  const ReduceOp ops[] = {ReduceOp::sum, ReduceOp::nansum, ReduceOp::max,          ReduceOp::argmax,
                          ReduceOp::var, ReduceOp::nanmin, ReduceOp::count_nonzero};
  for (DType t : {DType::int16, DType::int64, DType::float32, DType::float64})
    for (const auto& shape : shapes) {
      std::int64_t n = 1;
      for (auto d : shape)
        n *= d;
      const auto host = random_values(t, n, rng, 100);
      const Array whole = Array::from_host(device(), t, shape, host.data());
      std::vector<std::optional<std::vector<int>>> axes_forms = {std::nullopt};
      if (shape.size() > 1) axes_forms.push_back(std::vector<int>{0});
      if (shape.size() > 1) axes_forms.push_back(std::vector<int>{-1});
      if (shape.size() == 4) axes_forms.push_back(std::vector<int>{1, 2, 3});
      for (ReduceOp op : ops)
        for (const auto& axes : axes_forms) {
          if (is_arg_op(op) && axes && axes->size() > 1) continue;
          ReduceOptions o;
          o.op = op;
          o.axes = axes;
          ReduceResult want;
          try {
            want = reduce(whole, o);
          } catch (const Error&) {
            continue;  // an all-NaN slice of a nan op: numpy's error, covered elsewhere
          }
          const std::int64_t extent =
              want.values.empty()
                  ? 1
                  : n / std::max<std::int64_t>(1, static_cast<std::int64_t>(want.values.size()));
          for (int ranks : {1, 2, 3, 4}) {
            SCOPED_TRACE(std::string(reduce_op_name(op)) + " of " + dtype_name(t) + ", " +
                         std::to_string(shape.size()) + "-D, axes " +
                         (axes ? std::to_string(axes->front()) + "…" : "None") + ", " +
                         std::to_string(ranks) + " ranks, seed " + std::to_string(run_seed()));
            std::vector<ReduceResult> got(static_cast<std::size_t>(ranks));
            auto failed = on_parts(
                device(), t, shape, host, ranks, [&](Communicator& comm, const Array& part) {
                  got[static_cast<std::size_t>(comm.rank())] = reduce(part, comm, o);
                });
            for (auto& f : failed)
              if (f) ADD_FAILURE() << error_of(f).first;
            if (HasFailure()) return;
            for (int r = 1; r < ranks; ++r)
              EXPECT_TRUE(same_bits(got[0], got[static_cast<std::size_t>(r)])) << "rank " << r;
            EXPECT_EQ(got[0].shape, want.shape);
            EXPECT_EQ(got[0].indices, want.indices);
            ASSERT_EQ(got[0].values.size(), want.values.size());
            for (std::size_t k = 0; k < want.values.size(); ++k) {
              const std::string why =
                  detail::reduce_mismatch(want.values[k], got[0].values[k], op, extent,
                                          is_float(t) ? static_cast<double>(extent) : 0.0);
              EXPECT_TRUE(why.empty()) << "output " << k << ": " << why;
            }
            if (HasFailure()) return;
          }
        }
    }
}

TEST_P(ResidentTest, HistogramOfPartsIsTheHistogramOfTheWhole) {
  std::mt19937_64 rng(run_seed() + 1);
  for (DType t : {DType::uint8, DType::int32, DType::float32}) {
    const std::vector<std::int64_t> shape = {1001, 3};
    const auto host = random_values(t, 3003, rng, 100);
    const Array whole = Array::from_host(device(), t, shape, host.data());
    std::vector<HistogramBins> forms = {HistogramBins::even(64, -0.5, 0.5),
                                        HistogramBins::explicit_edges({-100, -0.25, 0, 60, 250})};
    if (!is_float(t)) forms.push_back(HistogramBins::even(37));  // the range from every rank
    if (!is_float(t)) forms.push_back(HistogramBins::per_value());
    for (const HistogramBins& bins : forms) {
      const HistogramResult want = histogram(whole, bins);
      for (int ranks : {1, 2, 3, 4}) {
        SCOPED_TRACE(std::string(dtype_name(t)) + ", " + std::to_string(want.bins.count) +
                     " bins, " + std::to_string(ranks) + " ranks");
        std::vector<HistogramResult> got(static_cast<std::size_t>(ranks));
        auto failed =
            on_parts(device(), t, shape, host, ranks, [&](Communicator& comm, const Array& part) {
              got[static_cast<std::size_t>(comm.rank())] = histogram(part, comm, bins);
            });
        for (auto& f : failed)
          if (f) ADD_FAILURE() << error_of(f).first;
        expect_histograms(got, want);
        if (HasFailure()) return;
      }
    }
  }
}

// Plans made on one batch of parts and run on the next ones give the one-shot answers for each
// batch (a histogram without a range keeps the range of the batch it was made on); a part of
// another shape stops every rank alike.
TEST_P(ResidentTest, PlansRunOnNewPartsGiveTheOneShotAnswers) {
  std::mt19937_64 rng(run_seed() + 2);
  const std::vector<std::int64_t> shape = {999, 4};
  const int ranks = 3;
  const auto starts = part_starts(shape[0], ranks);
  std::vector<std::vector<unsigned char>> batches;
  for (int k = 0; k < 3; ++k) {  // without NaN, so that the histogram may find its range
    batches.push_back(random_values(DType::float32, 999 * 4, rng));
    auto* v = reinterpret_cast<float*>(batches.back().data());
    for (int i = 0; i < 999 * 4; ++i)
      if (std::isnan(v[i])) v[i] = 0.25f * static_cast<float>(k);
  }
  const Array first = Array::from_host(device(), DType::float32, shape, batches[0].data());
  const HistogramBins no_range = HistogramBins::even(50);
  const HistogramResult first_bins = histogram(first, no_range);
  ReduceOptions argmax;
  argmax.op = ReduceOp::argmax;
  argmax.axes = std::vector<int>{0};
  auto part_of = [&](const std::vector<unsigned char>& batch, std::size_t r) {
    return Array::from_host(device(), DType::float32, {starts[r + 1] - starts[r], shape[1]},
                            batch.data() + starts[r] * shape[1] * sizeof(float));
  };
  std::vector<std::vector<ReduceResult>> sums(ranks), args(ranks);
  std::vector<std::vector<HistogramResult>> counts(ranks);
  auto failed = on_ranks(ranks, [&](Communicator& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    RankReducer sum(part_of(batches[0], r), comm, {ReduceOp::nansum});
    RankReducer arg(part_of(batches[0], r), comm, argmax);
    RankHistogrammer count(part_of(batches[0], r), comm, no_range);
    HistogramResult kept;  // one result, its memory reused by every run
    for (const auto& batch : batches) {
      const Array part = part_of(batch, r);
      sums[r].push_back(sum.run(part));
      args[r].push_back(arg.run(part));
      count.run(part, kept);
      counts[r].push_back(kept);
    }
  });
  for (auto& f : failed)
    if (f) ADD_FAILURE() << error_of(f).first;
  for (std::size_t k = 0; k < batches.size(); ++k) {
    SCOPED_TRACE("batch " + std::to_string(k));
    const Array whole = Array::from_host(device(), DType::float32, shape, batches[k].data());
    const double want_sum = reduce(whole, {ReduceOp::nansum}).values.at(0).f;
    const ReduceResult want_arg = reduce(whole, argmax);
    const HistogramResult want_counts =
        histogram(whole, HistogramBins::even(50, first_bins.bins.lo, first_bins.bins.hi));
    // Both answers are float32 sums of the same values in their own orders: each within
    // eps · Σ|x| of the exact sum (the forward bound of a sum), whatever cancels.
    const auto* values = reinterpret_cast<const float*>(batches[k].data());
    double magnitude = 0;
    for (int i = 0; i < 999 * 4; ++i)
      if (!std::isnan(values[i])) magnitude += std::abs(values[i]);
    std::vector<HistogramResult> batch_counts;
    for (int r = 0; r < ranks; ++r) {
      EXPECT_NEAR(sums[r].at(k).values.at(0).f, want_sum,
                  2 * std::numeric_limits<float>::epsilon() * magnitude);
      EXPECT_EQ(args[r].at(k).indices, want_arg.indices);
      EXPECT_EQ(args[r].at(k).shape, want_arg.shape);
      EXPECT_TRUE(same_bits(sums[r].at(k), sums[0].at(k)));
      batch_counts.push_back(counts[r].at(k));
    }
    expect_histograms(batch_counts, want_counts);
  }
  failed = on_ranks(ranks, [&](Communicator& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    RankHistogrammer count(part_of(batches[0], r), comm, HistogramBins::even(8, -1, 1));
    count.run(r == 1 ? Array(device(), DType::float32, {2, 4}) : part_of(batches[1], r));
  });
  expect_every_rank_failed_alike(failed, "a rank plan runs on parts of the dtype, shape");
}

INSTANTIATE_TEST_SUITE_P(Devices, ResidentTest, ::testing::ValuesIn(devices()), device_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ResidentTest);

TEST(ResidentFaults, PartsThatDoNotFitOrCallsThatDifferStopEveryRank) {
  const Device cpu = Device::open(Backend::cpu);
  std::vector<float> v(1000, 0.5f);
  auto failed = on_ranks(2, [&](Communicator& comm) {
    const Array part =
        Array::from_host(cpu, DType::float32, {10, comm.rank() == 0 ? 10 : 20}, v.data());
    reduce(part, comm, {ReduceOp::sum});
  });
  expect_every_rank_failed_alike(failed, "rank 1 was given another call than rank 0");
  failed = on_ranks(2, [&](Communicator& comm) {
    const Array part = Array::from_host(cpu, DType::float32, {10, 10}, v.data());
    reduce(part, comm, {comm.rank() == 0 ? ReduceOp::sum : ReduceOp::max});
  });
  expect_every_rank_failed_alike(failed, "rank 1 was given another call than rank 0");
  failed = on_ranks(2, [&](Communicator& comm) {
    const Array part = Array::from_host(cpu, DType::float32, {5, 10}, v.data(), 20);
    histogram(part, comm, HistogramBins::even(4, 0, 1));
  });
  expect_every_rank_failed_alike(failed, "contiguous");
  failed = on_ranks(3, [&](Communicator& comm) {
    const Array part = Array::from_host(cpu, DType::float32, {2, 5, 4}, v.data());
    ReduceOptions o;
    o.axes = std::vector<int>{0, 2};
    reduce(part, comm, o);
  });
  expect_every_rank_failed_alike(failed, "interleave");
  failed = on_ranks(3, [&](Communicator& comm) {
    const Array part(cpu, DType::int32, {0, 4});
    EXPECT_EQ(reduce(part, comm, {ReduceOp::sum}).values.at(0).i, 0);
    EXPECT_EQ(histogram(part, comm, HistogramBins::even(4)).counts,
              std::vector<std::uint64_t>(4, 0));
    reduce(part, comm, {ReduceOp::max});  // numpy: zero-size array
  });
  expect_every_rank_failed_alike(failed, "zero-size");
}

// One rank per CUDA device of this machine: each device's plain call gives the same bits, and the
// parts spread over the devices give the one-device answer.
TEST(ResidentOnDevices, PartsOnEveryCudaDeviceGiveTheOneDeviceAnswer) {
  const std::vector<Device> gpus = cuda_devices();
  if (gpus.size() < 2) GTEST_SKIP() << "needs two CUDA devices";
  std::mt19937_64 rng(run_seed());
  const std::int64_t n = (std::int64_t{1} << 20) + 3;
  const auto host = random_values(DType::float32, n, rng);
  const auto bins = HistogramBins::even(1000, -1, 1);
  std::vector<ReduceResult> alone;
  for (const Device& d : gpus) {
    const Array whole = Array::from_host(d, DType::float32, {n}, host.data());
    alone.push_back(reduce(whole, {ReduceOp::nansum}));
    EXPECT_TRUE(same_bits(alone.back(), alone.front())) << d.label();
  }
  const HistogramResult want =
      histogram(Array::from_host(gpus[0], DType::float32, {n}, host.data()), bins);
  const auto starts = part_starts(n, static_cast<int>(gpus.size()));
  std::vector<ReduceResult> sums(gpus.size());
  std::vector<HistogramResult> histograms(gpus.size());
  auto failed = on_ranks(static_cast<int>(gpus.size()), [&](Communicator& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    const Array part = Array::from_host(gpus[r], DType::float32, {starts[r + 1] - starts[r]},
                                        host.data() + starts[r] * sizeof(float));
    sums[r] = reduce(part, comm, {ReduceOp::nansum});
    histograms[r] = histogram(part, comm, bins);
  });
  for (auto& f : failed)
    if (f) ADD_FAILURE() << error_of(f).first;
  const double want_sum = alone.front().values.at(0).f;
  for (const auto& got : sums)
    EXPECT_NEAR(got.values.at(0).f, want_sum, 1e-5 * static_cast<double>(n));
  expect_histograms(histograms, want);
}

}  // namespace
}  // namespace parpat::test
