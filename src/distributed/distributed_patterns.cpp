// Reduce and histogram over the ranks of a communicator. Each call runs as local steps (open the
// share, stream it) separated by agreements (distributed/agreement.hpp), so that a failure or
// mismatch on one rank stops every rank before the next collective:
//   reduce     agree on the call → stream the share → agree → all-gather the accumulators and
//              fold them in rank order (reduce_stream with a RankShare)
//   histogram  agree on the call → [min/max of the share → agree → all-gather, when the bins
//              need the range] → count the share → agree → all-reduce the counts (weighted:
//              all-gather the float64 sums and add them in rank order)

#include <algorithm>

#include "distributed/agreement.hpp"
#include "distributed/rank_steps.hpp"
#include "histogram/histogram_internal.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "stream/chunk_input.hpp"
#include "stream/stream_internal.hpp"

namespace parpat {

namespace {

// This rank's share of `whole`, read as `shape`: elements [r·n/P, (r+1)·n/P), or whole rows
// [r·R/P, (r+1)·R/P) of a 2-D shape with `by_rows`. One rank reads the whole source itself
// (standard input too).
std::shared_ptr<detail::SourceImpl> open_rank_share(detail::SourceImpl& whole,
                                                    const std::vector<std::int64_t>& shape,
                                                    bool by_rows, Communicator& comm,
                                                    detail::RankShare& share) {
  share.whole_shape = shape;
  share.first = 0;
  share.comm = &comm;
  if (comm.size() == 1) return {std::shared_ptr<detail::SourceImpl>(), &whole};
  if (whole.elements() < 0 || !whole.random_access())
    throw_invalid(whole.name + " can only be read in order, so " + std::to_string(comm.size()) +
                  " ranks cannot each read a share of it (give a file)");
  const std::int64_t r = comm.rank(), p = comm.size();
  if (by_rows && shape.size() == 2) {
    const std::int64_t rows = shape[0], cols = shape[1];
    const std::int64_t first = rows * r / p, last = rows * (r + 1) / p;
    share.first = first * cols;
    return detail::open_share_source(whole, share.first, {last - first, cols});
  }
  const std::int64_t n = whole.elements();
  const std::int64_t first = n * r / p, last = n * (r + 1) / p;
  share.first = first;
  return detail::open_share_source(whole, first, {last - first});
}

}  // namespace

ReduceResult reduce(Source& source, const Device& device, Communicator& comm,
                    const ReduceOptions& options, const StreamOptions& stream, StreamStats* stats) {
  auto start = std::chrono::steady_clock::now();
  detail::SourceImpl& whole = source.impl();
  detail::RankShare share;
  std::shared_ptr<detail::SourceImpl> mine;
  const std::string call =
      detail::reduce_call_text(options) + ' ' + detail::source_signature(whole);
  // Every rank streams the 2-D problem of the axes (a source of unknown length: 1-D).
  detail::StreamedReduce plan;
  detail::step_then_agree(
      comm,
      [&] {
        plan = detail::ranks_reduce_plan(
            whole.elements() >= 0 ? whole.shape : std::vector<std::int64_t>{1}, options);
        mine = open_rank_share(whole, plan.shape, plan.ops.front().axis != Axis::all, comm, share);
      },
      detail::signature_of(call));
  StreamStats local;
  ReduceResult r =
      detail::reduce_stream(*mine, device, plan.ops, stream, local, 1, 1, &share).front();
  r.shape = plan.result_shape;
  local.wall_ms = detail::ms_since(start);
  r.time_ms = local.kernel_ms;
  if (stats) *stats = local;
  return r;
}

namespace {

// The histogram of `whole` over the ranks, weighted by `whole_weights` where given: counts added
// by an all-reduce, float64 sums gathered and added in rank order.
HistogramResult histogram_over_ranks(detail::SourceImpl& whole, detail::SourceImpl* whole_weights,
                                     const Device& device, Communicator& comm,
                                     const HistogramBins& bins, const HistogramOptions& options,
                                     const StreamOptions& stream, StreamStats* stats) {
  auto start = std::chrono::steady_clock::now();
  detail::RankShare share, weights_share;
  std::shared_ptr<detail::SourceImpl> mine, mine_weights;
  std::string call =
      detail::histogram_call_text(bins, options) + ' ' + detail::source_signature(whole);
  if (whole_weights) call += " weights " + detail::source_signature(*whole_weights);
  detail::step_then_agree(
      comm,
      [&] {
        if (whole_weights) {
          if (whole.elements() < 0 || whole_weights->elements() < 0)
            throw_invalid("a weighted histogram needs inputs of known length (" +
                          (whole.elements() < 0 ? whole.name : whole_weights->name) + " has none)");
          detail::check_weights(whole_weights->dtype, whole_weights->shape, whole.shape);
          mine_weights =
              open_rank_share(*whole_weights, whole_weights->shape, false, comm, weights_share);
        }
        mine = open_rank_share(whole, whole.shape, false, comm, share);
      },
      detail::signature_of(call));
  const std::int64_t n = whole.elements();
  if (n == 0) {
    Array empty(device, whole.dtype, whole.shape);
    return whole_weights
               ? histogram(empty, Array(device, whole_weights->dtype, whole.shape), bins, options)
               : histogram(empty, bins, options);
  }
  StreamStats local;
  // The range is asked for (on every rank alike) only when the bins need it.
  if (detail::bins_need_data(whole.dtype, bins)) local.passes = 2;
  const HistogramBins resolved = detail::resolve_bins_with(whole.dtype, n, bins, [&] {
    return detail::ranks_range(comm, mine->elements() > 0,
                               [&] { return detail::stream_range(*mine, device, stream, local); });
  });
  const std::size_t slots = detail::histogram_slots(resolved);
  std::vector<std::uint64_t> counts(whole_weights ? 0 : slots);
  std::vector<double> sums(whole_weights ? slots : 0);
  detail::step_then_agree(comm, [&] {
    Buffer counted = detail::count_stream(*mine, mine_weights.get(), device, resolved, options,
                                          stream, local, local.passes, local.passes);
    if (whole_weights) {
      counted.download(sums.data(), slots * sizeof(double));
    } else {
      counted.download(counts.data(), slots * sizeof(std::uint64_t));
    }
  });
  HistogramResult r;
  if (whole_weights) {
    const std::vector<unsigned char> every = comm.all_gather(sums.data(), slots * sizeof(double));
    std::fill(sums.begin(), sums.end(), 0.0);
    for (int rank = 0; rank < comm.size(); ++rank) {
      const auto* part = reinterpret_cast<const double*>(every.data()) + rank * slots;
      for (std::size_t i = 0; i < slots; ++i)
        sums[i] += part[i];
    }
    r = detail::histogram_of_sums(resolved, std::move(sums));
  } else {
    comm.all_reduce_sum(counts.data(), counts.size());
    r = detail::histogram_of_slots(resolved, std::move(counts));
  }
  local.wall_ms = detail::ms_since(start);
  r.time_ms = local.kernel_ms;
  if (stats) *stats = local;
  return r;
}

}  // namespace

HistogramResult histogram(Source& source, const Device& device, Communicator& comm,
                          const HistogramBins& bins, const HistogramOptions& options,
                          const StreamOptions& stream, StreamStats* stats) {
  return histogram_over_ranks(source.impl(), nullptr, device, comm, bins, options, stream, stats);
}

HistogramResult histogram(Source& source, Source& weights, const Device& device, Communicator& comm,
                          const HistogramBins& bins, const HistogramOptions& options,
                          const StreamOptions& stream, StreamStats* stats) {
  return histogram_over_ranks(source.impl(), &weights.impl(), device, comm, bins, options, stream,
                              stats);
}

}  // namespace parpat
