// The histogram variants' tuning policies (runtime/tuning.hpp says how a policy is resolved): the
// defaults are the member initialisers, the tables the values that differ per device. Why each
// value: bench/tuning/measurements.json.
#pragma once

#include <climits>
#include <vector>

#include "runtime/tuning.hpp"

namespace parpat::detail {

// The classic GPU variants: blocks of `block`, `groups_per_cu` groups per compute unit (OpenCL).
struct HistogramClassicPolicy : SameOnEveryDevice<HistogramClassicPolicy> {
  static constexpr const char* kName = "histogram";
  int block = 256;
  int groups_per_cu = 8;
  static const std::vector<Field<HistogramClassicPolicy>>& fields();
};

// `fast` on CUDA and OpenCL: blocks of `block` (fewer threads where a kernel's registers allow
// fewer), `groups_per_cu` per compute unit and `vectors` in flight (OpenCL; `vectors_32bit` for
// int32, uint32 and float32, whose float rule holds more registers a vector: 4 on NVIDIA, as
// CUDA's 4 loads, histogram-opencl-vectors-32bit), a lane-striped
// shared histogram of up to `striped_kib` in at most `max_columns` columns (CUDA: 16-bit input
// in at least `min_columns_16bit` where the shared memory holds them,
// histogram-cuda-columns-16bit), 16-bit packed
// counters (CUDA `packed`) when 32-bit ones would need more than one pass, at most `max_passes`
// passes over slot ranges before it counts in global memory; register runs below
// `runs_below_columns` columns (OpenCL), the per-vector warp vote for skewed data below
// `vote_below_columns` (CUDA); 32-bit integers in float arithmetic up to `int_float_max_bins`
// bins, and 64-bit ones in the float64 rule's rows (beyond, integer data sits on an edge so often
// that the rules' corrections cost more than the per-value even rule: H100, int32 at 65536 bins,
// 1088 against 804 µs on CUDA; histogram-integers-float64-rule); int16 and
// uint16 counted per value (65536 packed rows, mapped to slots by the value table at the end;
// CUDA) from `per_value16_min_bins` bins, where the rules count in packed rows or globally (H200,
// int16 over [0, 2^20): 65536 bins 605 against 1791 µs, 2^20 bins 780 against 150382 µs; at 4096
// bins 594 against 582 µs); float16 and bfloat16 from `per_value_float16_min_bins` bins (CUDA
// 65536: H100, float16 uniform in [0, 1) at 2^20 bins 471 against 6615 µs in rows; NVIDIA's
// OpenCL 65536, the window of [0, 1] in one range of 16-bit fields: 689 against 6663 µs;
// elsewhere never). Where CUDA would count 4- and 8-byte input in global memory, `bucketed` sorts
// rows into buckets of `bucket_rows` rows, in chunks of `bucket_chunk_mib` of rows in temporary
// memory (and up to 8 pad rows a bucket in each tile), and counts each bucket in shared memory
// (one resident pipeline within 64 MiB measured slower: histogram-cuda-bucket-pipeline).
// CUDA's counters take at most `shared_kib` of shared memory a block (within the device's opt-in
// limit): set to 48 it shows what the kernels do within the local memory NVIDIA's OpenCL gives a
// group (histogram-opencl-48kib). The lane-striped rows (CUDA and OpenCL) are permuted within each
// turn of the banks for bfloat16 in fewer than 8 columns, and in 8 skewed (CUDA) or padded to an
// odd stride (OpenCL) (`permuted_rows` 1; 2: every input but 1-byte permuted in fewer than 32; 0:
// none): histogram-striped-rows-permuted, histogram-cuda-permuted-bfloat16,
// histogram-cuda-skewed-rows, histogram-opencl-padded-rows.
struct HistogramFastPolicy {
  static constexpr const char* kName = "histogram.fast";
  int block = 1024;
  int groups_per_cu = 8;
  int vectors = 8;
  int vectors_32bit = 8;
  int striped_kib = 64;
  int min_columns_16bit = 16;
  int max_columns = 32;
  int max_passes = 4;
  int packed = 1;
  int runs_below_columns = 0;
  int vote_below_columns = 4;
  int int_float_max_bins = 4096;
  int per_value16_min_bins = 65536;
  int per_value_float16_min_bins = kLarge;
  int bucketed = 1;
  int bucket_rows = 16384;
  int bucket_chunk_mib = 256;
  int shared_kib = 200;
  int permuted_rows = 1;
  static const std::vector<Field<HistogramFastPolicy>>& fields();
  static const std::vector<TableValue<HistogramFastPolicy>>& table();
};

// OpenCL `fast` only: global counting on `global_groups_per_cu` groups per compute unit; int16 and
// uint16 counted per value from histogram.fast.per_value16_min_bins bins (65536 rows in packed
// `per_value16_field_bits`-bit fields, mapped to slots by the value table; NVIDIA: 5, one range,
// histogram-opencl-per-value16-narrow, counted a row per value's bits by a kernel of its own in
// groups of histogram.fast.block, histogram-opencl-values16-kernel) on `per_value16_groups_per_cu`
// groups per compute unit (each adds all its rows at the end; 5- and 4-bit fields:
// local_groups_per_cu below);
// float32 values near an edge settled against float64 edges (`float_edges`); packed counters in
// `field_bits`-bit fields (0: the width that needs the fewest passes) with a table of
// `hot_entries` hot rows, where `packed` says (1 on, 0 off, -1 where groups run side by side: a
// CPU driver runs them one after another, so ranges re-read the input and global counting is
// faster there), 5- and 4-bit fields on as many groups as count about `packed_fill_percent` of a
// field's capacity a row (opencl_layout.hpp's local_groups_per_cu; histogram-opencl-packed-groups)
// with `narrow_vectors_32bit` vectors of 4-byte input in flight (NVIDIA: 6, between the 4 of
// striped rows and 8; histogram-opencl-narrow-vectors) and `narrow_vectors_16bit` of 16-bit
// input in narrow fields that the kernel of its own does not take (NVIDIA: 4); 16-bit input counted
// per value adds its rows to a table of the rows (then added to the slots) of `value_row_bits`-bit
// words (32: where the input has fewer than 2^32 values, else 64; histogram-opencl-value-rows);
// NVIDIA's inline PTX (`ptx`: local atomics on 32-bit shared addresses, the float32 floor without
// the conversion unit, clamps by min.NaN and max.NaN, histogram-opencl-clamp); where it would count
// globally, 4- and 8-byte input sorts rows into buckets of `bucket_rows` rows counted in local
// memory (`bucketed`: on NVIDIA, histogram-opencl-bucketed-port; a CPU driver counts globally
// faster), the sort by `bucket_groups_per_cu` groups a compute unit taking tiles in turn (a vector
// of one value's bits placed once where `bucket_same_vectors` says: 0 never, 1 for float input,
// whose rules cost more than the test, 2 always), the count in `bucket_items_per_cu` items a
// compute unit for uniform data. Global counting on the resident grid, float64 edges, packed
// fields: measured, bench/tuning/measurements.json, histogram-opencl-global-packed.
struct HistogramOpenclPolicy {
  static constexpr const char* kName = "histogram.opencl";
  int global_groups_per_cu = 2;
  int per_value16_groups_per_cu = 2;
  int per_value16_field_bits = 8;
  int float_edges = 1;
  int packed = -1;
  int field_bits = 0;
  int hot_entries = 256;
  int packed_fill_percent = 25;
  int narrow_vectors_32bit = 8;
  int narrow_vectors_16bit = 8;
  int value_row_bits = 32;
  int ptx = 1;
  int bucketed = 0;
  int bucket_rows = 8192;
  int bucket_groups_per_cu = 1;
  int bucket_items_per_cu = 2;
  int bucket_same_vectors = 1;
  static const std::vector<Field<HistogramOpenclPolicy>>& fields();
  static const std::vector<TableValue<HistogramOpenclPolicy>>& table();
};

// The CPU's `parallel`: private histograms within `private_mib`, sections of at most
// `section_values` values.
struct HistogramParallelPolicy : SameOnEveryDevice<HistogramParallelPolicy> {
  static constexpr const char* kName = "histogram.parallel";
  int private_mib = 256;
  int section_values = INT_MAX;
  static const std::vector<Field<HistogramParallelPolicy>>& fields();
};

}  // namespace parpat::detail
