// Reduce and histogram of resident data: each rank holds its part of one array on its own
// device, the parts stacked along axis 0 in rank order. The steps, each ended by an agreement:
//   both       agree on the call and the parts' shapes → all-gather the parts' lengths (the
//              whole shape, and where this rank's part starts)
//   reduce     reduce the part as one chunk of the whole's 2-D problem → fold the ranks'
//              accumulators in rank order (reduce_resident_share)
//   histogram  [min/max of the part → all-gather, when the bins need the range] → count the
//              part → all-reduce the counts (on the devices when the communicator can)
#include <numeric>

#include "distributed/agreement.hpp"
#include "distributed/rank_steps.hpp"
#include "histogram/histogram_internal.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"

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
        if (part.ndim() == 2 && part.row_stride() != part.cols())
          throw_invalid("each rank's part must be contiguous (it has a row stride of " +
                        std::to_string(part.row_stride()) + " for " + std::to_string(part.cols()) +
                        " columns)");
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

}  // namespace

ReduceResult reduce(const Array& part, Communicator& comm, const ReduceOptions& options) {
  const Stacked stacked = stack_parts(part, comm, detail::reduce_call_text(options));
  detail::StreamedReduce plan;
  detail::step_then_agree(comm,
                          [&] { plan = detail::ranks_reduce_plan(stacked.whole_shape, options); });
  detail::RankShare share;
  share.whole_shape = plan.shape;
  share.first = stacked.first;
  share.comm = &comm;
  double kernel_ms = 0;
  ReduceResult r = detail::reduce_resident_share(part, plan.ops, share, kernel_ms).front();
  r.shape = plan.result_shape;
  r.time_ms = kernel_ms;
  return r;
}

HistogramResult histogram(const Array& part, Communicator& comm, const HistogramBins& bins,
                          const HistogramOptions& options) {
  const Stacked stacked = stack_parts(part, comm, detail::histogram_call_text(bins, options));
  const std::int64_t n = std::accumulate(stacked.whole_shape.begin(), stacked.whole_shape.end(),
                                         std::int64_t{1}, std::multiplies<>());
  if (n == 0)
    return histogram(Array(part.device(), part.dtype(), stacked.whole_shape), bins, options);
  const HistogramBins resolved = detail::resolve_bins_with(part.dtype(), n, bins, [&] {
    return detail::ranks_range(comm, part.size() > 0, [&] { return detail::data_range(part); });
  });
  std::vector<std::uint64_t> slots(detail::histogram_slots(resolved));
  const std::size_t bytes = slots.size() * sizeof(std::uint64_t);
  Buffer counts;
  detail::step_then_agree(comm, [&] {
    counts = Buffer(part.device(), bytes);
    if (part.size() == 0) {
      counts.upload(slots.data(), bytes);  // zeros
      return;
    }
    const Array flat = Array::view(part.buffer(), part.dtype(), {part.size()});
    Histogrammer plan(part.device(), part.dtype(), part.size(), resolved, options);
    plan.run(flat, counts);
  });
  // Large counts through the devices when the communicator can (NCCL: 75 µs for 65539 slots on
  // two H100, against ~300 µs through the host); small ones through the host, where a few KiB
  // cost less than NCCL's launch and the stream's drain.
  const bool on_device =
      bytes >= kDeviceAllReduceMinBytes &&
      comm.all_reduce_sum_on_device(static_cast<std::uint64_t*>(counts.handle()), slots.size());
  counts.download(slots.data(), bytes);
  if (!on_device) comm.all_reduce_sum(slots.data(), slots.size());
  return detail::histogram_of_slots(resolved, std::move(slots));
}

}  // namespace parpat
