// The layout the patterns other than reduce read: dense C order (Array::contiguous).
#pragma once

#include <string>

#include "parpat/array.hpp"
#include "parpat/error.hpp"

namespace parpat::detail {

// Throws Error(invalid_argument) naming `what` (e.g. "histogram's weights") when `a` is a strided
// view or has gaps between its rows.
inline void require_contiguous(const Array& a, const std::string& what) {
  if (!a.contiguous())
    throw_invalid(what + " must be contiguous (C order, no gaps between rows; of the patterns, " +
                  "only reduce reads strided views)");
}

}  // namespace parpat::detail
