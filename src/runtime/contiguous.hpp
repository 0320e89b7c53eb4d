// Array layouts: the one the patterns other than reduce read (dense C order,
// Array::contiguous) and the copy into it, and element strides checked once for strided views
// and reduce's plans.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/error.hpp"

namespace parpat::detail {

// Throws Error(invalid_argument) naming `what` (e.g. "each rank's part") when `a` is a strided
// view or has gaps between its rows.
inline void require_contiguous(const Array& a, const std::string& what) {
  if (!a.contiguous()) throw_invalid(what + " must be contiguous (C order, no gaps between rows)");
}

// `a`'s elements in dense C order: `a` itself when it is contiguous, else a view of `scratch`
// (on a's device; replaced by a larger buffer when it is too small) that the strided gather fills,
// enqueued on the calling thread's stream or queue. What histogram, histogramdd and pairwise read
// strided views and rows with gaps through; their plans keep the scratch between runs.
Array dense(const Array& a, Buffer& scratch);

// `strides` (in elements, one per axis of `shape`) checked (the count, none negative), with the
// stride of each axis of length 1 (of every axis, when one has length 0) set to 0: equal
// layouts give equal vectors. Throws Error(invalid_argument) otherwise.
std::vector<std::int64_t> checked_strides(const std::vector<std::int64_t>& shape,
                                          std::vector<std::int64_t> strides);

}  // namespace parpat::detail
