// The reduce variants' tuning policies (runtime/tuning.hpp says how a policy is resolved): the
// defaults are the member initialisers, the tables the values that differ per device. Why each
// value: bench/tuning/measurements.json.
#pragma once

#include <vector>

#include "runtime/tuning.hpp"

namespace parpat::detail {

// `fast` on CUDA and OpenCL.
struct ReduceFastPolicy {
  static constexpr const char* kName = "reduce.fast";
  // The bandwidth-bound grid: blocks of `block` threads (OpenCL; CUDA's are kFastBlock, the
  // kernel's launch bound), `blocks_per_cu` per compute unit (OpenCL arg ops:
  // `arg_blocks_per_cu`, 0 for the same).
  int block = 256;
  int blocks_per_cu = 8;
  int arg_blocks_per_cu = 0;
  // Small inputs are latency-bound: one block up to `single_block_bytes` (`single_block_items`
  // 16-byte loads per thread), then blocks of `small_block` threads (CUDA) with about
  // `small_items` loads each over as many compute units as the data covers.
  int single_block_bytes = 65536;
  int single_block_items = 8;
  int small_block = 256;
  int small_items = 4;
  // CUDA sm_90: inputs up to `cluster_bytes` run as one cluster of `cluster_size` blocks; every
  // launch overlaps the kernel before it, and the small forms prefetch their first loads to L2.
  int cluster_bytes = 0;
  int cluster_size = 16;
  int overlap_launch = 1;
  int prefetch = 1;
  // Axis rows: CUDA 0 is one block of 256 per row, n is n resident blocks per SM striding over
  // rows; OpenCL groups of `rows_block`, `rows_blocks_per_cu` per compute unit, and up to
  // `rows_grid_per_cu` per compute unit with a slice per row.
  int rows_block = 256;
  int rows_blocks_per_cu = 0;
  int rows_grid_per_cu = 128;
  // Axis cols (OpenCL): work-items of 16-byte strips.
  int cols_block = 128;
  int cols_blocks_per_cu = 8;

  static const std::vector<Field<ReduceFastPolicy>>& fields();
  static const std::vector<TableValue<ReduceFastPolicy>>& table();
};

// The classic variants: `tree` (a tree in shared memory per block, relaunched), `serial` (`items`
// values per thread first), `gridstride` and `atomic` (a grid of `blocks_per_cu` per compute
// unit).
struct ReduceTreePolicy : SameOnEveryDevice<ReduceTreePolicy> {
  static constexpr const char* kName = "reduce.tree";
  int block = 256;
  static const std::vector<Field<ReduceTreePolicy>>& fields();
};

struct ReduceSerialPolicy : SameOnEveryDevice<ReduceSerialPolicy> {
  static constexpr const char* kName = "reduce.serial";
  int block = 256;
  int items = 64;
  static const std::vector<Field<ReduceSerialPolicy>>& fields();
};

struct ReduceGridStridePolicy : SameOnEveryDevice<ReduceGridStridePolicy> {
  static constexpr const char* kName = "reduce.gridstride";
  int block = 256;
  int blocks_per_cu = 8;
  static const std::vector<Field<ReduceGridStridePolicy>>& fields();
};

struct ReduceAtomicPolicy : SameOnEveryDevice<ReduceAtomicPolicy> {
  static constexpr const char* kName = "reduce.atomic";
  int block = 256;
  int blocks_per_cu = 8;
  static const std::vector<Field<ReduceAtomicPolicy>>& fields();
};

// The CPU's `parallel`: chunks of `min_chunk` to `chunk` elements, at least `tasks` of them
// where the input allows. Measured: bench/tuning/measurements.json, reduce-cpu-chunks.
struct ReduceParallelPolicy : SameOnEveryDevice<ReduceParallelPolicy> {
  static constexpr const char* kName = "reduce.parallel";
  int chunk = 1 << 16;
  int min_chunk = 4096;
  int tasks = 16;
  static const std::vector<Field<ReduceParallelPolicy>>& fields();
};

}  // namespace parpat::detail
