// numpy's axis argument on the reduce kernels, which know three 2-D problems: all, rows (one
// output per row) and cols (one output per column). An N-D reduction is brought to one of them:
// axes of length 1 are dropped, and neighbouring axes that are both kept or both reduced (and
// laid out one inside the other) merge into one. What remains is
//   [R]      → all                 [K, R] → rows of K × R        [R, K] → cols of R × K
//   [K]      → cols of 1 × K (each element its own output)
// all on the input itself, with no copy. A variant that reads steps (ReduceVariant::reads_steps)
// also takes the forms [R], [K], [K, R] and [R, K] whose innermost axis has a stride s ≠ 1 in
// place, as rows whose elements are s apart (x[::s]; x[:, ::s] along either axis).
// Anything else ([K1, R, K2], [R1, K, R2], an innermost
// axis of stride ≠ 1 such as a 1-D step or a column of a 2-D input with a row stride, rows that
// overlap, a broadcast axis of stride 0) is first gathered on the device into a dense copy whose
// reduced axes sit together: [reduced..., kept...] reduced along cols when the innermost axis is
// kept, else [kept..., reduced...] along rows, so the innermost axis stays innermost and the gather
// reads and writes it in order. Arg ops reduce one axis, which stays one axis in every form, so
// their index counts along it.
#pragma once

#include <cstdint>
#include <vector>

#include "reduce/reduce_internal.hpp"
#include "runtime/strided_gather.hpp"

namespace parpat::detail {

struct AxesPlan {
  std::vector<std::int64_t> result_shape;  // numpy's, keepdims honoured
  std::int64_t outputs = 1;                // Π kept axes
  std::int64_t extent = 1;                 // Π reduced axes: elements per output
  // The 2-D problem the kernels reduce (outputs() and extent() of it are the two above), on the
  // input itself or, when `gathers`, on the gathered copy (dense, row_stride == cols).
  Axis axis = Axis::all;
  std::int64_t rows = 1, cols = 1, row_stride = 1;
  std::int64_t col_step = 1;  // ≠ 1: a row's elements are this many apart (read_steps)
  bool gathers = false;
  GatherLayout gather;  // input → copy, when `gathers`
};

// The plan for reducing an input of `shape` whose axes are `strides` elements apart (≥ 0, one
// per axis; empty: C order) with options.axis / options.axes / options.keepdims; `read_steps`:
// rows of elements apart are read in place where they can be (for a variant that reads steps).
// Throws Error(invalid_argument) for bad axes.
AxesPlan plan_reduce_axes(const std::vector<std::int64_t>& shape,
                          const std::vector<std::int64_t>& strides, const ReduceOptions& options,
                          bool read_steps);

}  // namespace parpat::detail
