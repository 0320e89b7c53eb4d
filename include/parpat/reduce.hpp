// parpat/reduce.hpp — reductions with numpy's semantics on every backend.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parpat/array.hpp"

namespace parpat {

// numpy's reductions of the same names. The nan-ops skip NaN elements (on integer input they are
// the plain op); mean, var and std (and their nan forms) accumulate in float64 in one pass.
enum class ReduceOp {
  sum,
  prod,
  min,
  max,
  argmin,
  argmax,
  mean,
  var,
  std,
  nansum,
  nanprod,
  nanmin,
  nanmax,
  nanargmin,
  nanargmax,
  nanmean,
  nanvar,
  nanstd,
  count_nonzero,
  any,
  all
};
// The names of the 2-D axes (ReduceOptions::axes takes numpy's axis argument for any shape).
enum class Axis { all, rows, cols };  // rows: one result per row (numpy axis=1); cols: axis=0

const char* reduce_op_name(ReduceOp op);
ReduceOp parse_reduce_op(const std::string& name);
const char* axis_name(Axis axis);
Axis parse_axis(const std::string& name);
bool is_arg_op(ReduceOp op);  // argmin, argmax, nanargmin, nanargmax

// The dtype of a reduction's values: integer sum/prod (and nansum/nanprod) widen to int64
// (signed input) or uint64 (unsigned) and wrap modulo 2^64; floats keep their type; min/max/arg
// ops keep the input type; mean, var and std give float64 for integer input and the input's type
// for floats (computed in float64, then rounded); count_nonzero gives int64; any and all give
// bool (NaN is non-zero, so it counts as true, as in numpy).
// A NaN wins min and max (arg ops: the first NaN). −0.0 and +0.0 are equal, so which zero a min
// or max returns depends on the variant's fold order, as in numpy. Empty input (or an all-NaN
// one for the nan-ops): mean, var and std give NaN, count_nonzero 0, nansum 0, nanprod 1,
// any false, all true;
// min, max and the arg ops throw, and so do nanargmin/nanargmax of an all-NaN input ("All-NaN
// slice encountered"; a Reducer writes index INT64_MAX there), while nanmin/nanmax give NaN.
DType reduce_result_dtype(DType input, ReduceOp op);

// One value of some dtype, exactly as the device produced it.
struct Scalar {
  DType dtype = DType::float64;
  std::int64_t i = 0;   // valid for signed integer dtypes
  std::uint64_t u = 0;  // valid for unsigned integer dtypes and bool (0 or 1)
  double f = 0;         // valid for float dtypes (float32 values are exact in a double)

  static Scalar from_bytes(DType dtype, const void* p);
  double as_double() const;
  std::string to_string() const;  // shortest text that reads back as the same value (bool: True)
};

struct ReduceOptions {
  ReduceOp op = ReduceOp::sum;
  Axis axis = Axis::all;
  std::string variant;  // empty: the backend's default (`fast` on GPUs, `parallel` on the CPU)
  // true: time the call with events of its own (time_ms); false (default): enqueue only the
  // pattern's work and leave time_ms 0.
  bool timed = false;
  // var and std (and nanvar, nanstd) divide by n − ddof, as numpy: ddof ≥ n gives inf for a
  // positive sum of squares and NaN otherwise (nanvar and nanstd: always NaN).
  double ddof = 0;
  // numpy's axis argument for an input of any number of dimensions; when set, `axis` must be
  // Axis::all. The axes to reduce, in any order, negative ones counting from the end (−1: the
  // last); an empty list reduces no axis (each element is its own output, numpy's axis=()).
  // Unset: `axis` says what is reduced (all: every axis, numpy's axis=None). An axis out of
  // range or given twice is an Error(invalid_argument), and so are arg ops with other than one
  // axis (they take None or one axis, as numpy; their index counts along that axis).
  std::optional<std::vector<int>> axes = std::nullopt;
  // The result keeps each reduced axis as a dimension of length 1 (numpy's keepdims).
  bool keepdims = false;
};

struct ReduceResult {
  DType dtype = DType::float64;  // reduce_result_dtype(input, op)
  // numpy's shape of the result: the input's axes that were not reduced, in order, with a 1 for
  // each reduced one under keepdims ({} for a single value without keepdims).
  std::vector<std::int64_t> shape;
  std::vector<Scalar> values;         // Π shape values in C order (1 for axis all)
  std::vector<std::int64_t> indices;  // arg ops: first extreme (first NaN), else empty
  double time_ms = 0;                 // device time of the reduction (options.timed), else 0
};

// The axes `options` reduce of an input of `ndim` dimensions, non-negative and ascending
// (Axis rows: {1}, cols: {0} of a 2-D input; all: every axis), or Error(invalid_argument) with
// numpy's reason ("axis 3 is out of bounds for array of dimension 3", "duplicate value in
// 'axis'", an arg op with several axes, rows or cols of an input that is not 2-D).
std::vector<int> reduced_axes(int ndim, const ReduceOptions& options);
// numpy's shape of the result of reducing an input of `shape` with `options` (see ReduceResult).
std::vector<std::int64_t> reduce_result_shape(const std::vector<std::int64_t>& shape,
                                              const ReduceOptions& options);

// Reduces `in` on its own device. Reductions whose kept and reduced axes interleave (axes
// {0, 2} of a 3-D input), and strided views other than rows of contiguous elements, first
// gather the input into a dense device copy with the reduced axes next to each other (as much
// device memory again as the view's elements). Throws Error(invalid_argument) for
// bad axes, an empty extent of min/max/argmin/argmax (numpy's rule: an empty result, when no
// output remains, is no error), an unknown variant or one that does not cover this case.
ReduceResult reduce(const Array& in, const ReduceOptions& options = {});

// A reduction bound to one device, input shape and options, with its workspace sized once:
// run() only enqueues work and allocates nothing, so it can sit in a hot loop or a benchmark.
class Reducer {
 public:
  Reducer(const Device& device, DType dtype, std::vector<std::int64_t> shape,
          std::int64_t row_stride, const ReduceOptions& options);
  // A plan for strided views (Array::strided_view) of these element strides, ≥ 0, one per axis.
  Reducer(const Device& device, DType dtype, std::vector<std::int64_t> shape,
          std::vector<std::int64_t> strides, const ReduceOptions& options);
  ~Reducer();
  Reducer(Reducer&&) noexcept;
  Reducer& operator=(Reducer&&) noexcept;

  // Enqueues the reduction of `in` into `values` (result dtype, one per output) and, for arg
  // ops, `indices` (int64), on `stream` (default: the device's own). Asynchronous on GPU
  // backends. The arrays must be of the plan's device and the outputs large enough.
  void run(const Array& in, const Buffer& values, const Buffer& indices, Stream stream = {});
  std::int64_t outputs() const;
  DType result_dtype() const;
  const std::vector<std::int64_t>& result_shape() const;  // numpy's (ReduceResult::shape)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parpat
