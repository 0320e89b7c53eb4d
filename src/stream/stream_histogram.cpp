// Histogram over a stream. Bins that need the data's [min, max] (even bins without a range,
// per-value bins of integers wider than 16 bits) cost a first pass: a streamed min and max. The
// counting pass runs an ordinary Histogrammer on each chunk (one plan per chunk length, made
// once) that adds into one set of device counts, so the counts are exactly the in-memory call's.
#include <algorithm>
#include <map>

#include "histogram/histogram_internal.hpp"
#include "io/source.hpp"
#include "parpat/error.hpp"
#include "stream/chunk_input.hpp"
#include "stream/stream_internal.hpp"

namespace parpat {

namespace detail {

Buffer count_stream(SourceImpl& source, const Device& device, const HistogramBins& resolved,
                    const HistogramOptions& options, const StreamOptions& stream,
                    StreamStats& stats, int pass, int passes) {
  PipelineOptions p = pipeline_options(device, source, stream);
  const std::size_t item = dtype_size(source.dtype);
  const auto most = static_cast<std::int64_t>(p.chunk_bytes / item);
  std::map<std::int64_t, Histogrammer> plans;  // by chunk length
  const std::size_t slots = histogram_slots(resolved);
  Buffer counts(device, slots * sizeof(std::uint64_t));
  if (source.elements() == 0) {
    std::vector<std::uint64_t> zeros(slots, 0);
    counts.upload(zeros.data(), zeros.size() * sizeof(std::uint64_t));
    return counts;
  }
  bool accumulate = false;
  ChunkInput input(device, source.dtype, p.chunk_bytes);
  auto plan_for = [&](std::int64_t elements) -> Histogrammer& {
    auto it = plans.find(elements);
    if (it == plans.end())
      it = plans.emplace(elements, Histogrammer(device, source.dtype, elements, resolved, options))
               .first;
    return it->second;
  };
  auto pipeline_owner = make_pipeline_meanwhile(source, device, p, [&] {
    plan_for(source.elements() < 0 ? most : std::min<std::int64_t>(most, source.elements()));
  });
  ChunkPipeline& pipeline = *pipeline_owner;
  std::uint64_t done = 0;
  const std::uint64_t total = source.elements() < 0 ? 0 : source.data_bytes();
  pipeline.run([most](std::uint64_t) { return most; },
               [&](const HostChunk& chunk) {
                 Array in = input.array(chunk, {chunk.elements});
                 Histogrammer& plan = plan_for(chunk.elements);
                 if (options.timed) device.impl().timer_start(TimerMode::events_only);
                 plan.run(in, counts, accumulate);
                 if (options.timed) stats.kernel_ms += device.impl().timer_stop_ms();
                 accumulate = true;
                 done += static_cast<std::uint64_t>(chunk.elements) * item;
                 if (stream.progress) stream.progress({done, total, pass, passes});
               },
               [&](const HostChunk& chunk) { input.stage(chunk); });
  if (!accumulate) {
    std::vector<std::uint64_t> zeros(slots, 0);
    counts.upload(zeros.data(), zeros.size() * sizeof(std::uint64_t));
  }
  stats.bytes += done;
  stats.chunks += pipeline.chunks();
  stats.read_ms += pipeline.read_ms();
  stats.transfer_ms += input.transfer_ms();
  return counts;
}

// [min, max] of the source's elements, streamed (the first of two passes).
std::pair<double, double> stream_range(SourceImpl& source, const Device& device,
                                       const StreamOptions& stream, StreamStats& stats) {
  ReduceOptions min, max;
  min.op = ReduceOp::min;
  max.op = ReduceOp::max;
  auto r = reduce_stream(source, device, {min, max}, stream, stats, 1, 2);
  return {r[0].values.at(0).as_double(), r[1].values.at(0).as_double()};
}

}  // namespace detail

HistogramResult histogram(Source& source, const Device& device, const HistogramBins& bins,
                          const HistogramOptions& options, const StreamOptions& stream,
                          StreamStats* stats) {
  auto start = std::chrono::steady_clock::now();
  detail::SourceImpl& s = source.impl();
  const std::int64_t n = s.elements();
  if (n == 0) return histogram(Array(device, s.dtype, s.shape), bins, options);
  StreamStats local;
  if (detail::bins_need_data(s.dtype, bins)) {
    if (!s.rereadable())
      throw_invalid(s.name +
                    " can be read only once, and these bins need its range first: "
                    "give --range LO HI or --edges");
    local.passes = 2;
  }
  const HistogramBins resolved = detail::resolve_bins_with(
      s.dtype, n < 0 ? 1 : n, bins, [&] { return detail::stream_range(s, device, stream, local); });
  std::vector<std::uint64_t> all(detail::histogram_slots(resolved));
  detail::count_stream(s, device, resolved, options, stream, local, local.passes, local.passes)
      .download(all.data(), all.size() * sizeof(std::uint64_t));
  HistogramResult r = detail::histogram_of_slots(resolved, std::move(all));
  local.wall_ms = detail::ms_since(start);
  r.time_ms = local.kernel_ms;
  if (stats) *stats = local;
  return r;
}

}  // namespace parpat
