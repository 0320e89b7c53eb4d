// What the reduce dispatch and its backends share: the problem description, the kernel
// interface each variant implements and the per-backend variant tables.
#pragma once

#include <cstdint>
#include <memory>
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

  std::int64_t size() const { return rows * cols; }
  std::int64_t outputs() const { return axis == Axis::all ? 1 : axis == Axis::rows ? rows : cols; }
  // Elements that fold into one output.
  std::int64_t extent() const {
    return axis == Axis::all ? size() : axis == Axis::rows ? cols : rows;
  }
  bool contiguous() const { return rows <= 1 || row_stride == cols; }
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
};

std::vector<ReduceVariant> cpu_reduce_variants();
std::vector<ReduceVariant> cuda_reduce_variants();
std::vector<ReduceVariant> opencl_reduce_variants();

// The variant `name` of `backend`, or Error(invalid_argument) naming the ones that exist.
const ReduceVariant& find_reduce_variant(Backend backend, const std::string& name);

// The CPU reference: float64 / 64-bit accumulation, compensated float sums, written for
// clarity. `values` receives outputs() elements of the result dtype, `indices` (arg ops) as
// many int64.
void reduce_reference(const void* in, const ReduceShape& shape, void* values,
                      std::int64_t* indices);

}  // namespace parpat::detail
