// CPU weighted histograms. `serial` is the weighted reference. `parallel` gives each of the
// sections (a contiguous share of the input each, one per thread) a private float64 sum per
// slot, so no two threads add to one sum; the sections' sums are then added slot by slot in
// section order, so a run gives the same bits whatever the threads' timing. Slots come from the
// value → slot table for the 1- and 2-byte types and from the candidate-and-correct even rule
// or a binary search over the edges for the others. Where a private sum per slot for every
// thread would pass histogram.parallel.private_mib, fewer sections take the input.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "histogram/tuning.hpp"
#include "runtime/cpu/cpu_device.hpp"

namespace parpat::detail {

namespace {

class WeightedSerialKernel final : public WeightedHistogramKernel {
 public:
  explicit WeightedSerialKernel(const HistogramProblem& p)
      : p_(p), call_(static_cast<std::size_t>(p.slots())) {}
  void run(const Buffer& in, const Buffer& weights, const Buffer& sums, bool accumulate) override {
    auto* out = static_cast<double*>(sums.handle());
    weighted_histogram_reference(in.handle(), weights.handle(), p_,
                                 accumulate ? call_.data() : out);
    if (!accumulate) return;
    for (std::size_t s = 0; s < call_.size(); ++s)
      out[s] += call_[s];
  }

 private:
  HistogramProblem p_;
  std::vector<double> call_;  // one call's sums, to add to the caller's
};

template <class T, class W>
class WeightedParallelKernel final : public WeightedHistogramKernel {
 public:
  WeightedParallelKernel(const Device& d, const HistogramProblem& p)
      : cpu_(backend_cast<CpuDevice>(d)), p_(p), even_(p) {
    if constexpr (sizeof(T) <= 2) table_ = slot_table(p);
    const auto budget =
        static_cast<std::int64_t>(tuned<HistogramParallelPolicy>(d.info()).private_mib) << 20;
    const std::int64_t bytes = p.slots() * std::int64_t{sizeof(double)};
    sections_ = std::min<std::int64_t>(cpu_.threads(), p.n / 4096 + 1);
    sections_ = std::max<std::int64_t>(1, std::min(sections_, budget / bytes));
    private_.resize(static_cast<std::size_t>(sections_ * p.slots()));
  }

  void run(const Buffer& in, const Buffer& weights, const Buffer& sums, bool accumulate) override {
    const T* x = static_cast<const T*>(in.handle());
    const W* w = static_cast<const W*>(weights.handle());
    const std::int64_t slots = p_.slots();
    cpu_.parallel_for(sections_, [&](std::int64_t s) {
      double* mine = private_.data() + s * slots;
      std::fill(mine, mine + slots, 0.0);
      const std::int64_t begin = p_.n * s / sections_, end = p_.n * (s + 1) / sections_;
      for (std::int64_t i = begin; i < end; ++i)
        mine[slot(x[i])] += static_cast<double>(w[i]);
    });
    auto* out = static_cast<double*>(sums.handle());
    constexpr std::int64_t kMergeChunk = 1 << 14;
    cpu_.parallel_for((slots + kMergeChunk - 1) / kMergeChunk, [&](std::int64_t c) {
      const std::int64_t b = c * kMergeChunk, e = std::min(slots, b + kMergeChunk);
      for (std::int64_t i = b; i < e; ++i) {
        double sum = accumulate ? out[i] : 0.0;
        for (std::int64_t s = 0; s < sections_; ++s)
          sum += private_[static_cast<std::size_t>(s * slots + i)];
        out[i] = sum;
      }
    });
  }

 private:
  std::int64_t slot(T x) const {
    if constexpr (sizeof(T) <= 2) {
      return table_[x];
    } else if (p_.even) {
      return even_.slot(static_cast<double>(x));
    } else {
      return reference_slot(p_, static_cast<double>(x));
    }
  }

  CpuDevice& cpu_;
  HistogramProblem p_;
  EvenRule even_;
  std::vector<std::uint32_t> table_;  // 1- and 2-byte types: bits → slot
  std::int64_t sections_ = 1;
  std::vector<double> private_;  // sections × slots
};

}  // namespace

std::unique_ptr<WeightedHistogramKernel> make_cpu_weighted_serial(const Device&,
                                                                  const HistogramProblem& p) {
  return std::make_unique<WeightedSerialKernel>(p);
}

std::unique_ptr<WeightedHistogramKernel> make_cpu_weighted_parallel(const Device& d,
                                                                    const HistogramProblem& p) {
  return visit_dtype(p.dtype, [&](auto t) -> std::unique_ptr<WeightedHistogramKernel> {
    using T = kernel_element_t<decltype(t)>;
    if (p.weights == DType::float32)
      return std::make_unique<WeightedParallelKernel<T, float>>(d, p);
    return std::make_unique<WeightedParallelKernel<T, double>>(d, p);
  });
}

}  // namespace parpat::detail
