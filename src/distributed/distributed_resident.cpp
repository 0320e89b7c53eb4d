// Reduce and histogram of resident data: each rank holds its part of one array on its own
// device, the parts stacked along axis 0 in rank order. A plan (RankReducer, RankHistogrammer)
// is made once by every rank, each step ended by an agreement:
//   both       agree on the call and the parts' shapes → all-gather the parts' lengths (the
//              whole shape, and where this rank's part starts)
//   reduce     the whole's 2-D problem → this rank's share of it (ShareReducer)
//   histogram  [min/max of the part → all-gather, when the bins need the range] → the
//              Histogrammer of the part and its counts
// and each run is one agreement and one collective: reduce the part as one chunk and fold the
// ranks' accumulators in rank order; count the part and all-reduce the counts (on the devices
// when the communicator can). The one-shot calls make a plan and run it once.
#include <numeric>
#include <optional>

#include "distributed/agreement.hpp"
#include "distributed/rank_steps.hpp"
#include "histogram/histogram_internal.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "runtime/contiguous.hpp"

namespace parpat {

namespace {

// Counts at least this large are all-reduced in device memory where the communicator can.
constexpr std::size_t kDeviceAllReduceMinBytes = 64 << 10;

struct Stacked {
  std::vector<std::int64_t> whole_shape;
  std::int64_t first = 0;  // this rank's first element in the whole
};

// Checks this rank's part against the others' (`call`, dtype and every axis but the first must
// agree) and stacks the parts.
Stacked stack_parts(const Array& part, Communicator& comm, const std::string& call) {
  std::string text =
      call + ' ' + dtype_name(part.dtype()) + ' ' + std::to_string(part.ndim()) + "-D parts of";
  for (std::size_t d = 1; d < part.shape().size(); ++d)
    text += ' ' + std::to_string(part.shape()[d]);
  detail::step_then_agree(
      comm,
      [&] {
        if (part.ndim() == 0) throw_invalid("each rank's part needs at least one axis");
        if (comm.engine() == "nccl" && part.device().backend() != Backend::cuda)
          throw_invalid("a rank of an NCCL communicator holds its part on its CUDA device, not " +
                        part.device().label());
        detail::require_contiguous(part, "each rank's part");
      },
      detail::signature_of(text));
  const std::int64_t length = part.shape().at(0);
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(comm.size()));
  comm.all_gather(&length, sizeof length, lengths.data());
  Stacked s;
  s.whole_shape = part.shape();
  s.whole_shape[0] = std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
  const std::int64_t before =
      std::accumulate(lengths.begin(), lengths.begin() + comm.rank(), std::int64_t{0});
  std::int64_t per_row = 1;  // elements per index of axis 0 (known even for an empty part)
  for (std::size_t d = 1; d < part.shape().size(); ++d)
    per_row *= part.shape()[d];
  s.first = before * per_row;
  return s;
}

// What a plan's parts must be like: the dtype, shape and device of the part it was made for.
struct PartLayout {
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  Device device;

  explicit PartLayout(const Array& part)
      : dtype(part.dtype()), shape(part.shape()), device(part.device()) {}

  void check(const Array& part) const {
    if (part.dtype() != dtype || part.shape() != shape ||
        part.device().shared_impl() != device.shared_impl())
      throw_invalid("a rank plan runs on parts of the dtype, shape and device it was made for");
  }
};

}  // namespace

struct RankReducer::Impl {
  PartLayout layout;
  detail::StreamedReduce plan;
  std::unique_ptr<detail::ShareReducer> reducer;
};

RankReducer::RankReducer(const Array& part, Communicator& comm, const ReduceOptions& options)
    : impl_(new Impl{PartLayout(part), {}, nullptr}) {
  const Stacked stacked = stack_parts(part, comm, detail::reduce_call_text(options));
  detail::step_then_agree(
      comm, [&] { impl_->plan = detail::ranks_reduce_plan(stacked.whole_shape, options); });
  detail::RankShare share;
  share.whole_shape = impl_->plan.shape;
  share.first = stacked.first;
  share.comm = &comm;
  impl_->reducer =
      std::make_unique<detail::ShareReducer>(part.device(), part.dtype(), share, impl_->plan.ops);
}

RankReducer::~RankReducer() = default;
RankReducer::RankReducer(RankReducer&&) noexcept = default;
RankReducer& RankReducer::operator=(RankReducer&&) noexcept = default;

ReduceResult RankReducer::run(const Array& part) {
  double kernel_ms = 0;
  ReduceResult r = impl_->reducer->run(part, kernel_ms, [&] { impl_->layout.check(part); }).front();
  r.shape = impl_->plan.result_shape;
  r.time_ms = kernel_ms;
  return r;
}

struct RankHistogrammer::Impl {
  Communicator* comm = nullptr;
  PartLayout layout;
  HistogramBins resolved;
  std::optional<HistogramResult> empty;  // the answer when the whole array is empty
  std::optional<Histogrammer> plan;      // none for an empty part
  Buffer counts;
  std::vector<std::uint64_t> zeros;  // one per slot: an empty part's counts
};

RankHistogrammer::RankHistogrammer(const Array& part, Communicator& comm, const HistogramBins& bins,
                                   const HistogramOptions& options)
    : impl_(new Impl{&comm, PartLayout(part), {}, {}, {}, {}, {}}) {
  Impl& m = *impl_;
  const Stacked stacked = stack_parts(part, comm, detail::histogram_call_text(bins, options));
  const std::int64_t n = std::accumulate(stacked.whole_shape.begin(), stacked.whole_shape.end(),
                                         std::int64_t{1}, std::multiplies<>());
  if (n == 0) {
    m.empty = histogram(Array(part.device(), part.dtype(), stacked.whole_shape), bins, options);
    return;
  }
  m.resolved = detail::resolve_bins_with(part.dtype(), n, bins, [&] {
    return detail::ranks_range(comm, part.size() > 0, [&] { return detail::data_range(part); });
  });
  m.zeros.assign(detail::histogram_slots(m.resolved), 0);
  detail::step_then_agree(comm, [&] {
    m.counts = Buffer(part.device(), m.zeros.size() * sizeof(std::uint64_t));
    if (part.size() != 0)
      m.plan.emplace(part.device(), part.dtype(), part.size(), m.resolved, options);
  });
}

RankHistogrammer::~RankHistogrammer() = default;
RankHistogrammer::RankHistogrammer(RankHistogrammer&&) noexcept = default;
RankHistogrammer& RankHistogrammer::operator=(RankHistogrammer&&) noexcept = default;

void RankHistogrammer::run(const Array& part, HistogramResult& result) {
  Impl& m = *impl_;
  Communicator& comm = *m.comm;
  detail::step_then_agree(comm, [&] {
    m.layout.check(part);
    if (m.plan)
      m.plan->run(Array::view(part.buffer(), part.dtype(), {part.size()}), m.counts);
    else if (!m.empty)
      m.counts.upload(m.zeros.data(), m.counts.bytes());  // again: the sum is in place
    part.device().synchronize();  // a device error shows here, where every rank agrees on it
  });
  if (m.empty) {
    result = *m.empty;
    return;
  }
  // Large counts through the devices when the communicator can (NCCL: 57–98 µs for 65539 slots
  // on two H100, against 0.18–0.23 ms through the host); small ones through the host, where a
  // few KiB cost less than NCCL's launch.
  const std::size_t slots = m.zeros.size(), bytes = m.counts.bytes();
  const bool on_device =
      bytes >= kDeviceAllReduceMinBytes &&
      comm.all_reduce_sum_on_device(static_cast<std::uint64_t*>(m.counts.handle()), slots);
  // The slots come down into the result's counts, whose memory is kept from the last run (fresh
  // pages cost as much as the copy).
  std::vector<std::uint64_t> counts = std::move(result.counts);
  result = HistogramResult{};
  result.bins = m.resolved;
  counts.resize(slots);
  m.counts.download(counts.data(), bytes);
  if (!on_device) comm.all_reduce_sum(counts.data(), slots);
  result.counts = std::move(counts);
  detail::take_outlier_slots(result);
}

HistogramResult RankHistogrammer::run(const Array& part) {
  HistogramResult result;
  run(part, result);
  return result;
}

ReduceResult reduce(const Array& part, Communicator& comm, const ReduceOptions& options) {
  return RankReducer(part, comm, options).run(part);
}

HistogramResult histogram(const Array& part, Communicator& comm, const HistogramBins& bins,
                          const HistogramOptions& options) {
  return RankHistogrammer(part, comm, bins, options).run(part);
}

}  // namespace parpat
