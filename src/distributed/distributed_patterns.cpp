// Reduce and histogram over the ranks of a communicator. Each call runs as local steps (open the
// share, stream it) separated by agreements (distributed/agreement.hpp), so that a failure or
// mismatch on one rank stops every rank before the next collective:
//   reduce     agree on the call → stream the share → agree → all-gather the accumulators and
//              fold them in rank order (reduce_stream with a RankShare)
//   histogram  agree on the call → [min/max of the share → agree → all-gather, when the bins
//              need the range] → count the share → agree → all-reduce the counts

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

HistogramResult histogram(Source& source, const Device& device, Communicator& comm,
                          const HistogramBins& bins, const HistogramOptions& options,
                          const StreamOptions& stream, StreamStats* stats) {
  auto start = std::chrono::steady_clock::now();
  detail::SourceImpl& whole = source.impl();
  detail::RankShare share;
  std::shared_ptr<detail::SourceImpl> mine;
  const std::string call =
      detail::histogram_call_text(bins, options) + ' ' + detail::source_signature(whole);
  detail::step_then_agree(
      comm, [&] { mine = open_rank_share(whole, whole.shape, false, comm, share); },
      detail::signature_of(call));
  const std::int64_t n = whole.elements();
  if (n == 0) return histogram(Array(device, whole.dtype, whole.shape), bins, options);
  StreamStats local;
  // The range is asked for (on every rank alike) only when the bins need it.
  if (detail::bins_need_data(whole.dtype, bins)) local.passes = 2;
  const HistogramBins resolved = detail::resolve_bins_with(whole.dtype, n, bins, [&] {
    return detail::ranks_range(comm, mine->elements() > 0,
                               [&] { return detail::stream_range(*mine, device, stream, local); });
  });
  std::vector<std::uint64_t> slots(detail::histogram_slots(resolved));
  detail::step_then_agree(comm, [&] {
    detail::count_stream(*mine, nullptr, device, resolved, options, stream, local, local.passes,
                         local.passes)
        .download(slots.data(), slots.size() * sizeof(std::uint64_t));
  });
  comm.all_reduce_sum(slots.data(), slots.size());
  HistogramResult r = detail::histogram_of_slots(resolved, std::move(slots));
  local.wall_ms = detail::ms_since(start);
  r.time_ms = local.kernel_ms;
  if (stats) *stats = local;
  return r;
}

}  // namespace parpat
