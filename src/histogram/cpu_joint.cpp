// CPU joint histogram (`parallel`): the samples are cut into sections, a contiguous share each,
// one per thread; each section counts (or sums the weights of) its samples into private slots,
// and the sections' slots are added slot by slot in section order, so weighted sums have the same
// bits on every run. A coordinate's bin comes from the candidate-and-correct even rule or a
// binary search over the edges; the slot is the bins' C-order index, or the last slot once a
// coordinate is outside. Where private slots for every thread would pass
// histogram.parallel.private_mib, fewer sections take the samples.
#include <algorithm>
#include <vector>

#include "histogram/joint.hpp"
#include "histogram/tuning.hpp"
#include "runtime/cpu/cpu_device.hpp"

namespace parpat::detail {

namespace {

template <class T, class V>
class CpuJoint final : public JointKernel {
 public:
  CpuJoint(const Device& d, const JointProblem& p) : cpu_(backend_cast<CpuDevice>(d)), p_(p) {
    for (const auto& axis : p.axes)  // explicit axes keep an unused rule of one bin over [0, 1]
      even_.emplace_back(axis.even ? axis : problem_of(p.dtype, 0, HistogramBins::even(1, 0, 1)));
    const auto budget =
        static_cast<std::int64_t>(tuned<HistogramParallelPolicy>(d.info()).private_mib) << 20;
    const std::int64_t bytes = p.slots() * std::int64_t{sizeof(V)};
    sections_ = std::min<std::int64_t>(cpu_.threads(), p.n / 4096 + 1);
    sections_ = std::max<std::int64_t>(1, std::min(sections_, budget / bytes));
    private_.resize(static_cast<std::size_t>(sections_ * p.slots()));
  }

  void run(const JointInput& in, const Buffer& out) override {
    std::vector<const T*> x;
    for (const Buffer* b : in.coordinates)
      x.push_back(static_cast<const T*>(b->handle()));
    const void* w = in.weights ? in.weights->handle() : nullptr;
    const std::int64_t slots = p_.slots();
    cpu_.parallel_for(sections_, [&](std::int64_t s) {
      V* mine = private_.data() + s * slots;
      std::fill(mine, mine + slots, V{0});
      const std::int64_t begin = p_.n * s / sections_, end = p_.n * (s + 1) / sections_;
      for (std::int64_t i = begin; i < end; ++i) {
        const std::int64_t slot = slot_of(x, i);
        if constexpr (std::is_same_v<V, double>) {
          mine[slot] += weight_at(w, p_.weights, i);
        } else {
          ++mine[slot];
        }
      }
    });
    auto* result = static_cast<V*>(out.handle());
    constexpr std::int64_t kMergeChunk = 1 << 14;
    cpu_.parallel_for((slots + kMergeChunk - 1) / kMergeChunk, [&](std::int64_t c) {
      const std::int64_t b = c * kMergeChunk, e = std::min(slots, b + kMergeChunk);
      for (std::int64_t i = b; i < e; ++i) {
        V sum{0};
        for (std::int64_t s = 0; s < sections_; ++s)
          sum += private_[static_cast<std::size_t>(s * slots + i)];
        result[i] = sum;
      }
    });
  }

 private:
  std::int64_t slot_of(const std::vector<const T*>& x, std::int64_t i) const {
    const int dims = p_.dims();
    const std::int64_t bins = p_.bins();
    std::int64_t slot = 0;
    for (int d = 0; d < dims; ++d) {
      const auto value =
          static_cast<double>(p_.interleaved ? x[0][i * dims + d] : x[std::size_t(d)][i]);
      const HistogramProblem& axis = p_.axes[std::size_t(d)];
      const std::int64_t s =
          axis.even ? even_[std::size_t(d)].slot(value) : reference_slot(axis, value);
      if (s >= axis.bins) return bins;
      slot = slot * axis.bins + s;
    }
    return slot;
  }

  CpuDevice& cpu_;
  JointProblem p_;
  std::vector<EvenRule> even_;
  std::int64_t sections_ = 1;
  std::vector<V> private_;  // sections × slots
};

}  // namespace

std::unique_ptr<JointKernel> make_cpu_joint(const Device& d, const JointProblem& p) {
  return visit_dtype(p.dtype, [&](auto t) -> std::unique_ptr<JointKernel> {
    using T = decltype(t);
    if (p.weighted) return std::make_unique<CpuJoint<T, double>>(d, p);
    return std::make_unique<CpuJoint<T, std::uint64_t>>(d, p);
  });
}

}  // namespace parpat::detail
