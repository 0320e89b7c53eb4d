// Array layouts: the one the patterns other than reduce read (dense C order,
// Array::contiguous) and the copy into it, and element strides checked once for strided views
// and reduce's plans.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "runtime/strided_gather.hpp"

namespace parpat::detail {

// Throws Error(invalid_argument) naming `what` (e.g. "each rank's part") when `a` is a strided
// view or has gaps between its rows.
inline void require_contiguous(const Array& a, const std::string& what) {
  if (!a.contiguous()) throw_invalid(what + " must be contiguous (C order, no gaps between rows)");
}

// The step, in elements, from each element of `a` to the next in C order where it is the same
// throughout, else 0: 1 for a contiguous array, s for x[::s] of a 1-D x or for a 2-D view whose
// rows follow on at the same step. Arrays of at most one element take step 1.
inline std::int64_t uniform_step(const Array& a) {
  if (a.size() <= 1 || a.contiguous()) return 1;  // no strides to make: a plan's runs allocate none
  const std::vector<std::int64_t> strides = a.strides();
  std::int64_t step = 0, next = 0;  // next: the stride the next outer axis must have
  for (std::size_t d = strides.size(); d-- > 0;) {
    const std::int64_t length = a.shape()[d];
    if (length == 1) continue;
    if (step == 0) {
      if (strides[d] <= 0) return 0;
      step = strides[d];
    } else if (strides[d] != next) {
      return 0;
    }
    next = strides[d] * length;
  }
  return step;
}

// How histogram, histogramdd and pairwise read strided views and rows with gaps: a plan keeps one
// DenseCopy per input, so its runs reuse the gather (made again only for another layout) and the
// scratch memory it fills (replaced only by a larger buffer).
class DenseCopy {
 public:
  // `a`'s elements in dense C order: `a` itself when it is contiguous, else a view of the scratch
  // (on a's device) that the strided gather fills, enqueued on the calling thread's stream or
  // queue.
  Array of(const Array& a);

 private:
  Buffer scratch_;
  std::unique_ptr<Gather> gather_;
  GatherLayout layout_;  // gather_'s, for items of item_ bytes
  std::size_t item_ = 0;
};

// `strides` (in elements, one per axis of `shape`) checked (the count, none negative), with the
// stride of each axis of length 1 (of every axis, when one has length 0) set to 0: equal
// layouts give equal vectors. Throws Error(invalid_argument) otherwise.
std::vector<std::int64_t> checked_strides(const std::vector<std::int64_t>& shape,
                                          std::vector<std::int64_t> strides);

}  // namespace parpat::detail
