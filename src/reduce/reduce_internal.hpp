// What the reduce dispatch and its backends share: the problem description, the kernel
// interface each variant implements and the per-backend variant tables.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "parpat/reduce.hpp"
#include "parpat/registry.hpp"
#include "runtime/variant_tables.hpp"

namespace parpat::detail {

struct ReduceShape {
  DType dtype = DType::float32;
  ReduceOp op = ReduceOp::sum;
  Axis axis = Axis::all;
  std::int64_t rows = 1, cols = 0, row_stride = 0;
  double ddof = 0;           // var and std
  bool raw_moments = false;  // moment ops: write Moments, not the statistic (streamed chunks)
  // Elements between neighbours of a row: > 1 for strided views read in place, which only a
  // variant that reads_steps is given (axis all of one row, or axis rows).
  std::int64_t col_step = 1;

  std::int64_t size() const { return rows * cols; }
  std::int64_t outputs() const { return axis == Axis::all ? 1 : axis == Axis::rows ? rows : cols; }
  // Elements that fold into one output.
  std::int64_t extent() const {
    return axis == Axis::all ? size() : axis == Axis::rows ? cols : rows;
  }
  bool contiguous() const { return col_step == 1 && (rows <= 1 || row_stride == cols); }
};

// One variant bound to one shape on one device; construction sizes its workspace once.
// run() enqueues the reduction of `in` into `values` (result dtype) and, for arg ops,
// `indices` (int64). Kernels only ever see non-empty extents.
class ReduceKernel {
 public:
  virtual ~ReduceKernel() = default;
  virtual void run(const Buffer& in, const Buffer& values, const Buffer& indices) = 0;
};

struct ReduceVariant {
  VariantInfo info;
  bool (*supports)(const ReduceShape& shape, const DeviceInfo& device);
  std::unique_ptr<ReduceKernel> (*make)(const Device& device, const ReduceShape& shape);
  bool reads_steps = false;  // takes shapes with col_step > 1 (where `supports` says so)
};

std::vector<ReduceVariant> cpu_reduce_variants();
std::vector<ReduceVariant> cuda_reduce_variants();
std::vector<ReduceVariant> opencl_reduce_variants();

// The variant `name` of `backend`, or Error(invalid_argument) naming the ones that exist.
const ReduceVariant& find_reduce_variant(Backend backend, const std::string& name);

struct Moments;
enum class Statistic;

// The kernel of variant `name` (empty: the backend's default) for a non-empty shape, or
// Error(unsupported) when the variant does not cover it.
std::unique_ptr<ReduceKernel> make_reduce_kernel(const Device& device, const ReduceShape& shape,
                                                 const std::string& name);

// mean, var or std for the moment ops (their nan forms too); nothing for the others.
std::optional<Statistic> statistic_of(ReduceOp op);
// Error(invalid_argument) unless ddof is finite and ≥ 0.
void check_ddof(double ddof);
// sum, prod, min, max, argmin and argmax: the ops every variant implements.
bool is_basic_reduce_op(ReduceOp op);
bool is_nan_reduce_op(ReduceOp op);
// The op a nan-op applies to the elements that are not NaN (nanvar: var); others unchanged.
ReduceOp plain_reduce_op(ReduceOp op);
// What `outputs` empty extents reduce to (result dtype), or Error(invalid_argument) for the ops
// that have no identity.
std::vector<unsigned char> empty_reduce_values(DType dtype, ReduceOp op, std::int64_t outputs);
// The statistic of op (mean, var, std; their nan forms) from each output's Moments, as `result`.
void write_statistics(const Moments* moments, ReduceOp op, double ddof, DType result,
                      std::int64_t outputs, void* values);
// nanargmin / nanargmax of an all-NaN extent (index INT64_MAX): numpy's error.
void check_nan_arg_found(ReduceOp op, const std::vector<std::int64_t>& indices);

// The CPU reference: float64 / 64-bit accumulation, compensated float sums, written for
// clarity. `values` receives outputs() elements of the result dtype, `indices` (arg ops) as
// many int64.
void reduce_reference(const void* in, const ReduceShape& shape, void* values,
                      std::int64_t* indices);

}  // namespace parpat::detail
