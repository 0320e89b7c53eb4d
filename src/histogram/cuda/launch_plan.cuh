// The launch plan of CUDA histogram `fast` (block size, columns, packed counters, passes over
// slot ranges, grid from occupancy) and its launch, from the tuning policy and the slot count.
#pragma once

#include <algorithm>
#include <cmath>

#include "histogram/cuda/kernels_bucketed.cuh"
#include "histogram/cuda/kernels_classic.cuh"
#include "histogram/cuda/kernels_fast.cuh"
#include "histogram/tuning.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {
// Private to histogram/cuda.cu, the one file that includes it.
namespace {

enum class Strategy { global_atomic, interleaved, privatized, aggregated, fast };

int blocks_for(int sms, const void* kernel, int block, std::size_t shared, long long n) {
  int per_sm = 0;
  PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, shared));
  long long blocks = (long long)std::max(per_sm, 1) * sms;
  blocks = std::min(blocks, (n + block - 1) / block);
  blocks = std::max(blocks, (n + kMaxValuesPerBlock - 1) / kMaxValuesPerBlock);
  return int(std::max(blocks, 1ll));
}

// How `fast` runs one problem: one pass or a few over ranges of the counted slots in shared
// memory — 32-bit counters lane-striped in as many columns (up to histogram.fast.max_columns) as
// histogram.fast.striped_kib allows (16-bit input: at least histogram.fast.min_columns_16bit where
// the shared budget holds them), or 16-bit packed counters when 32-bit ones would take more
// passes — or global atomics when even packed counters would need more than
// histogram.fast.max_passes passes.
struct FastConfig {
  int block = 1024, blocks = 1;
  std::size_t shared = 0;
  unsigned counted = 0, passes = 1, range = 0, columns = 1;
  bool packed = false, global = false, vote = true;
  RowOrder order = RowOrder::in_order;  // of the striped rows (StripedRows)
  unsigned gap_log2 = 0;  // permuted and skewed rows: the crowded rows lie 2^gap_log2 apart

  // Where the kernel counts: packed counters as one column in order.
  StripedRows rows() const {
    return packed ? StripedRows(1, RowOrder::in_order) : StripedRows(columns, order, gap_log2);
  }
};

// The shared memory `fast` counts in, at most.
inline std::size_t fast_shared_budget(const DeviceInfo& info, const HistogramFastPolicy& policy) {
  return std::min<std::size_t>(info.local_memory, std::size_t(policy.shared_kib) << 10);
}

// The shared-memory kernel of a configuration: packed or striped counters, in passes or in one
// pass over every slot.
template <class T, class Rule>
auto fast_shared_for(const FastConfig& c) {
  // The 16-bit rule's rows (up to 16388) always fit in one pass of 32-bit counters.
  if constexpr (kEven16<Rule>) {
    return &fast_shared_kernel<T, Rule, false, true>;
  } else {
    if (c.packed)
      return c.passes == 1 ? &fast_shared_kernel<T, Rule, true, true>
                           : &fast_shared_kernel<T, Rule, true, false>;
    return c.passes == 1 ? &fast_shared_kernel<T, Rule, false, true>
                         : &fast_shared_kernel<T, Rule, false, false>;
  }
}

// The `fast` configuration of problem `p` (element type T in the kernels), whose rule places
// values in `rows` rows (the slots, one more with the 16-bit rule's hi row).
template <class T, class Rule>
FastConfig fast_config(const DeviceInfo& info, const HistogramFastPolicy& policy, int sms,
                       const HistogramProblem& p, unsigned rows) {
  const DType dtype = p.dtype;
  const long long n = p.n;
  FastConfig c;
  c.block = policy.block;
  c.counted = kCountsPerValue<Rule> ? 1u << (8 * sizeof(T)) : rows;
  const std::size_t budget = fast_shared_budget(info, policy);
  auto passes_for = [&](std::size_t bytes_per_row) {
    // A row for values outside the pass, rounding, and the rest of the last group of permuted
    // rows (StripedRows: at most 31).
    std::size_t rows = budget / bytes_per_row - 33;
    return unsigned((c.counted + rows - 1) / rows);
  };
  c.passes = passes_for(sizeof(unsigned));
  c.packed = c.passes > 1 && policy.packed;
  if (c.packed) c.passes = passes_for(sizeof(unsigned) / 2);
  c.range = (c.counted + c.passes - 1) / c.passes;
  const std::size_t striped = std::min<std::size_t>(budget, std::size_t(policy.striped_kib) << 10);
  // 16-bit input takes up to histogram.fast.min_columns_16bit columns from the whole shared
  // budget: at 4096 bins the few rows past the bins put 8 columns just over 128 KiB, and 4 columns
  // queue 8 lanes on each (H200, 2^29 uniform values, µs, 4 -> 8 columns: float16 295 -> 275,
  // int16 273 -> 256, uint16 273 -> 254; bfloat16 with its rows padded then, now skewed, below,
  // 323 -> 290); at 2048 bins 16 columns rather than 8 (uniform, 8 -> 16: uint16 257 -> 249, int16
  // 261 -> 255, bfloat16 280 -> 274; all-equal data 2 µs slower; 1024 bins the same either way).
  const unsigned min_columns = sizeof(T) == 2 ? unsigned(policy.min_columns_16bit) : 1u;
  c.columns = 1;
  while (!c.packed && c.columns < 32 && int(c.columns * 2) <= policy.max_columns &&
         StripedRows(c.columns * 2, RowOrder::permuted).words(c.range + 1) * sizeof(unsigned) <=
             (c.columns < min_columns ? budget : striped))
    c.columns *= 2;
  // Input counted per value fits in shared memory (256 counters, or 65536 packed ones), and only
  // the shared flush maps values to slots: it never counts globally.
  c.global = !kCountsPerValue<Rule> && !kEven16<Rule> && c.passes > unsigned(policy.max_passes);
  c.vote = c.packed || int(c.columns) < policy.vote_below_columns;
  // The order of the striped rows (StripedRows), by default (permuted_rows 1) for bfloat16 alone:
  // its 128 values of an octave fall on rows a power of two apart over a range such as [0, 1), 16
  // rows apart at 4096 bins, which in order share one bank of each column. Elsewhere rows stay in
  // order: the permutation's two instructions a value cost more than the conflicts they spare
  // where the count is bound by instruction issue (H200, 2^29 values at 4096 bins in 8 columns,
  // µs, in order -> permuted: float16 275 -> 315, int16 256 -> 292; 2^28 values, float32 4096 bins
  // 255 -> 276). bfloat16 in fewer than 8 columns (8 lanes or more to a column) is permuted, by
  // the bits above its gap (H200, 2^29 uniform values, µs, the bits of a turn -> above the gap:
  // 8192 bins in 4 columns, rows 32 apart, 351 -> 326); in 8 columns, where they lie 4 or more
  // apart, its rows are skewed (RowOrder::skewed: a shift and an add a value; H200, 2^29 values
  // at 4096 bins, µs, uniform / normal, in order 314 / 312, permuted 324 / 326, padded to an odd
  // stride 290 / 278 in earlier calls; padded 281.6 / 262.9, skewed 263.6 / 263.5); in 16 and 32
  // columns two lanes or one share a column's banks, and in order they cost nothing more (1024
  // bins: 273 µs). permuted_rows 2: every input but 1-byte permuted below 32 columns; 0: all in
  // order.
  const bool reorderable = kPermutedRows<T> && !c.packed;
  const bool crowded = policy.permuted_rows == 1 && dtype == DType::bfloat16;
  const unsigned gap_log2 = crowded_row_gap_log2(p);  // 0 but for bfloat16
  if (reorderable && (policy.permuted_rows == 2 ? c.columns < 32 : crowded && c.columns < 8)) {
    c.order = RowOrder::permuted;
    c.gap_log2 = gap_log2;
  } else if (reorderable && kSkewedRows<T> && crowded && c.columns == 8 && gap_log2 >= 2) {
    c.order = RowOrder::skewed;
    c.gap_log2 = gap_log2;
    if (c.rows().words(c.range + 1) * sizeof(unsigned) > budget) c.order = RowOrder::in_order;
  }
  c.shared = c.global   ? 0
             : c.packed ? std::size_t(c.range + 2) / 2 * sizeof(unsigned)
                        : c.rows().words(c.range + 1) * sizeof(unsigned);
  const void* k = reinterpret_cast<const void*>(fast_shared_for<T, Rule>(c));
  if constexpr (!kEven16<Rule>) {
    if (c.global) k = reinterpret_cast<const void*>(&fast_global_kernel<T, Rule>);
  }
  if (c.shared > (48u << 10))
    PARPAT_CUDA(
        cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(c.shared)));
  cudaFuncAttributes attr{};
  PARPAT_CUDA(cudaFuncGetAttributes(&attr, k));
  c.block = std::min(c.block, attr.maxThreadsPerBlock) / 32 * 32;  // registers may allow fewer
  c.blocks = blocks_for(sms, k, c.block, c.shared, n);
  return c;
}

// Adds the histogram of x[0], x[step], ..., n values, to `out` (slots counters, already zeroed or
// holding counts).
template <class T, class Rule>
void launch_fast(const FastConfig& c, const T* x, long long n, long long step, Rule rule,
                 unsigned slots, unsigned long long* out, cudaStream_t st) {
  if constexpr (!kEven16<Rule>) {
    if (c.global) {
      fast_global_kernel<T><<<c.blocks, c.block, 0, st>>>(x, n, step, rule, slots, out);
      check_launch("histogram fast_global_kernel");
      return;
    }
  }
  for (unsigned pass = 0; pass < c.passes; ++pass) {
    unsigned first = pass * c.range;
    unsigned range = std::min(c.range, c.counted - first);
    fast_shared_for<T, Rule>(c)<<<c.blocks, c.block, c.shared, st>>>(x, n, step, rule, first, range,
                                                                     c.rows(), c.vote, out);
    check_launch("histogram fast_shared_kernel");
  }
}

// How `fast` sorts rows into buckets where it would count in global memory
// (kernels_bucketed.cuh): buckets of histogram.fast.bucket_rows rows (fewer than kMaxBuckets,
// more rows a bucket where needed, up to 2^16), each counted in as many columns (up to
// histogram.fast.max_columns) as histogram.fast.striped_kib allows; chunks of the input whose
// 16-bit rows take histogram.fast.bucket_chunk_mib of temporary memory (each tile's pads, up to
// kBucketPad rows a bucket, on top). Only 4- and 8-byte input, and only with at least a value a
// row: fewer values cost less counted straight into global memory.
struct BucketPlan {
  bool usable = false;
  unsigned shift = 0, buckets = 0, columns = 1;
  unsigned chunk_tiles = 0;  // tiles a chunk, but the last
  unsigned tile_stride = 0;  // rows of temporary memory a tile takes, its buckets' pads with it
  int sort_blocks = 1, count_blocks = 1;
  std::size_t sort_shared = 0, count_shared = 0;  // dynamic shared memory of the two kernels
  unsigned long long target = 0;                  // values an item of a bucket
  std::size_t totals_offset = 0, meta_offset = 0, sorted_offset = 0, bytes = 0;  // temp layout
};

template <class T, class Rule>
BucketPlan bucket_plan(const DeviceInfo& info, const HistogramFastPolicy& policy, int sms,
                       unsigned counted, long long n) {
  BucketPlan b;
  if constexpr (sizeof(T) >= 4 && !kEven16<Rule> && !kCountsPerValue<Rule>) {
    if (!policy.bucketed || n < (long long)counted) return b;
    b.shift = 0;
    while ((1u << b.shift) < unsigned(policy.bucket_rows))
      ++b.shift;
    while (b.shift < 16 && (counted >> b.shift) >= kMaxBuckets)
      ++b.shift;
    b.buckets = ((counted - 1) >> b.shift) + 1;
    // The count kernel's own shared memory (its tiles' vector numbering) comes off the budget.
    const void* count = reinterpret_cast<const void*>(&count_buckets_kernel<Rule>);
    cudaFuncAttributes count_attributes{};
    PARPAT_CUDA(cudaFuncGetAttributes(&count_attributes, count));
    const std::size_t budget =
        fast_shared_budget(info, policy) -
        std::min(fast_shared_budget(info, policy), count_attributes.sharedSizeBytes);
    const std::size_t striped =
        std::min<std::size_t>(budget, std::size_t(policy.striped_kib) << 10);
    const std::size_t rows = std::size_t(1) << b.shift;
    if (b.buckets > kMaxBuckets || rows * sizeof(unsigned) > budget) return b;
    while (b.columns < 32 && int(b.columns * 2) <= policy.max_columns &&
           rows * b.columns * 2 * sizeof(unsigned) <= striped)
      b.columns *= 2;
    b.count_shared = rows * b.columns * sizeof(unsigned);
    constexpr long long kTile = kTileValues<T>;
    const long long tiles = (n + kTile - 1) / kTile;
    const long long chunk_values = (std::size_t(policy.bucket_chunk_mib) << 20) / 2;
    b.chunk_tiles = unsigned(std::clamp<long long>(chunk_values / kTile, 1, tiles));
    // The sort's counters: its own shared memory beyond the static (over 48 KiB in all).
    const void* sort = reinterpret_cast<const void*>(&bucket_rows_kernel<T, Rule>);
    b.sort_shared = std::size_t(b.buckets) * sort_columns(b.buckets) * sizeof(unsigned);
    PARPAT_CUDA(cudaFuncSetAttribute(sort, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     int(b.sort_shared)));
    int per_sm = 0;
    PARPAT_CUDA(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sort, kBucketBlock, b.sort_shared));
    b.sort_blocks = int(std::min<long long>(std::max(per_sm, 1) * sms, b.chunk_tiles));
    if (b.count_shared > (48u << 10))
      PARPAT_CUDA(cudaFuncSetAttribute(count, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(b.count_shared)));
    PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, count, kBucketBlock,
                                                              b.count_shared));
    b.count_blocks = std::max(per_sm, 1) * sms;
    const long long values = (long long)b.chunk_tiles * kTile;
    // Two items a block, so a bucket heavier than the rest (normal data) leaves less idle.
    b.target = std::max<long long>(kTile, values / (2ll * b.count_blocks));
    b.totals_offset = 256;  // the queue's counter first
    b.meta_offset = b.totals_offset + 4 * kMaxBuckets;
    b.sorted_offset =
        b.meta_offset + (std::size_t(b.buckets) * b.chunk_tiles * 4 + 255) / 256 * 256;
    b.tile_stride = unsigned(kTile) + kBucketPad * b.buckets;
    b.bytes = b.sorted_offset + std::size_t(b.chunk_tiles) * b.tile_stride * 2;
    b.usable = true;
  }
  return b;
}

// Adds the histogram of x[0, n) to `out` by sorting rows into buckets, a chunk at a time, in the
// temporary memory `temp` (b.bytes).
template <class T, class Rule>
void launch_bucketed(const BucketPlan& b, const T* x, long long n, Rule rule, unsigned counted,
                     void* temp, unsigned long long* out, cudaStream_t st) {
  if constexpr (sizeof(T) >= 4 && !kEven16<Rule> && !kCountsPerValue<Rule>) {
    constexpr long long kVec = 16 / sizeof(T), kTile = kTileValues<T>;
    const long long head = std::min<long long>(
        n, (16 - reinterpret_cast<unsigned long long>(x) % 16) % 16 / sizeof(T));
    const long long tiles = (n - head) / kTile, vectors = tiles * (kTile / kVec);
    const long long tail_begin = head + tiles * kTile;
    if (head + (n - tail_begin)) {
      bucket_leftovers_kernel<T><<<64, 256, 0, st>>>(x, head, tail_begin, n, rule, out);
      check_launch("histogram bucket_leftovers_kernel");
    }
    auto* bytes = static_cast<unsigned char*>(temp);
    auto* queue = reinterpret_cast<unsigned*>(bytes);
    auto* totals = reinterpret_cast<unsigned*>(bytes + b.totals_offset);
    auto* meta = reinterpret_cast<unsigned*>(bytes + b.meta_offset);
    auto* sorted = reinterpret_cast<unsigned short*>(bytes + b.sorted_offset);
    const long long chunk_vectors = (long long)b.chunk_tiles * (kTile / kVec);
    const auto* vec = reinterpret_cast<const uint4*>(x + head);
    for (long long v0 = 0; v0 < vectors; v0 += chunk_vectors) {
      const auto tiles = unsigned(std::min(chunk_vectors, vectors - v0) / (kTile / kVec));
      const BucketChunk c{vec + v0,  tiles,         b.shift,
                          b.buckets, b.tile_stride, sort_columns(b.buckets)};
      PARPAT_CUDA(cudaMemsetAsync(queue, 0, b.meta_offset, st));  // the queue and the totals
      bucket_rows_kernel<T>
          <<<std::min<long long>(b.sort_blocks, c.tiles), kBucketBlock, b.sort_shared, st>>>(
              c, rule, sorted, meta, totals, out);
      check_launch("histogram bucket_rows_kernel");
      count_buckets_kernel<<<b.count_blocks, kBucketBlock, b.count_shared, st>>>(
          sorted, meta, totals, queue, c, b.target, counted, b.columns, rule, out);
      check_launch("histogram count_buckets_kernel");
    }
  }
}

}  // namespace
}  // namespace parpat::detail
