// parpat/distributed.hpp — reduce, histogram and pairwise over the ranks of a Communicator. Every
// rank opens the same input, reads only its own share of it (through the streaming engine),
// computes partial results on its own device, and one collective combines them; every rank returns
// the whole answer.
//
// The shares: rank r of P takes elements [r·n/P, (r+1)·n/P) of a flat input, or whole rows
// [r·R/P, (r+1)·R/P) of a 2-D input reduced along rows or cols. A rank with an empty share takes
// part with identities.
//
// Results: integer results and histograms are exact and do not depend on P. Float partials are
// combined in rank order with the operator's own algebra (float64 sums, merged moments), so the
// same P gives the same bits, and any P stays within the accuracy contract. Arg ops return
// indices into the whole input, the first one winning as in numpy.
//
// Faults: a call that fails on one rank (a short file, a device error) throws the same Error on
// every rank, the lowest failing rank's, instead of leaving the others in a collective; ranks
// whose calls differ (op, axis, bins, dtype or shape of the input) all throw before any
// partial result is exchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "parpat/communicator.hpp"
#include "parpat/stream.hpp"

namespace parpat {

ReduceResult reduce(Source& source, const Device& device, Communicator& comm,
                    const ReduceOptions& options = {}, const StreamOptions& stream = {},
                    StreamStats* stats = nullptr);

// Bins without a range take a min/max pass over every rank's share and one all-reduce first.
HistogramResult histogram(Source& source, const Device& device, Communicator& comm,
                          const HistogramBins& bins = {}, const HistogramOptions& options = {},
                          const StreamOptions& stream = {}, StreamStats* stats = nullptr);
// Weighted (HistogramResult::sums): `weights` holds a float32 or float64 weight for each value of
// `source` (the same shape), split over the ranks as the values are; every rank's float64 sums
// are gathered and added in rank order, so the same P gives the same bits on every rank.
HistogramResult histogram(Source& source, Source& weights, const Device& device, Communicator& comm,
                          const HistogramBins& bins = {}, const HistogramOptions& options = {},
                          const StreamOptions& stream = {}, StreamStats* stats = nullptr);

// Resident data: each rank holds its part of one array on its own device (`part`, contiguous),
// the parts stacked along axis 0 in rank order (their other axes equal). Every rank returns the
// answer for the whole array, as the calls above do for a file: numpy's axes over the whole
// (except axes that interleave with kept ones), arg indices into the whole, floats folded in
// rank order. A part may be empty.
ReduceResult reduce(const Array& part, Communicator& comm, const ReduceOptions& options = {});
HistogramResult histogram(const Array& part, Communicator& comm, const HistogramBins& bins = {},
                          const HistogramOptions& options = {});

// The two calls above as plans, for a loop over parts of the same shapes (a new batch each
// step): the agreement on the call and the parts' shapes, the bins (their range from the parts
// given here when `bins` has none) and each rank's kernels and buffers are made once, by every
// rank together; run() is then one agreement and one collective. run()'s part must have the
// dtype, shape and device of the part given here (else every rank throws alike). `comm` must
// outlive the plan. The one-shot calls above are a plan made and run once.
class RankReducer {
 public:
  RankReducer(const Array& part, Communicator& comm, const ReduceOptions& options = {});
  ~RankReducer();
  RankReducer(RankReducer&&) noexcept;
  RankReducer& operator=(RankReducer&&) noexcept;
  ReduceResult run(const Array& part);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class RankHistogrammer {
 public:
  RankHistogrammer(const Array& part, Communicator& comm, const HistogramBins& bins = {},
                   const HistogramOptions& options = {});
  ~RankHistogrammer();
  RankHistogrammer(RankHistogrammer&&) noexcept;
  RankHistogrammer& operator=(RankHistogrammer&&) noexcept;
  HistogramResult run(const Array& part);
  // The same into `result`, whose vectors keep their memory from one run to the next.
  void run(const Array& part, HistogramResult& result);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How pairwise splits its work over `ranks`: the longer extent, so that each rank reads the
// least. `x` (when X ≥ Y and every rank gets at least one x): rank r computes C over its share
// of A against all of B, and the ranks gather their slices of C. `y`: every rank holds all of A
// and streams its share of B, and the ranks' partial C are added in float64, in rank order.
enum class PairwiseSplit { x, y };
PairwiseSplit pairwise_split(std::int64_t x, std::int64_t y, int ranks);
const char* pairwise_split_name(PairwiseSplit split);  // "x", "y"

// C[x] = Σ_y f(A[x], B[y]) over the ranks, with `a` and `b` 1-D float32 sources (X ≥ 1) that
// every rank opens; B streams through each rank in chunks. Every rank returns the whole C, the
// same bits for the same number of ranks and within the pattern's tolerance for any. With more
// than one rank both inputs must be files or memory (each rank reads its own part).
// stats->bytes counts this rank's reading of B.
PairwiseResult pairwise(Source& a, Source& b, const Device& device, Communicator& comm,
                        const PairwiseOptions& options = {}, const StreamOptions& stream = {},
                        StreamStats* stats = nullptr);

// Resident pairwise, split x: each rank holds its part of A (1-D float32, the parts stacked in
// rank order make A; a part may be empty) and all of B on its own device, computes C over its
// part, and every rank returns the whole C, each C[x] as the one-device call over that part
// gives it. time_ms: this rank's device time, when options.timed.
PairwiseResult pairwise(const Array& a_part, const Array& b, Communicator& comm,
                        const PairwiseOptions& options = {});

// The call above as a plan, for a loop over new parts of A (and B) of the same lengths: the
// agreement on the call, the parts' lengths, each rank's Pairwise plan, its slice of C and (NCCL)
// the gathered C on the device, all made once by every rank together; run() is then one
// agreement and one gather. run()'s parts must have
// the lengths and devices of those given here (else every rank throws alike). `comm` must
// outlive the plan.
class RankPairwise {
 public:
  RankPairwise(const Array& a_part, const Array& b, Communicator& comm,
               const PairwiseOptions& options = {});
  ~RankPairwise();
  RankPairwise(RankPairwise&&) noexcept;
  RankPairwise& operator=(RankPairwise&&) noexcept;
  PairwiseResult run(const Array& a_part, const Array& b);
  // The same with C written to `c`, x() floats of the caller's host memory, kept across runs;
  // returns time_ms. Page-locked memory (cudaMallocHost, torch's pin_memory) comes down several
  // times faster than pageable memory.
  double run(const Array& a_part, const Array& b, float* c);
  std::int64_t x() const;  // the whole C's length

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs `step` on this rank, then agrees with the others: when `step` threw on any rank, every
// rank throws the lowest failing rank's Error (its kind and message). For what a caller does
// before a distributed call, such as opening the input, so that a missing file on one rank
// stops them all.
void on_every_rank(Communicator& comm, const std::function<void()>& step);

}  // namespace parpat
