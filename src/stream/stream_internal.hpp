// The streamed patterns' shared entry points (a histogram's range pass is a streamed reduce).
#pragma once

#include <vector>

#include "io/source.hpp"
#include "parpat/stream.hpp"

namespace parpat::detail {

// Reads `source` once and reduces it with every op of `ops` (one axis for all), adding to
// `stats`; `pass` of `passes` is what progress reports.
std::vector<ReduceResult> reduce_stream(SourceImpl& source, const Device& device,
                                        const std::vector<ReduceOptions>& ops,
                                        const StreamOptions& stream, StreamStats& stats, int pass,
                                        int passes);

}  // namespace parpat::detail
