// Resident pairwise over the ranks, split x: each rank holds its part of A and all of B on its own
// device. A plan is made once by every rank:
//   agree on the call → all-gather the parts' lengths → [agreed step] this rank's Pairwise plan,
//   its slice of C (padded to the widest part) and the gathered C on the device (NCCL)
// and each run is one agreement and one gather: C over the part into the slice (a device error
// surfaces inside the agreed step), then the slices all-gathered between the devices and
// downloaded straight into C (NCCL), or downloaded and all-gathered through the host. The
// one-shot call makes a plan and runs it once.
#include <algorithm>
#include <numeric>
#include <optional>

#include "distributed/agreement.hpp"
#include "distributed/rank_steps.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "runtime/contiguous.hpp"
#include "runtime/device_impl.hpp"

namespace parpat {

namespace {

class ResidentPairwise {
 public:
  ResidentPairwise(const Array& a_part, const Array& b, Communicator& comm,
                   const PairwiseOptions& options)
      : comm_(comm),
        options_(options),
        device_(a_part.device()),
        length_(a_part.size()),
        b_length_(b.size()),
        through_devices_(comm.has_device_collectives()) {
    const std::string call =
        detail::pairwise_call_text(options) + " B " + std::to_string(b_length_);
    detail::step_then_agree(
        comm,
        [&] {
          check_vectors(a_part, b);
          if (through_devices_ && device_.backend() != Backend::cuda)
            throw_invalid("a rank of an NCCL communicator holds its part on its CUDA device, not " +
                          device_.label());
        },
        detail::signature_of(call));
    lengths_.resize(static_cast<std::size_t>(comm.size()));
    comm.all_gather(&length_, sizeof length_, lengths_.data());
    total_ = std::accumulate(lengths_.begin(), lengths_.end(), std::int64_t{0});
    if (total_ == 0) throw_invalid("pairwise: A is empty on every rank, X must be at least 1");
    widest_ = *std::max_element(lengths_.begin(), lengths_.end());
    // Every allocation of this rank shows inside the step, where the ranks agree.
    detail::step_then_agree(comm, [&] {
      slice_ = Buffer(device_, static_cast<std::size_t>(widest_) * sizeof(float));
      if (length_ < widest_) {  // the padding travels too: make it defined
        const std::vector<float> zeros(static_cast<std::size_t>(widest_));
        slice_.upload(zeros.data(), slice_.bytes());
      }
      if (through_devices_) gathered_ = Buffer(device_, slice_.bytes() * lengths_.size());
      if (length_) plan_.emplace(device_, length_, b_length_, options);
    });
  }

  // C (X floats) into `c`, host memory of the caller's.
  double run(const Array& a_part, const Array& b, float* c) {
    double kernel_ms = 0;
    detail::step_then_agree(comm_, [&] {
      check_vectors(a_part, b);
      if (a_part.size() != length_ || b.size() != b_length_ ||
          a_part.device().shared_impl() != device_.shared_impl())
        throw_invalid("a rank pairwise plan runs on parts of A and B of the lengths (" +
                      std::to_string(length_) + ", " + std::to_string(b_length_) +
                      ") and the device it was made for");
      if (!plan_) return;
      if (options_.timed) device_.impl().timer_start(detail::TimerMode::events_only);
      plan_->run(a_part, b, Array::view(slice_, DType::float32, {length_}));
      if (options_.timed) kernel_ms = device_.impl().timer_stop_ms();
      device_.synchronize();
    });
    const bool padded =
        std::any_of(lengths_.begin(), lengths_.end(), [&](std::int64_t l) { return l != widest_; });
    if (through_devices_) {  // gathered between the devices, then downloaded into C
      comm_.all_gather_on_device(slice_.handle(), slice_.bytes(), gathered_.handle());
      if (!padded) {
        gathered_.download(c, gathered_.bytes());
        return kernel_ms;
      }
      for (std::size_t r = 0; r < lengths_.size(); ++r) {
        const auto bytes = static_cast<std::size_t>(lengths_[r]) * sizeof(float);
        if (bytes) gathered_.download(c, bytes, r * slice_.bytes());
        c += lengths_[r];
      }
      return kernel_ms;
    }
    // Through the host: this rank's slice and the gathered ones in host memory kept by the plan
    // (fresh pages would cost as much as the copies).
    mine_.resize(static_cast<std::size_t>(widest_));
    all_.resize(mine_.size() * lengths_.size());
    if (length_) slice_.download(mine_.data(), static_cast<std::size_t>(length_) * sizeof(float));
    comm_.all_gather(mine_.data(), slice_.bytes(), all_.data());
    detail::copy_without_padding(all_.data(), lengths_, c);
    return kernel_ms;
  }

  PairwiseResult run(const Array& a_part, const Array& b) {
    PairwiseResult result;
    result.c.resize(static_cast<std::size_t>(total_));
    result.time_ms = run(a_part, b, result.c.data());
    return result;
  }

  std::int64_t x() const { return total_; }

 private:
  static void check_vectors(const Array& a_part, const Array& b) {
    if (a_part.dtype() != DType::float32 || a_part.ndim() != 1)
      throw_invalid("pairwise takes a 1-D float32 part of A");
    if (b.dtype() != DType::float32 || b.ndim() != 1)
      throw_invalid("pairwise takes a 1-D float32 B");
    detail::require_contiguous(a_part, "pairwise's part of A");
    detail::require_contiguous(b, "pairwise's B");
  }

  Communicator& comm_;
  PairwiseOptions options_;
  Device device_;
  std::int64_t length_ = 0, b_length_ = 0, total_ = 0, widest_ = 0;
  bool through_devices_ = false;
  std::vector<std::int64_t> lengths_;
  Buffer slice_, gathered_;
  std::vector<float> mine_, all_;  // without device collectives: the slices in host memory
  std::optional<Pairwise> plan_;
};

}  // namespace

struct RankPairwise::Impl {
  ResidentPairwise plan;
};

RankPairwise::RankPairwise(const Array& a_part, const Array& b, Communicator& comm,
                           const PairwiseOptions& options)
    : impl_(new Impl{ResidentPairwise(a_part, b, comm, options)}) {}

RankPairwise::~RankPairwise() = default;
RankPairwise::RankPairwise(RankPairwise&&) noexcept = default;
RankPairwise& RankPairwise::operator=(RankPairwise&&) noexcept = default;

PairwiseResult RankPairwise::run(const Array& a_part, const Array& b) {
  return impl_->plan.run(a_part, b);
}

double RankPairwise::run(const Array& a_part, const Array& b, float* c) {
  return impl_->plan.run(a_part, b, c);
}

std::int64_t RankPairwise::x() const {
  return impl_->plan.x();
}

PairwiseResult pairwise(const Array& a_part, const Array& b, Communicator& comm,
                        const PairwiseOptions& options) {
  return ResidentPairwise(a_part, b, comm, options).run(a_part, b);
}

}  // namespace parpat
