// The CUDA barrier methods' tuning policies (runtime/tuning.hpp says how a policy is resolved):
// the defaults are the member initialisers, the tables the values that differ per device.
// Measured: bench/tuning/measurements.json, barrier-flip.
#pragma once

#include <vector>

#include "runtime/tuning.hpp"

namespace parpat::detail {

// `flip` and the global level of `hierarchical`, by the number of arrivals (one per block, or
// one per warp: the library's `flip` launches its warp-arrival kernel for blocks up to
// `warp_arrivals_block_max` threads; users choose by type, WarpGridBarrier):
// - one word up to `one_level_max` arrivals, above it sub-words of `subword_blocks` arrivals
//   (0: about √arrivals); arrivals by `red` (no return) up to `red_arrivals_max`;
// - from `table_from` to `table_max` arrivals a table of words: rows from `table_rows_from`
//   (one per `arrivals_per_row`, at most `table_rows_max`), `table_columns` to
//   `table_columns_max` columns (one per `arrivals_per_column`), rows `table_stride_lines`
//   cache lines apart, polls delayed `table_poll_delay` cycles;
// - release on `release_lines` lines from `release_lines_from` arrivals; polls delayed
//   `poll_delay_cycles` from `poll_delay_from` arrivals, sleeping `poll_sleep_ns` between
//   polls from `poll_sleep_from`; the bound checked every `poll_check_every` polls.
// The layout it gives a grid is parpat::cuda::GridBarrierLayout
// (parpat/cuda/grid_barrier_words.cuh), made by flip_layout (barrier/cuda/plan.cuh) for the
// library's `flip` and users' kernels alike.
struct BarrierFlipPolicy {
  static constexpr const char* kName = "barrier.flip";
  int warp_arrivals_block_max = 32;
  int one_level_max = 1100;
  int subword_blocks = 0;
  int red_arrivals_max = 160;
  int poll_check_every = 1024;
  int poll_sleep_ns = 32;
  int poll_sleep_from = 1000;
  int release_lines = 4;
  int release_lines_from = 1500;
  int poll_delay_from = 1000;
  int poll_delay_cycles = 900;
  int table_from = 100;
  int table_max = 2200;
  int table_rows_from = 500;
  int arrivals_per_row = 132;
  int table_rows_max = 8;
  int table_columns = 4;
  int arrivals_per_column = 132;
  int table_columns_max = 8;
  int table_stride_lines = 128;
  int table_poll_delay = 200;
  static const std::vector<Field<BarrierFlipPolicy>>& fields();
  static const std::vector<TableValue<BarrierFlipPolicy>>& table();
};

// `hierarchical`: the largest cluster (a power of two up to 16; above 8 is non-portable).
struct BarrierHierarchicalPolicy : SameOnEveryDevice<BarrierHierarchicalPolicy> {
  static constexpr const char* kName = "barrier.hierarchical";
  int cluster = 8;
  static const std::vector<Field<BarrierHierarchicalPolicy>>& fields();
};

}  // namespace parpat::detail
