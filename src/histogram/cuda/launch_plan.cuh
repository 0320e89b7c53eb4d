// The launch plan of CUDA histogram `fast` (block size, columns, packed counters, passes over
// slot ranges, grid from occupancy) and its launch, from the tuning policy and the slot count.
#pragma once

#include <algorithm>

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
// memory — 32-bit counters lane-striped in as many columns (up to 32) as
// histogram.fast.striped_kib allows, or 16-bit packed counters when 32-bit ones would take more
// passes — or global atomics when even packed counters would need more than
// histogram.fast.max_passes passes.
struct FastConfig {
  int block = 1024, blocks = 1;
  std::size_t shared = 0;
  unsigned counted = 0, passes = 1, range = 0, columns = 1;
  bool packed = false, global = false, vote = true;
};

// The shared memory `fast` counts in, at most.
inline std::size_t fast_shared_budget(const DeviceInfo& info) {
  return std::min<std::size_t>(info.local_memory, 200u << 10);
}

// The shared-memory kernel of a configuration: packed or striped counters, in passes or in one
// pass over every slot.
template <class T, class Rule>
auto fast_shared_for(const FastConfig& c) {
  // The 16-bit rule's rows (up to 16387) always fit in one pass of 32-bit counters.
  if constexpr (kEven16<Rule>) return &fast_shared_kernel<T, Rule, false, true>;
  if (c.packed)
    return c.passes == 1 ? &fast_shared_kernel<T, Rule, true, true>
                         : &fast_shared_kernel<T, Rule, true, false>;
  return c.passes == 1 ? &fast_shared_kernel<T, Rule, false, true>
                       : &fast_shared_kernel<T, Rule, false, false>;
}

template <class T, class Rule>
FastConfig fast_config(const DeviceInfo& info, const HistogramFastPolicy& policy, int sms,
                       unsigned slots, long long n) {
  FastConfig c;
  c.block = policy.block;
  c.counted = kCountsPerValue<Rule> ? 1u << (8 * sizeof(T)) : slots;
  const std::size_t budget = fast_shared_budget(info);
  auto passes_for = [&](std::size_t bytes_per_row) {
    std::size_t rows = budget / bytes_per_row - 2;  // a row for values outside the pass, rounding
    return unsigned((c.counted + rows - 1) / rows);
  };
  c.passes = passes_for(sizeof(unsigned));
  c.packed = c.passes > 1 && policy.packed;
  if (c.packed) c.passes = passes_for(sizeof(unsigned) / 2);
  c.range = (c.counted + c.passes - 1) / c.passes;
  const std::size_t striped = std::min<std::size_t>(budget, std::size_t(policy.striped_kib) << 10);
  c.columns = 1;
  while (!c.packed && c.columns < 32 &&
         std::size_t(c.range + 1) * c.columns * 2 * sizeof(unsigned) <= striped)
    c.columns *= 2;
  // Input counted per value fits in shared memory (256 counters, or 65536 packed ones), and only
  // the shared flush maps values to slots: it never counts globally.
  c.global = !kCountsPerValue<Rule> && !kEven16<Rule> && c.passes > unsigned(policy.max_passes);
  c.vote = c.packed || int(c.columns) < policy.vote_below_columns;
  c.shared = c.global   ? 0
             : c.packed ? std::size_t(c.range + 2) / 2 * sizeof(unsigned)
                        : std::size_t(c.range + 1) * c.columns * sizeof(unsigned);
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

// Adds the histogram of x[0, n) to `out` (slots counters, already zeroed or holding counts).
template <class T, class Rule>
void launch_fast(const FastConfig& c, const T* x, long long n, Rule rule, unsigned slots,
                 unsigned long long* out, cudaStream_t st) {
  if constexpr (!kEven16<Rule>) {
    if (c.global) {
      fast_global_kernel<T><<<c.blocks, c.block, 0, st>>>(x, n, rule, slots, out);
      check_launch("histogram fast_global_kernel");
      return;
    }
  }
  for (unsigned pass = 0; pass < c.passes; ++pass) {
    unsigned first = pass * c.range;
    unsigned range = std::min(c.range, c.counted - first);
    fast_shared_for<T, Rule>(c)<<<c.blocks, c.block, c.shared, st>>>(
        x, n, rule, first, range, c.packed ? 1 : c.columns, c.vote, out);
    check_launch("histogram fast_shared_kernel");
  }
}

}  // namespace
}  // namespace parpat::detail
