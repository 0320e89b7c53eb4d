// The streamed patterns' shared entry points (a histogram's range pass is a streamed reduce).
#pragma once

#include <functional>
#include <memory>
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

// How a streamed reduce reads an input of `shape` with `ops` (one axis argument for all):
// the 2-D problem of reduce/axes.hpp (1-D for axis all) and the ops with that problem's Axis,
// plus numpy's result shape. `streams` is false when the axes need a gather: the input is then
// reduced in device memory.
struct StreamedReduce {
  std::vector<std::int64_t> shape;
  std::vector<ReduceOptions> ops;
  std::vector<std::int64_t> result_shape;
  bool streams = true;
};
StreamedReduce streamed_reduce(const std::vector<std::int64_t>& shape,
                               std::vector<ReduceOptions> ops);

// Reads `source` once and reduces it with every op of `ops` (one axis argument for all), adding
// to `stats`; `pass` of `passes` is what progress reports. An N-D source streams as the 2-D
// problem of its axes (streamed_reduce); axes that need a gather load the whole input onto the
// device (Error(invalid_argument) when it does not fit) and reduce it there. With a `share`,
// `source` is this rank's share of an input already of the streamed shape (share->whole_shape,
// ops with an Axis): after reading it the ranks agree (a failure on one stops all), exchange
// their partials and fold them in rank order, and every rank returns the results of the whole
// input.
std::vector<ReduceResult> reduce_stream(SourceImpl& source, const Device& device,
                                        const std::vector<ReduceOptions>& ops,
                                        const StreamOptions& stream, StreamStats& stats, int pass,
                                        int passes, const RankShare* share = nullptr);

// A rank's shares already in device memory (contiguous, the rows [first / cols, ...) of the
// streamed 2-D shape `rank.whole_shape`, with ops of that shape's Axis), each reduced as one
// chunk; then the ranks agree and fold their accumulators in rank order, as reduce_stream does.
// The plans and buffers are made on the first run and kept for the next ones.
class ShareReducer {
 public:
  ShareReducer(const Device& device, DType dtype, const RankShare& rank,
               const std::vector<ReduceOptions>& ops);
  ~ShareReducer();
  // Collective. `check` runs first, inside the step the ranks agree on (a rank's failure there
  // stops every rank alike).
  std::vector<ReduceResult> run(const Array& share, double& kernel_ms,
                                const std::function<void()>& check);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;       // none when the whole input is empty
  std::vector<ReduceResult> empty_;  // the answer then
  Communicator* comm_;
};

// The histogram's two streamed passes (stream_histogram.cpp): [min, max] of the elements, and
// the counts of every element into `slots` uint64 on the device (bins, then underflow,
// overflow and NaN; zeros when the source is empty) — or, with `weights` (float32 or float64,
// one per element, read beside the source in the same chunks), the float64 sums of the weights.
std::pair<double, double> stream_range(SourceImpl& source, const Device& device,
                                       const StreamOptions& stream, StreamStats& stats);
Buffer count_stream(SourceImpl& source, SourceImpl* weights, const Device& device,
                    const HistogramBins& resolved, const HistogramOptions& options,
                    const StreamOptions& stream, StreamStats& stats, int pass, int passes);

// C[x] = Σ_y f(A[x], B[y]) with B streamed from `b`, before its rounding to float32: the float64
// sums of the chunks' C, in chunk order (stream_pairwise.cpp), adding to `stats`.
std::vector<double> pairwise_stream_sums(const Array& a, SourceImpl& b,
                                         const PairwiseOptions& options,
                                         const StreamOptions& stream, StreamStats& stats);

}  // namespace parpat::detail
