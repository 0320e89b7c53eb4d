// The histogram policies' fields and per-device tables (src/histogram/tuning.hpp).
#include "histogram/tuning.hpp"

namespace parpat::detail {

const std::vector<Field<HistogramClassicPolicy>>& HistogramClassicPolicy::fields() {
  using P = HistogramClassicPolicy;
  static const std::vector<Field<P>> f = {
      {"block", &P::block, multiple_of_32(32, 1024)},
      {"groups_per_cu", &P::groups_per_cu, range(1, 256)},
  };
  return f;
}
const std::vector<Field<HistogramFastPolicy>>& HistogramFastPolicy::fields() {
  using P = HistogramFastPolicy;
  static const std::vector<Field<P>> f = {
      {"block", &P::block, multiple_of_32(32, 1024)},
      {"groups_per_cu", &P::groups_per_cu, range(1, 256)},
      {"vectors", &P::vectors, range(1, 8)},
      {"vectors_32bit", &P::vectors_32bit, range(1, 8)},
      {"striped_kib", &P::striped_kib, range(1, 1024)},
      {"min_columns_16bit", &P::min_columns_16bit, range(1, 32)},
      {"max_columns", &P::max_columns, range(1, 32)},
      {"max_passes", &P::max_passes, range(0, kLarge)},
      {"packed", &P::packed, range(0, 1)},
      {"runs_below_columns", &P::runs_below_columns, range(0, 64)},
      {"vote_below_columns", &P::vote_below_columns, range(0, 64)},
      {"int_float_max_bins", &P::int_float_max_bins, range(0, kLarge)},
      {"per_value16_min_bins", &P::per_value16_min_bins, range(0, kLarge)},
      {"per_value_float16_min_bins", &P::per_value_float16_min_bins, range(0, kLarge)},
      {"bucketed", &P::bucketed, range(0, 1)},
      {"bucket_rows", &P::bucket_rows, power_of_two(1024, 65536)},
      {"bucket_chunk_mib", &P::bucket_chunk_mib, range(1, 4096)},
      {"shared_kib", &P::shared_kib, range(8, 1024)},
      {"permuted_rows", &P::permuted_rows, range(0, 2)},
  };
  return f;
}
// The warp vote: measured histogram-cuda-vote; CUDA's columns: histogram-cuda-striped and
// histogram-cuda-columns-16bit; CUDA's float16 and bfloat16 per value:
// histogram-cuda-float16-per-value. OpenCL fast (groups of 1024, 8 per compute unit, 8 vectors in
// flight, runs only when counting globally): histogram-opencl-fast; 4 vectors for 4-byte input on
// NVIDIA: histogram-opencl-vectors-32bit.
const std::vector<TableValue<HistogramFastPolicy>>& HistogramFastPolicy::table() {
  using P = HistogramFastPolicy;
  static const std::vector<TableValue<P>> t = {
      {Backend::opencl, Scope::any, "", &P::striped_kib, 96},
      {Backend::cuda, Scope::any, "", &P::striped_kib, 128},
      {Backend::cuda, Scope::any, "", &P::per_value_float16_min_bins, 65536},
      {Backend::opencl, Scope::vendor, "NVIDIA", &P::per_value_float16_min_bins, 65536},
      {Backend::opencl, Scope::vendor, "NVIDIA", &P::vectors_32bit, 4},
  };
  return t;
}

const std::vector<Field<HistogramOpenclPolicy>>& HistogramOpenclPolicy::fields() {
  using P = HistogramOpenclPolicy;
  static const std::vector<Field<P>> f = {
      {"global_groups_per_cu", &P::global_groups_per_cu, range(1, 256)},
      {"per_value16_groups_per_cu", &P::per_value16_groups_per_cu, range(1, 256)},
      {"per_value16_field_bits", &P::per_value16_field_bits, one_of({5, 8, 16})},
      {"float_edges", &P::float_edges, range(0, 1)},
      {"packed", &P::packed, range(-1, 1)},
      {"field_bits", &P::field_bits, one_of({0, 4, 5, 8, 16})},
      {"hot_entries", &P::hot_entries, range(0, 4096)},
      {"packed_fill_percent", &P::packed_fill_percent, range(1, 100)},
      {"narrow_vectors_32bit", &P::narrow_vectors_32bit, range(1, 8)},
      {"narrow_vectors_16bit", &P::narrow_vectors_16bit, range(1, 8)},
      {"value_row_bits", &P::value_row_bits, one_of({32, 64})},
      {"ptx", &P::ptx, range(0, 1)},
      {"bucketed", &P::bucketed, range(0, 1)},
      {"bucket_rows", &P::bucket_rows, power_of_two(1024, 8192)},
      {"bucket_groups_per_cu", &P::bucket_groups_per_cu, range(1, 8)},
      {"bucket_items_per_cu", &P::bucket_items_per_cu, range(1, 64)},
      {"bucket_same_vectors", &P::bucket_same_vectors, range(0, 2)},
  };
  return f;
}
// Buckets on NVIDIA's OpenCL (the kernels of CUDA's design with NVIDIA's PTX):
// histogram-opencl-bucketed-port; on a CPU driver global counting stays faster. 4-byte input in
// 5- or 4-bit fields on NVIDIA: 6 vectors in flight, histogram-opencl-narrow-vectors. int16 and
// uint16 per value on NVIDIA: one range of 5-bit fields, 4 vectors in flight,
// histogram-opencl-per-value16-narrow.
const std::vector<TableValue<HistogramOpenclPolicy>>& HistogramOpenclPolicy::table() {
  using P = HistogramOpenclPolicy;
  static const std::vector<TableValue<P>> t = {
      {Backend::opencl, Scope::vendor, "NVIDIA", &P::bucketed, 1},
      {Backend::opencl, Scope::vendor, "NVIDIA", &P::narrow_vectors_32bit, 6},
      {Backend::opencl, Scope::vendor, "NVIDIA", &P::per_value16_field_bits, 5},
      {Backend::opencl, Scope::vendor, "NVIDIA", &P::narrow_vectors_16bit, 4},
  };
  return t;
}
const std::vector<Field<HistogramParallelPolicy>>& HistogramParallelPolicy::fields() {
  using P = HistogramParallelPolicy;
  static const std::vector<Field<P>> f = {
      {"private_mib", &P::private_mib, range(1, 1 << 20)},
      {"section_values", &P::section_values, range(1, INT_MAX)},
  };
  return f;
}
void histogram_tuning_policies(TuningCatalog& catalog) {
  catalog.add<HistogramClassicPolicy>();
  catalog.add<HistogramFastPolicy>();
  catalog.add<HistogramOpenclPolicy>();
  catalog.add<HistogramParallelPolicy>();
}

}  // namespace parpat::detail
