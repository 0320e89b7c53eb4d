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
