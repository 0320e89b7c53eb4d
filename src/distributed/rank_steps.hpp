// The steps the distributed patterns share, whether a rank's part is a share of a file
// (distributed_patterns.cpp) or an array resident on its device (distributed_resident.cpp): the
// texts that every rank's call must agree on, the streamed plan of a reduce over ranks, and the
// range of the data over every rank.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "parpat/communicator.hpp"
#include "parpat/histogram.hpp"
#include "parpat/reduce.hpp"
#include "stream/stream_internal.hpp"

namespace parpat::detail {

// What must be equal on every rank for a reduce or a histogram (the input's dtype and shape are
// added by the caller).
std::string reduce_call_text(const ReduceOptions& options);
std::string histogram_call_text(const HistogramBins& bins, const HistogramOptions& options);
std::string pairwise_call_text(const PairwiseOptions& options);

// Split x's C from the ranks' slices gathered in rank order, each padded to the widest of
// `lengths`: the slices copied to `c` without the padding.
void copy_without_padding(const float* gathered, const std::vector<std::int64_t>& lengths,
                          float* c);

// The 2-D problem a reduce over ranks runs on `shape`; Error(invalid_argument) for axes that
// interleave with kept ones (they would need the whole input on one device).
StreamedReduce ranks_reduce_plan(const std::vector<std::int64_t>& shape,
                                 const ReduceOptions& options);

// [min, max] over every rank's data (NaN when any rank saw one): `local` gives this rank's and
// is called only when it `has_data`; a failure on any rank stops all, then one all-gather.
std::pair<double, double> ranks_range(Communicator& comm, bool has_data,
                                      const std::function<std::pair<double, double>()>& local);

}  // namespace parpat::detail
