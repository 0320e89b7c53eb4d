// Histogram `fast` where the bins outgrow a block's shared memory (4- and 8-byte input past the
// passes): rows sorted into buckets (CUDA, and OpenCL under histogram.opencl.bucketed) against
// the CPU reference, and which forms read a view of one step in place.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "histogram_support.hpp"
#include "parpat/array.hpp"
#include "parpat/histogram.hpp"
#include "runtime/tuning.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

// GPU `fast` reads views of one step in place (StridedInputs checks their counts), but where it
// sorts rows into buckets (on OpenCL only under histogram.opencl.bucketed); the classic variants
// read dense input only.
TEST(HistogramFast, ReadsStepsButWhereItSortsIntoBuckets) {
  ScopedTuning tuning("histogram.opencl.bucketed=1");
  const std::int64_t n = std::int64_t{1} << 21;
  bool any = false;
  for (const auto& d : devices()) {
    if (d.backend() == Backend::cpu) continue;
    any = true;
    const auto& fast = detail::find_histogram_variant(d.backend(), "fast");
    const auto& privatized = detail::find_histogram_variant(d.backend(), "privatized");
    EXPECT_TRUE(fast.make(d, problem_of(DType::float32, n, HistogramBins::even(1024, 0, 1)))
                    ->reads_steps());
    EXPECT_TRUE(
        fast.make(d, problem_of(DType::uint8, n, HistogramBins::even(7, 0, 256)))->reads_steps());
    EXPECT_FALSE(fast.make(d, problem_of(DType::float32, n, HistogramBins::even(1 << 20, 0, 1)))
                     ->reads_steps());
    EXPECT_FALSE(privatized.make(d, problem_of(DType::float32, n, HistogramBins::even(1024, 0, 1)))
                     ->reads_steps());
  }
  if (!any) GTEST_SKIP() << "no GPU backend";
}

// The data of the large-bin tests, a kind by number: spread over the range and beyond it (NaN,
// both sides), all equal (tiles of one row), ascending (each tile in few buckets, a bucket's
// values in few tiles), most of it on one value, and 64 neighbouring values (a few rows, each
// with many values, in one bucket).
constexpr int kDataKinds = 5;
std::vector<unsigned char> large_bins_data(DType t, std::int64_t n, int kind, double lo, double hi,
                                           std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(lo - 50, hi + 50);
  std::uniform_int_distribution<int> near(0, 63);
  std::bernoulli_distribution hot(0.9);
  std::int64_t i = 0;
  return make_values(t, n + 1, [&]() -> double {
    ++i;
    if (kind == 1) return 17.0;
    if (kind == 2) return fit(t, lo - 20 + (hi - lo + 40) * double(i) / double(n));
    if (kind == 3 && hot(rng)) return 3.0;
    if (kind == 4) return 100.0 + near(rng);
    if (i % 1000 == 0 && is_float(t)) return std::nan("");
    return fit(t, u(rng));
  });
}

// `fast` on n values of each 4- and 8-byte dtype and data kind in `bins` bins, under `setting`,
// on every GPU; on CUDA the values start one element past a 16-byte boundary.
void expect_large_bins_match(const char* setting, std::int64_t n,
                             const std::vector<std::int64_t>& bin_counts) {
  std::vector<Device> gpus;
  for (const auto& d : devices())
    if (d.backend() != Backend::cpu) gpus.push_back(d);
  if (gpus.empty()) GTEST_SKIP() << "no GPU backend";
  std::mt19937_64 rng(run_seed() + 12);
  ScopedTuning tuning(setting);
  for (DType t : {DType::float32, DType::int32, DType::float64, DType::int64})
    for (std::int64_t bins : bin_counts) {
      const double lo = is_float(t) ? -1000.5 : -300000.5, hi = is_float(t) ? 2000.25 : 900000.25;
      for (int kind = 0; kind < kDataKinds; ++kind) {
        const auto host = large_bins_data(t, n, kind, lo, hi, rng);
        auto p = problem_of(t, n, HistogramBins::even(bins, lo, hi));
        std::vector<std::uint64_t> expected(static_cast<std::size_t>(p.slots()));
        const std::size_t size = dtype_size(t);
        detail::histogram_reference(host.data() + size, p, expected.data());
        for (const Device& gpu : gpus) {
          Array in = Array::from_host(gpu, t, {n}, host.data() + size);
          Array whole;  // CUDA: the values one element into an array, past a 16-byte boundary
          if (gpu.backend() == Backend::cuda) {
            whole = Array::from_host(gpu, t, {n + 1}, host.data());
            in = Array::view(Buffer::wrap(gpu, static_cast<char*>(whole.buffer().handle()) + size,
                                          std::size_t(n) * size),
                             t, {n});
          }
          HistogramResult r = histogram(in, HistogramBins::even(bins, lo, hi), {"fast"});
          r.counts.insert(r.counts.end(), {r.underflow, r.overflow, r.nan});
          EXPECT_EQ(r.counts, expected)
              << device_name(gpu) << ", " << setting << ": " << dtype_name(t) << " " << bins
              << " bins, data " << kind << ", seed " << run_seed();
        }
      }
    }
}

// `fast` sorting rows into buckets, on CUDA and OpenCL (histogram.opencl.bucketed;
// also a row a vector of one value, an item a compute unit): chunks of 1 MiB of rows, so an
// input takes several, and values after the last whole vector.
TEST(HistogramFast, BucketedRowsMatchTheReference) {
  for (const char* setting :
       {"histogram.fast.bucket_chunk_mib=1,histogram.opencl.bucketed=1",
        "histogram.fast.max_passes=0,histogram.fast.bucket_rows=1024,"
        "histogram.fast.bucket_chunk_mib=1,histogram.opencl.bucketed=1,"
        "histogram.opencl.bucket_rows=1024",
        "histogram.fast.bucket_chunk_mib=1,histogram.opencl.bucketed=1,"
        "histogram.opencl.bucket_same_vectors=2,histogram.opencl.bucket_groups_per_cu=1,"
        "histogram.opencl.bucket_items_per_cu=1"})
    expect_large_bins_match(setting, 1500007, {70001, 1 << 20});
}

}  // namespace
}  // namespace parpat::test
