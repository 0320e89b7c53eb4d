// The barrier policies' fields and per-device tables (src/barrier/tuning.hpp).
#include "barrier/tuning.hpp"

namespace parpat::detail {

const std::vector<Field<BarrierFlipPolicy>>& BarrierFlipPolicy::fields() {
  using P = BarrierFlipPolicy;
  static const std::vector<Field<P>> f = {
      {"warp_arrivals_block_max", &P::warp_arrivals_block_max, range(0, 1024)},
      {"one_level_max", &P::one_level_max, range(0, kLarge)},
      {"subword_blocks", &P::subword_blocks, range(0, kLarge)},
      {"red_arrivals_max", &P::red_arrivals_max, range(0, kLarge)},
      {"poll_check_every", &P::poll_check_every, range(4, 1 << 20)},
      {"poll_sleep_ns", &P::poll_sleep_ns, range(0, 1000000)},
      {"poll_sleep_from", &P::poll_sleep_from, range(0, kLarge)},
      {"release_lines", &P::release_lines, range(0, 32)},
      {"release_lines_from", &P::release_lines_from, range(0, kLarge)},
      {"poll_delay_from", &P::poll_delay_from, range(0, kLarge)},
      {"poll_delay_cycles", &P::poll_delay_cycles, range(0, 100000)},
      {"table_from", &P::table_from, range(0, kLarge)},
      {"table_max", &P::table_max, range(0, kLarge)},
      {"table_rows_from", &P::table_rows_from, range(0, kLarge)},
      {"arrivals_per_row", &P::arrivals_per_row, range(1, kLarge)},
      {"table_rows_max", &P::table_rows_max, range(1, 16)},
      {"table_columns", &P::table_columns, range(1, 16)},
      {"arrivals_per_column", &P::arrivals_per_column, range(1, kLarge)},
      {"table_columns_max", &P::table_columns_max, range(1, 16)},
      {"table_stride_lines", &P::table_stride_lines, range(1, 1024)},
      {"table_poll_delay", &P::table_poll_delay, range(0, 100000)},
  };
  return f;
}

const std::vector<TableValue<BarrierFlipPolicy>>& BarrierFlipPolicy::table() {
  using P = BarrierFlipPolicy;
  static const std::vector<TableValue<P>> t = {
      {Backend::cuda, Scope::device, "H200", &P::one_level_max, 600},
      {Backend::cuda, Scope::device, "H200", &P::poll_delay_from, 200},
      {Backend::cuda, Scope::device, "H200", &P::poll_delay_cycles, 200},
      {Backend::cuda, Scope::device, "H200", &P::table_rows_from, 200},
      {Backend::cuda, Scope::device, "H200", &P::arrivals_per_row, 264},
      {Backend::cuda, Scope::device, "H200", &P::arrivals_per_column, 1 << 20},
      {Backend::cuda, Scope::device, "H200", &P::table_poll_delay, 300},
  };
  return t;
}

const std::vector<Field<BarrierHierarchicalPolicy>>& BarrierHierarchicalPolicy::fields() {
  using P = BarrierHierarchicalPolicy;
  static const std::vector<Field<P>> f = {
      {"cluster", &P::cluster, power_of_two(1, 16)},
  };
  return f;
}
void barrier_tuning_policies(TuningCatalog& catalog) {
  catalog.add<BarrierFlipPolicy>();
  catalog.add<BarrierHierarchicalPolicy>();
}

}  // namespace parpat::detail
