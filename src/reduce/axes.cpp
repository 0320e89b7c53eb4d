// numpy's axis argument: which axes a reduction folds, the result's shape, and the 2-D problem
// (with or without a gather) the kernels see (axes.hpp).
#include "reduce/axes.hpp"

#include <algorithm>
#include <string>

#include "parpat/error.hpp"

namespace parpat {

std::vector<int> reduced_axes(int ndim, const ReduceOptions& options) {
  std::vector<int> axes;
  if (!options.axes) {
    if (options.axis != Axis::all && ndim != 2)
      throw_invalid(std::string("axis ") + axis_name(options.axis) + " needs 2-D input, got " +
                    std::to_string(ndim) + "-D");
    if (options.axis == Axis::rows) return {1};
    if (options.axis == Axis::cols) return {0};
    for (int d = 0; d < ndim; ++d)
      axes.push_back(d);
    return axes;
  }
  if (options.axis != Axis::all)
    throw_invalid(std::string("axis ") + axis_name(options.axis) +
                  " and a list of axes were both given (give one)");
  if (is_arg_op(options.op) && options.axes->size() != 1)
    throw_invalid(std::string(reduce_op_name(options.op)) + " takes one axis or none (all), not " +
                  std::to_string(options.axes->size()) + " axes");
  for (int a : *options.axes) {
    if (a < -ndim || a >= ndim)
      throw_invalid("axis " + std::to_string(a) + " is out of bounds for array of dimension " +
                    std::to_string(ndim));
    axes.push_back(a < 0 ? a + ndim : a);
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw_invalid("duplicate value in 'axis' (axis " +
                  std::to_string(*std::adjacent_find(axes.begin(), axes.end())) + " given twice)");
  return axes;
}

std::vector<std::int64_t> reduce_result_shape(const std::vector<std::int64_t>& shape,
                                              const ReduceOptions& options) {
  const std::vector<int> axes = reduced_axes(static_cast<int>(shape.size()), options);
  std::vector<std::int64_t> out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int>(d));
    if (!reduced)
      out.push_back(shape[d]);
    else if (options.keepdims)
      out.push_back(1);
  }
  return out;
}

namespace detail {

namespace {

struct Dim {
  std::int64_t size, stride;  // stride in elements
  bool reduced;
};

// The input's axes without those of length 1, neighbours of one kind merged where one lies
// inside the other.
std::vector<Dim> merged_dims(const std::vector<std::int64_t>& shape,
                             std::vector<std::int64_t> strides, const std::vector<int>& axes) {
  if (strides.empty()) {
    strides.assign(shape.size(), 1);
    for (std::size_t d = shape.size() - 1; d > 0; --d)
      strides[d - 1] = strides[d] * shape[d];
  }
  std::vector<Dim> dims;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    Dim next{shape[d], strides[d],
             std::binary_search(axes.begin(), axes.end(), static_cast<int>(d))};
    if (!dims.empty() && dims.back().reduced == next.reduced &&
        dims.back().stride == next.size * next.stride) {
      dims.back() = {dims.back().size * next.size, next.stride, next.reduced};
    } else {
      dims.push_back(next);
    }
  }
  return dims;
}

void set_problem(AxesPlan& plan, Axis axis, std::int64_t rows, std::int64_t cols,
                 std::int64_t row_stride) {
  plan.axis = axis;
  plan.rows = rows;
  plan.cols = cols;
  plan.row_stride = row_stride;
}

// The dims in gather order, as the layout of the copy, and the copy's 2-D problem.
void plan_gather(AxesPlan& plan, const std::vector<Dim>& dims) {
  if (static_cast<int>(dims.size()) > kMaxGatherDims)
    throw_invalid("reduce takes at most " + std::to_string(kMaxGatherDims) +
                  " alternating groups of kept and reduced axes, this input has " +
                  std::to_string(dims.size()));
  // The innermost axis stays innermost: [reduced..., kept...] along cols when it is kept.
  const bool kept_inside = !dims.back().reduced;
  plan.gathers = true;
  for (bool reduced_first : {kept_inside, !kept_inside})
    for (const Dim& d : dims)
      if (d.reduced == reduced_first) {
        const auto k = static_cast<std::size_t>(plan.gather.ndim++);
        plan.gather.shape[k] = d.size;
        plan.gather.strides[k] = d.stride;
      }
  if (kept_inside)  // (a view of kept axes alone: each element its own output, 1 × outputs)
    set_problem(plan, Axis::cols, plan.extent, plan.outputs, plan.outputs);
  else if (plan.outputs == 1)  // a view of reduced axes alone (x[::2]): one output
    set_problem(plan, Axis::all, 1, plan.extent, plan.extent);
  else
    set_problem(plan, Axis::rows, plan.outputs, plan.extent, plan.extent);
}

}  // namespace

AxesPlan plan_reduce_axes(const std::vector<std::int64_t>& shape,
                          const std::vector<std::int64_t>& strides, const ReduceOptions& options,
                          bool read_steps) {
  AxesPlan plan;
  const std::vector<int> axes = reduced_axes(static_cast<int>(shape.size()), options);
  plan.result_shape = reduce_result_shape(shape, options);
  for (std::size_t d = 0; d < shape.size(); ++d)
    (std::binary_search(axes.begin(), axes.end(), static_cast<int>(d)) ? plan.extent
                                                                       : plan.outputs) *= shape[d];
  if (plan.outputs == 0 || plan.extent == 0) {  // answered without a kernel
    set_problem(plan, Axis::rows, plan.outputs, plan.extent, plan.extent);
    return plan;
  }
  const std::vector<Dim> dims = merged_dims(shape, strides, axes);
  if (dims.empty()) {  // a single element
    set_problem(plan, Axis::all, 1, 1, 1);
  } else if (dims.size() == 1 && dims[0].stride == 1) {
    if (dims[0].reduced)
      set_problem(plan, Axis::all, 1, dims[0].size, dims[0].size);
    else
      set_problem(plan, Axis::cols, 1, dims[0].size, dims[0].size);
  } else if (dims.size() == 2 && dims[1].stride == 1 && dims[0].stride >= dims[1].size &&
             (dims[0].reduced || dims[1].reduced)) {
    const Axis axis = dims[0].reduced == dims[1].reduced ? Axis::all
                      : dims[1].reduced                  ? Axis::rows
                                                         : Axis::cols;
    set_problem(plan, axis, dims[0].size, dims[1].size, dims[0].stride);
  } else if (read_steps && dims.size() == 1) {  // x[::s]
    set_problem(plan, dims[0].reduced ? Axis::all : Axis::cols, 1, dims[0].size, dims[0].size);
    plan.col_step = dims[0].stride;
  } else if (read_steps && dims.size() == 2 && dims[0].reduced != dims[1].reduced &&
             dims[1].stride != 1) {  // x[:, ::s] along either axis
    set_problem(plan, dims[1].reduced ? Axis::rows : Axis::cols, dims[0].size, dims[1].size,
                dims[0].stride);
    plan.col_step = dims[1].stride;
  } else {
    plan_gather(plan, dims);
  }
  return plan;
}

}  // namespace detail

}  // namespace parpat
