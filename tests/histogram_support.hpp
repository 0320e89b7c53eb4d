// What the histogram tests share: the plan-level problem of resolved bins.
#pragma once

#include <cstdint>

#include "histogram/histogram_internal.hpp"
#include "parpat/histogram.hpp"

namespace parpat::test {

inline detail::HistogramProblem problem_of(DType t, std::int64_t n, const HistogramBins& b) {
  detail::HistogramProblem p;
  p.dtype = t;
  p.n = n;
  p.even = b.kind == HistogramBins::Kind::even;
  p.bins = b.count;
  p.lo = b.lo;
  p.hi = b.hi;
  if (!p.even) p.edges = b.edges;
  return p;
}

}  // namespace parpat::test
