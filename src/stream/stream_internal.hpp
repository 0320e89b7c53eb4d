// The streamed patterns' shared entry points (a histogram's range pass is a streamed reduce).
#pragma once

#include <vector>

#include "io/source.hpp"
#include "parpat/communicator.hpp"
#include "parpat/stream.hpp"

namespace parpat::detail {

// One rank's part of a distributed stream: its source holds elements [first, first + its size)
// of a whole input of shape `whole_shape`, and `comm` combines the ranks' partial results.
struct RankShare {
  std::vector<std::int64_t> whole_shape;
  std::int64_t first = 0;
  Communicator* comm = nullptr;
};

// Reads `source` once and reduces it with every op of `ops` (one axis for all), adding to
// `stats`; `pass` of `passes` is what progress reports. With a `share`, `source` is this rank's
// share: after reading it the ranks agree (a failure on one stops all), exchange their partials
// and fold them in rank order, and every rank returns the results of the whole input.
std::vector<ReduceResult> reduce_stream(SourceImpl& source, const Device& device,
                                        const std::vector<ReduceOptions>& ops,
                                        const StreamOptions& stream, StreamStats& stats, int pass,
                                        int passes, const RankShare* share = nullptr);

// The histogram's two streamed passes (stream_histogram.cpp): [min, max] of the elements, and
// the counts of every element into `slots` uint64 on the device (bins, then underflow,
// overflow and NaN; zeros when the source is empty) — or, with `weights` (float32 or float64,
// one per element, read beside the source in the same chunks), the float64 sums of the weights.
std::pair<double, double> stream_range(SourceImpl& source, const Device& device,
                                       const StreamOptions& stream, StreamStats& stats);
Buffer count_stream(SourceImpl& source, SourceImpl* weights, const Device& device,
                    const HistogramBins& resolved, const HistogramOptions& options,
                    const StreamOptions& stream, StreamStats& stats, int pass, int passes);

}  // namespace parpat::detail
