// The pairwise variants' tuning policies (runtime/tuning.hpp says how a policy is resolved): the
// defaults are the member initialisers, the tables the values that differ per device. Why each
// value: bench/tuning/measurements.json.
#pragma once

#include <vector>

#include "runtime/tuning.hpp"

namespace parpat::detail {

// `fast` (measured on H100): the product in blocks of `block` with `product_items` x per thread
// (90.6 % of the FMA peak; 8 x: 88 %), the gaussian in blocks of `gaussian_block` (CUDA) with
// `gaussian_items` x. When X cannot fill the device, B is split into slices for
// `split_threads_per_cu` threads per compute unit, with `split_items` x per thread (0: as
// above), the slices summed by a last block in the same launch where `combine_in_kernel`.
// Measured: pairwise-split.
struct PairwiseFastPolicy {
  static constexpr const char* kName = "pairwise.fast";
  int block = 256;
  int gaussian_block = 1024;
  int product_items = 16;
  int gaussian_items = 8;
  int split_threads_per_cu = 1024;
  int split_items = 4;
  int combine_in_kernel = 0;
  static const std::vector<Field<PairwiseFastPolicy>>& fields();
  static const std::vector<TableValue<PairwiseFastPolicy>>& table();
};

// The classic GPU variants.
struct PairwiseSimplePolicy : SameOnEveryDevice<PairwiseSimplePolicy> {
  static constexpr const char* kName = "pairwise.simple";
  int block = 256;
  static const std::vector<Field<PairwiseSimplePolicy>>& fields();
};

// The product shortcut A[x]·ΣB in one launch for B of at most `group_sum_max_y` values.
// Measured: pairwise-shortcut.
struct PairwiseShortcutPolicy : SameOnEveryDevice<PairwiseShortcutPolicy> {
  static constexpr const char* kName = "pairwise.shortcut";
  int group_sum_max_y = 16384;
  static const std::vector<Field<PairwiseShortcutPolicy>>& fields();
};

// NVIDIA's OpenCL takes the gaussian's exp2 as PTX (native_exp2 was 1.11× slower).
struct PairwiseOpenclPolicy : SameOnEveryDevice<PairwiseOpenclPolicy> {
  static constexpr const char* kName = "pairwise.opencl";
  int ptx_exp2 = 1;
  static const std::vector<Field<PairwiseOpenclPolicy>>& fields();
};

// The CPU's `parallel`: blocks of `block` x, B in tiles of `tile`.
struct PairwiseParallelPolicy : SameOnEveryDevice<PairwiseParallelPolicy> {
  static constexpr const char* kName = "pairwise.parallel";
  int block = 256;
  int tile = 4096;
  static const std::vector<Field<PairwiseParallelPolicy>>& fields();
};

}  // namespace parpat::detail
