// The reduce policies' fields and per-device tables (src/reduce/tuning.hpp).
#include "reduce/tuning.hpp"

namespace parpat::detail {

const std::vector<Field<ReduceFastPolicy>>& ReduceFastPolicy::fields() {
  using P = ReduceFastPolicy;
  static const std::vector<Field<P>> f = {
      {"block", &P::block, power_of_two(32, 1024)},
      {"blocks_per_cu", &P::blocks_per_cu, range(1, 256)},
      {"arg_blocks_per_cu", &P::arg_blocks_per_cu, range(0, 256)},
      {"single_block_bytes", &P::single_block_bytes, range(0, kLarge)},
      {"single_block_items", &P::single_block_items, range(1, 8)},
      {"small_block", &P::small_block, multiple_of_32(32, 1024)},
      {"small_items", &P::small_items, range(1, 8)},
      {"cluster_bytes", &P::cluster_bytes, range(0, kLarge)},
      {"cluster_size", &P::cluster_size, range(1, 16)},
      {"overlap_launch", &P::overlap_launch, range(0, 1)},
      {"prefetch", &P::prefetch, range(0, 1)},
      {"rows_block", &P::rows_block, power_of_two(32, 1024)},
      {"rows_blocks_per_cu", &P::rows_blocks_per_cu, range(0, 256)},
      {"rows_grid_per_cu", &P::rows_grid_per_cu, range(1, 1024)},
      {"cols_block", &P::cols_block, power_of_two(32, 1024)},
      {"cols_blocks_per_cu", &P::cols_blocks_per_cu, range(1, 256)},
  };
  return f;
}

const std::vector<TableValue<ReduceFastPolicy>>& ReduceFastPolicy::table() {
  using P = ReduceFastPolicy;
  static const std::vector<TableValue<P>> t = {
      // Hopper: 2048 resident threads per SM; 4 blocks of 512 keep 128 KiB of loads in flight.
      // NVIDIA's OpenCL names the device as CUDA does ("NVIDIA H100 80GB HBM3").
      {Backend::cuda, Scope::device, "H100", &P::blocks_per_cu, 4},
      {Backend::cuda, Scope::device, "H200", &P::blocks_per_cu, 4},
      {Backend::opencl, Scope::device, "H100", &P::block, 512},
      {Backend::opencl, Scope::device, "H100", &P::blocks_per_cu, 4},
      {Backend::opencl, Scope::device, "H200", &P::block, 512},
      {Backend::opencl, Scope::device, "H200", &P::blocks_per_cu, 4},
      // Arg ops take 84 registers on NVIDIA OpenCL: one group of 512 per compute unit.
      // Measured: reduce-opencl-arg-grid.
      {Backend::opencl, Scope::device, "H100", &P::arg_blocks_per_cu, 1},
      {Backend::opencl, Scope::device, "H200", &P::arg_blocks_per_cu, 1},
      // Small inputs (measured: reduce-fast-small): on OpenCL one group up to 32 KiB, then
      // about 2 vectors per work-item.
      {Backend::opencl, Scope::any, "", &P::single_block_bytes, 32768},
      {Backend::opencl, Scope::any, "", &P::small_items, 2},
      // sm_90: up to 1 MiB as one cluster of 16 blocks. Measured: reduce-fast-cluster,
      // reduce-fast-prefetch.
      {Backend::cuda, Scope::architecture, "sm_90", &P::cluster_bytes, 1 << 20},
      // Axis rows on OpenCL: 8 groups of 256 per compute unit (2048 threads per SM on NVIDIA).
      // Measured: reduce-fast-rows, reduce-opencl-rows-grid.
      {Backend::opencl, Scope::any, "", &P::rows_blocks_per_cu, 8},
  };
  return t;
}

const std::vector<Field<ReduceTreePolicy>>& ReduceTreePolicy::fields() {
  static const std::vector<Field<ReduceTreePolicy>> f = {
      {"block", &ReduceTreePolicy::block, power_of_two(32, 1024)}};
  return f;
}
const std::vector<Field<ReduceSerialPolicy>>& ReduceSerialPolicy::fields() {
  static const std::vector<Field<ReduceSerialPolicy>> f = {
      {"block", &ReduceSerialPolicy::block, power_of_two(32, 1024)},
      {"items", &ReduceSerialPolicy::items, range(2, 1 << 20)},
  };
  return f;
}
const std::vector<Field<ReduceGridStridePolicy>>& ReduceGridStridePolicy::fields() {
  static const std::vector<Field<ReduceGridStridePolicy>> f = {
      {"block", &ReduceGridStridePolicy::block, power_of_two(32, 1024)},
      {"blocks_per_cu", &ReduceGridStridePolicy::blocks_per_cu, range(1, 256)},
  };
  return f;
}
const std::vector<Field<ReduceAtomicPolicy>>& ReduceAtomicPolicy::fields() {
  static const std::vector<Field<ReduceAtomicPolicy>> f = {
      {"block", &ReduceAtomicPolicy::block, power_of_two(32, 1024)},
      {"blocks_per_cu", &ReduceAtomicPolicy::blocks_per_cu, range(1, 256)},
  };
  return f;
}
const std::vector<Field<ReduceParallelPolicy>>& ReduceParallelPolicy::fields() {
  static const std::vector<Field<ReduceParallelPolicy>> f = {
      {"chunk", &ReduceParallelPolicy::chunk, range(1, kLarge)},
      {"min_chunk", &ReduceParallelPolicy::min_chunk, range(1, kLarge)},
      {"tasks", &ReduceParallelPolicy::tasks, range(1, 4096)},
  };
  return f;
}
void reduce_tuning_policies(TuningCatalog& catalog) {
  catalog.add<ReduceFastPolicy>();
  catalog.add<ReduceTreePolicy>();
  catalog.add<ReduceSerialPolicy>();
  catalog.add<ReduceGridStridePolicy>();
  catalog.add<ReduceAtomicPolicy>();
  catalog.add<ReduceParallelPolicy>();
}

}  // namespace parpat::detail
