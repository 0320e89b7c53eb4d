// The pairwise policies' fields and per-device tables (src/pairwise/tuning.hpp).
#include "pairwise/tuning.hpp"

namespace parpat::detail {

const std::vector<Field<PairwiseFastPolicy>>& PairwiseFastPolicy::fields() {
  using P = PairwiseFastPolicy;
  static const std::vector<Field<P>> f = {
      {"block", &P::block, range(1, 1024)},
      {"gaussian_block", &P::gaussian_block, range(1, 1024)},
      {"product_items", &P::product_items, power_of_two(4, 16)},
      {"gaussian_items", &P::gaussian_items, power_of_two(4, 16)},
      {"split_threads_per_cu", &P::split_threads_per_cu, range(32, 1 << 16)},
      {"split_items", &P::split_items, one_of({0, 4, 8, 16})},
      {"combine_in_kernel", &P::combine_in_kernel, range(0, 1)},
  };
  return f;
}
// NVIDIA's OpenCL sums the slices in the same launch, over fewer threads per compute unit.
const std::vector<TableValue<PairwiseFastPolicy>>& PairwiseFastPolicy::table() {
  using P = PairwiseFastPolicy;
  static const std::vector<TableValue<P>> t = {
      {Backend::opencl, Scope::any, "", &P::split_threads_per_cu, 256},
      {Backend::opencl, Scope::any, "", &P::combine_in_kernel, 1},
  };
  return t;
}

const std::vector<Field<PairwiseSimplePolicy>>& PairwiseSimplePolicy::fields() {
  static const std::vector<Field<PairwiseSimplePolicy>> f = {
      {"block", &PairwiseSimplePolicy::block, range(1, 1024)}};
  return f;
}
const std::vector<Field<PairwiseShortcutPolicy>>& PairwiseShortcutPolicy::fields() {
  static const std::vector<Field<PairwiseShortcutPolicy>> f = {
      {"group_sum_max_y", &PairwiseShortcutPolicy::group_sum_max_y, range(0, kLarge)}};
  return f;
}
const std::vector<Field<PairwiseOpenclPolicy>>& PairwiseOpenclPolicy::fields() {
  static const std::vector<Field<PairwiseOpenclPolicy>> f = {
      {"ptx_exp2", &PairwiseOpenclPolicy::ptx_exp2, range(0, 1)}};
  return f;
}
const std::vector<Field<PairwiseParallelPolicy>>& PairwiseParallelPolicy::fields() {
  using P = PairwiseParallelPolicy;
  static const std::vector<Field<P>> f = {
      {"block", &P::block, range(1, 1 << 24)},
      {"tile", &P::tile, range(1, 1 << 24)},
  };
  return f;
}
void pairwise_tuning_policies(TuningCatalog& catalog) {
  catalog.add<PairwiseFastPolicy>();
  catalog.add<PairwiseSimplePolicy>();
  catalog.add<PairwiseShortcutPolicy>();
  catalog.add<PairwiseOpenclPolicy>();
  catalog.add<PairwiseParallelPolicy>();
}

}  // namespace parpat::detail
