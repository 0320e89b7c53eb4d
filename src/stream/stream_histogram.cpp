// Histogram over a stream. Bins that need the data's [min, max] (even bins without a range,
// per-value bins of integers wider than 16 bits) cost a first pass: a streamed min and max. The
// counting pass runs an ordinary Histogrammer on each chunk (one plan per chunk length, made
// once) that adds into one set of device counts, so the counts are exactly the in-memory call's.
// A weighted histogram reads its weights beside the values, chunk for chunk, and adds float64
// sums instead.
#include <algorithm>
#include <map>

#include "histogram/histogram_internal.hpp"
#include "io/source.hpp"
#include "parpat/error.hpp"
#include "stream/chunk_input.hpp"
#include "stream/stream_internal.hpp"

namespace parpat {

namespace detail {

namespace {

// The weights of a weighted stream, read beside the values: the weights of each chunk are read
// (in order, or at their offset where the source allows) into one of two host buffers in turn
// when the pipeline shows the chunk ahead, and staged for the device then.
class WeightsInput {
 public:
  WeightsInput(SourceImpl& source, const Device& device, std::int64_t most)
      : source_(source),
        item_(dtype_size(source.dtype)),
        input_(device, source.dtype, static_cast<std::size_t>(most) * item_) {
    for (auto& h : host_)
      h.resize(static_cast<std::size_t>(most) * item_);
  }

  void stage(const HostChunk& values) {
    std::vector<unsigned char>& host = host_[staged_++ % 2];
    const std::size_t bytes = static_cast<std::size_t>(values.elements) * item_;
    if (source_.random_access()) {
      source_.read_at(values.first * item_, host.data(), bytes);
    } else {
      for (std::size_t done = 0; done < bytes;) {
        const std::size_t got = source_.read_next(host.data() + done, bytes - done);
        if (got == 0) throw_invalid(source_.name + " holds fewer weights than there are values");
        done += got;
      }
    }
    input_.stage(chunk_of(values, host));
  }

  Array array(const HostChunk& values) {
    return input_.array(chunk_of(values, host_[consumed_++ % 2]), {values.elements});
  }
  double transfer_ms() const { return input_.transfer_ms(); }

 private:
  static HostChunk chunk_of(const HostChunk& values, const std::vector<unsigned char>& host) {
    return HostChunk{host.data(), values.first, values.elements};
  }

  SourceImpl& source_;
  std::size_t item_;
  ChunkInput input_;
  std::vector<unsigned char> host_[2];
  std::int64_t staged_ = 0, consumed_ = 0;
};

}  // namespace

Buffer count_stream(SourceImpl& source, SourceImpl* weights, const Device& device,
                    const HistogramBins& resolved, const HistogramOptions& options,
                    const StreamOptions& stream, StreamStats& stats, int pass, int passes) {
  PipelineOptions p = pipeline_options(device, source, stream);
  const std::size_t item = dtype_size(source.dtype);
  const auto most = static_cast<std::int64_t>(p.chunk_bytes / item);
  std::map<std::int64_t, Histogrammer> plans;  // by chunk length
  const std::size_t slots = histogram_slots(resolved);
  Buffer counts(device, slots * sizeof(std::uint64_t));  // or float64 sums: 8 bytes a slot too
  if (source.elements() == 0) {
    std::vector<std::uint64_t> zeros(slots, 0);
    counts.upload(zeros.data(), zeros.size() * sizeof(std::uint64_t));
    return counts;
  }
  bool accumulate = false;
  ChunkInput input(device, source.dtype, p.chunk_bytes);
  std::unique_ptr<WeightsInput> weights_input;
  if (weights) weights_input = std::make_unique<WeightsInput>(*weights, device, most);
  auto plan_for = [&](std::int64_t elements) -> Histogrammer& {
    auto it = plans.find(elements);
    if (it == plans.end())
      it = plans
               .emplace(elements,
                        weights ? Histogrammer(device, source.dtype, weights->dtype, elements,
                                               resolved, options)
                                : Histogrammer(device, source.dtype, elements, resolved, options))
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
                 if (weights_input)
                   plan.run(in, weights_input->array(chunk), counts, accumulate);
                 else
                   plan.run(in, counts, accumulate);
                 if (options.timed) stats.kernel_ms += device.impl().timer_stop_ms();
                 accumulate = true;
                 done += static_cast<std::uint64_t>(chunk.elements) * item;
                 if (stream.progress) stream.progress({done, total, pass, passes});
               },
               [&](const HostChunk& chunk) {
                 input.stage(chunk);
                 if (weights_input) weights_input->stage(chunk);
               });
  if (!accumulate) {
    std::vector<std::uint64_t> zeros(slots, 0);
    counts.upload(zeros.data(), zeros.size() * sizeof(std::uint64_t));
  }
  stats.bytes += done;
  stats.chunks += pipeline.chunks();
  stats.read_ms += pipeline.read_ms();
  stats.transfer_ms += input.transfer_ms();
  if (weights_input) {
    stats.bytes += static_cast<std::uint64_t>(done / item * dtype_size(weights->dtype));
    stats.transfer_ms += weights_input->transfer_ms();
  }
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

namespace {

// The streamed histogram of `s`, weighted when `weights` is given.
HistogramResult stream_histogram(detail::SourceImpl& s, detail::SourceImpl* weights,
                                 const Device& device, const HistogramBins& bins,
                                 const HistogramOptions& options, const StreamOptions& stream,
                                 StreamStats* stats) {
  auto start = std::chrono::steady_clock::now();
  const std::int64_t n = s.elements();
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
  const std::size_t slots = detail::histogram_slots(resolved);
  Buffer counted = detail::count_stream(s, weights, device, resolved, options, stream, local,
                                        local.passes, local.passes);
  HistogramResult r;
  if (weights) {
    std::vector<double> sums(slots);
    counted.download(sums.data(), slots * sizeof(double));
    r = detail::histogram_of_sums(resolved, std::move(sums));
  } else {
    std::vector<std::uint64_t> counts(slots);
    counted.download(counts.data(), slots * sizeof(std::uint64_t));
    r = detail::histogram_of_slots(resolved, std::move(counts));
  }
  local.wall_ms = detail::ms_since(start);
  r.time_ms = local.kernel_ms;
  if (stats) *stats = local;
  return r;
}

}  // namespace

HistogramResult histogram(Source& source, const Device& device, const HistogramBins& bins,
                          const HistogramOptions& options, const StreamOptions& stream,
                          StreamStats* stats) {
  detail::SourceImpl& s = source.impl();
  if (s.elements() == 0) return histogram(Array(device, s.dtype, s.shape), bins, options);
  return stream_histogram(s, nullptr, device, bins, options, stream, stats);
}

HistogramResult histogram(Source& source, Source& weights, const Device& device,
                          const HistogramBins& bins, const HistogramOptions& options,
                          const StreamOptions& stream, StreamStats* stats) {
  detail::SourceImpl& s = source.impl();
  detail::SourceImpl& w = weights.impl();
  if (s.elements() < 0 || w.elements() < 0)
    throw_invalid("a weighted histogram needs inputs of known length (" +
                  (s.elements() < 0 ? s.name : w.name) + " has none)");
  detail::check_weights(w.dtype, w.shape, s.shape);
  if (s.elements() == 0) {
    Array empty(device, s.dtype, s.shape);
    return histogram(empty, Array(device, w.dtype, w.shape), bins, options);
  }
  return stream_histogram(s, &w, device, bins, options, stream, stats);
}

}  // namespace parpat
