// CUDA histogram variants. Every variant maps a value to a slot (bins, then underflow, overflow
// and NaN) with one of three rules: a value → slot table for uint8/uint16 (filled on the host by
// the reference, so exact), the even rule (a float64 candidate (x − lo)·N/(hi − lo) corrected
// against the exact edges i·step + lo, computed with __dmul_rn/__dadd_rn so no FMA changes an
// edge), or a binary search over explicit edges. Counts are 64-bit in global memory.
//  - global-atomic: each thread a contiguous section, one global 64-bit atomic per value;
//  - interleaved: grid-stride (coalesced) reads, global atomics;
//  - privatized: a 32-bit histogram per block in shared memory, added to the global counts at
//    the end (blocks are sized so no block sees 2^31 values: 32-bit counts cannot wrap);
//  - aggregated: privatized, and each thread counts a run of equal slots before one atomic;
//  - fast: 16-byte loads, four in flight per thread. uint8 is counted per value (256 counters
//    whatever the bin count; the flush maps values to bins through the table); float32 with
//    even bins takes FloatEvenRule (float arithmetic, exact through a proven error bound; the
//    rare value near an edge is settled against the float64 edges). The shared histogram is
//    lane-striped: slot s of lane l at s·C + l mod C, with C up to 32 columns, so the lanes of a
//    warp hit distinct banks and distinct words however the data is spread; with fewer columns a
//    per-vector vote sends skewed data through per-thread runs (one atomic per run of equal slots).
//    32-bit shared counts are added to the 64-bit global ones at the end. When the slots do not fit
//    in shared memory the kernel makes passes over slot ranges (each pass reads the input again and
//    counts only its range); past `histogram.fast.max_passes` passes it counts straight into global
//    memory, with the same runs. No temporary memory besides the value table or the edges.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "histogram/histogram_internal.hpp"
#include "parpat/cuda/histogram.cuh"
#include "parpat/error.hpp"
#include "runtime/cuda/cuda_device.hpp"
#include "runtime/tuning.hpp"

namespace parpat::detail {

namespace {

constexpr unsigned kNone = 0xFFFFFFFFu;              // a lane with no value to count
constexpr long long kMaxValuesPerBlock = 1ll << 30;  // keeps 32-bit shared counts from wrapping

struct TableRule {
  const unsigned* table;
  template <class T>
  __device__ unsigned slot(T x) const {
    return table[x];  // a generic load: the fast kernel points it at a shared copy
  }
};

struct EvenRuleDevice {
  long long bins;
  double lo, hi, step, norm;
  __device__ double edge(long long i) const { return __dadd_rn(__dmul_rn(double(i), step), lo); }
  template <class T>
  __device__ unsigned slot(T value) const {
    double x = double(value);
    if (!(x >= lo)) return unsigned(isnan(x) ? bins + 2 : bins);
    if (x > hi) return unsigned(bins + 1);
    double t = __dmul_rn(__dsub_rn(x, lo), norm);
    return settle(x, t < double(bins) ? (long long)t : bins - 1);
  }
  // The bin of in-range x from a candidate c in [0, bins): moved until edge c ≤ x < edge c + 1.
  __device__ unsigned settle(double x, long long c) const {
    while (c > 0 && x < edge(c))
      --c;
    while (c < bins - 1 && x >= edge(c + 1))
      ++c;
    return unsigned(c);
  }
};

struct EdgesRuleDevice {
  const double* edges;
  long long bins;
  template <class T>
  __device__ unsigned slot(T value) const {
    double x = double(value);
    if (!(x >= __ldg(edges))) return unsigned(isnan(x) ? bins + 2 : bins);
    if (x > __ldg(edges + bins)) return unsigned(bins + 1);
    long long below = 0, above = bins;
    while (above - below > 1) {
      long long mid = below + (above - below) / 2;
      if (__ldg(edges + mid) <= x) {
        below = mid;
      } else {
        above = mid;
      }
    }
    return unsigned(below);
  }
};

template <class T, class Rule>
__global__ void global_atomic_kernel(const T* __restrict__ in, long long n, Rule rule,
                                     unsigned long long* counts) {
  long long threads = (long long)gridDim.x * blockDim.x;
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long per = (n + threads - 1) / threads;
  long long begin = t * per, end = min(n, begin + per);
  for (long long i = begin; i < end; ++i)
    atomicAdd(counts + rule.slot(in[i]), 1ull);
}

template <class T, class Rule>
__global__ void interleaved_kernel(const T* __restrict__ in, long long n, Rule rule,
                                   unsigned long long* counts) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(counts + rule.slot(in[i]), 1ull);
}

// Adds a block's shared counts to the global ones: one atomic per non-empty slot.
__device__ void flush(const unsigned* hist, unsigned slots, unsigned replicas,
                      unsigned long long* counts) {
  for (unsigned s = threadIdx.x; s < slots; s += blockDim.x) {
    unsigned long long sum = 0;
    for (unsigned r = 0; r < replicas; ++r)
      sum += hist[r * slots + s];
    if (sum) atomicAdd(counts + s, sum);
  }
}

template <class T, class Rule, bool kAggregate>
__global__ void privatized_kernel(const T* __restrict__ in, long long n, Rule rule, unsigned slots,
                                  unsigned long long* counts) {
  extern __shared__ unsigned hist[];
  for (unsigned s = threadIdx.x; s < slots; s += blockDim.x)
    hist[s] = 0;
  __syncthreads();
  long long stride = (long long)gridDim.x * blockDim.x;
  unsigned run_slot = kNone, run = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    unsigned s = rule.slot(in[i]);
    if constexpr (kAggregate) {
      if (s == run_slot) {
        ++run;
        continue;
      }
      if (run) atomicAdd(hist + run_slot, run);
      run_slot = s;
      run = 1;
    } else {
      atomicAdd(hist + s, 1u);
    }
  }
  if (kAggregate && run) atomicAdd(hist + run_slot, run);
  __syncthreads();
  flush(hist, slots, 1, counts);
}

// The float32 even rule (FloatEvenRule). Its corrections compare x with the float64 edges
// themselves (x < edge ⇔ x < the smallest float ≥ edge, the threshold of the other backends):
// a few float64 operations instead of a dependent load from device memory. The error bound,
// so the share of values near an edge, grows with the bin count, and at 65536 bins most warps
// had a value to correct and stalled on that load.
struct FloatRuleDevice {
  FloatEvenRule rule;
  EvenRuleDevice even;
  __device__ unsigned quick(float x, bool& exact) const { return rule.quick(x, exact); }
  __device__ unsigned correct(float x, unsigned candidate) const {
    return even.settle(double(x), min((long long)candidate, even.bins - 1));
  }
};

// uint8 input counted per value: the slot of a value is the value; the flush maps each value's
// count to its bin through the value → slot table.
struct PerValueRule {
  const unsigned* table;
  template <class T>
  __device__ unsigned slot(T x) const {
    return unsigned(x);
  }
};

template <class Rule>
constexpr bool kCountsPerValue = std::is_same_v<Rule, PerValueRule>;

// `fast` asks every rule for a quick slot and, where that is not exact, a correction. Only the
// float rule ever needs one.
template <class Rule, class T>
__device__ unsigned quick_slot(const Rule& rule, T x, bool& exact) {
  if constexpr (std::is_same_v<Rule, FloatRuleDevice>) {
    return rule.quick(x, exact);
  } else {
    exact = true;
    return rule.slot(x);
  }
}

template <class Rule, class T>
__device__ unsigned corrected_slot(const Rule& rule, T x, unsigned candidate) {
  if constexpr (std::is_same_v<Rule, FloatRuleDevice>) {
    return rule.correct(x, candidate);
  } else {
    return candidate;
  }
}

// Where `fast` counts. Row `range` of a pass takes the values outside it.
//  - StripedSink: 32-bit shared counters, row r of lane l at r·columns + l mod columns.
//  - PackedSink: 16-bit shared counters, two rows to a word, for twice the rows in one pass.
//    Every atomic returns the word it changed, so the one add that carries a row out of its
//    half is known exactly: it moves 2^16 to the row's 64-bit count and takes back the 1 that
//    spilled into the neighbour (or, out of the top half, the 2^16 the word lost).
//  - GlobalSink: the 64-bit global counts themselves; the discard row is skipped.
struct StripedSink {
  unsigned base;    // shared-window address of this lane's column in row 0
  unsigned stride;  // bytes from one row to the next
  __device__ StripedSink(unsigned* hist, unsigned columns, unsigned column)
      : base(unsigned(__cvta_generic_to_shared(hist + column))), stride(columns * 4) {}
  __device__ void add(unsigned r, unsigned n) const {
    // A 32-bit shared address: one multiply-add per value, no generic-to-shared conversion.
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(base + r * stride), "r"(n) : "memory");
  }
};

struct PackedSink {
  unsigned words;              // shared-window address of the counters
  unsigned long long* counts;  // of the pass's first row
  unsigned range;
  __device__ PackedSink(unsigned* hist, unsigned long long* counts, unsigned range)
      : words(unsigned(__cvta_generic_to_shared(hist))), counts(counts), range(range) {}
  __device__ void add(unsigned r, unsigned n) const {
    const unsigned addend = n << (16 * (r & 1));
    const unsigned old = atomic_add(r, addend);
    if (carried(r, n, addend, old)) settle(r, n, addend, old);
  }
  // Adds 1 to each row: the K atomics go out back to back and their old words are checked
  // after, so a vector waits for shared memory once, not once per value behind a branch.
  template <int K>
  __device__ void add_ones(const unsigned (&rows)[K]) const {
    unsigned old[K];
#pragma unroll
    for (int k = 0; k < K; ++k)
      old[k] = atomic_add(rows[k], 1u << (16 * (rows[k] & 1)));
    bool any = false;
#pragma unroll
    for (int k = 0; k < K; ++k)
      any |= carried(rows[k], 1, 1u << (16 * (rows[k] & 1)), old[k]);
    if (!any) return;
#pragma unroll
    for (int k = 0; k < K; ++k)
      settle(rows[k], 1, 1u << (16 * (rows[k] & 1)), old[k]);
  }

 private:
  __device__ unsigned atomic_add(unsigned r, unsigned addend) const {
    unsigned old;
    asm volatile("atom.shared.add.u32 %0, [%1], %2;"
                 : "=r"(old)
                 : "r"(words + r / 2 * 4), "r"(addend)
                 : "memory");
    return old;
  }
  // Whether adding n to row r's half of the word `old` carried out of that half.
  __device__ static bool carried(unsigned r, unsigned n, unsigned addend, unsigned old) {
    return (r & 1) ? old + addend < old : (old & 0xFFFFu) + n > 0xFFFFu;
  }
  __device__ void settle(unsigned r, unsigned n, unsigned addend, unsigned old) const {
    const bool wrapped = old + addend < old;  // the word's top half overflowed
    if (!(r & 1) && (old & 0xFFFFu) + n > 0xFFFFu) {
      take(r, 0x10000ull);
      take(r + 1, ~0ull);  // the carry is not the neighbour's
    }
    if (wrapped) take(r | 1, 0x10000ull);
  }
  __device__ void take(unsigned r, unsigned long long v) const {
    if (r < range) atomicAdd(counts + r, v);
  }
};

struct GlobalSink {
  unsigned long long* counts;
  unsigned discard;
  __device__ void add(unsigned r, unsigned n) const {
    if (r != discard) atomicAdd(counts + r, (unsigned long long)n);
  }
};

// Adds 1 to each of a vector's rows: one add each, except where the sink batches them
// (PackedSink::add_ones).
template <class Sink, int K>
__device__ void add_ones(const Sink& sink, const unsigned (&rows)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k)
    sink.add(rows[k], 1);
}
template <int K>
__device__ void add_ones(const PackedSink& sink, const unsigned (&rows)[K]) {
  sink.add_ones(rows);
}

// One thread's run of equal rows, counted with one add when the row changes (or reaches 2^15,
// which keeps a packed add below 2^16).
template <class Sink>
struct Run {
  unsigned row, count = 0;
  __device__ explicit Run(unsigned discard) : row(discard) {}
  __device__ void add(unsigned r, unsigned n, const Sink& sink) {
    if (r == row && count < 0x8000u) {
      count += n;
      return;
    }
    flush(sink);
    row = r;
    count = n;
  }
  __device__ void flush(const Sink& sink) {
    if (count) sink.add(row, count);
    count = 0;
  }
};

// Whether every value of a 16-byte vector of T has the same bits (so the same slot).
template <class T>
__device__ bool same_values(const uint4& v) {
  bool words = v.x == v.y && v.y == v.z && v.z == v.w;
  if constexpr (sizeof(T) == 1) return words && v.x == __byte_perm(v.x, 0, 0);
  if constexpr (sizeof(T) == 2) return words && v.x == __byte_perm(v.x, 0, 0x1010);
  if constexpr (sizeof(T) == 8) return v.x == v.z && v.y == v.w;
  return words;
}

// The fast kernels' main loop. Lanes read 16-byte vectors, kLoads of them in flight, in a
// warp-uniform grid-stride loop. Each value's slot comes without branches (a rare inexact float
// candidate is corrected once per vector), is shifted into the pass's rows [0, range) — row
// `range` takes values outside the pass; kWhole: the pass is every slot, so a slot is its row —
// and goes to the sink. With `vote` (lanes that share counters: few columns, packed or global),
// one vote per vector (do ≥ 8 lanes share lane 0's first row?) sends skewed data through
// per-thread runs, a vector of equal rows in one step, so equal values cost one add per run
// instead of one each on the same words. A warp whose loads all hold one value counts them in
// one step either way. The per-value work is kept to the slot, one address and one shared
// atomic: `fast` on bytes is bound by the integer pipe.
template <bool kWhole, class T, class Rule, class Sink>
__device__ void count_values(const T* __restrict__ in, long long n, const Rule& rule,
                             unsigned first, unsigned range, const Sink& sink, bool vote) {
  constexpr int kVec = 16 / sizeof(T);
  constexpr int kLoads = 4;
  const unsigned lane = threadIdx.x % 32;
  const unsigned discard = range;
  long long head = (long long)((16 - (reinterpret_cast<unsigned long long>(in) % 16)) % 16) /
                   (long long)sizeof(T);
  head = min(head, n);
  const long long vectors = (n - head) / kVec;
  const long long tail_begin = head + vectors * kVec;
  const uint4* vec = reinterpret_cast<const uint4*>(in + head);
  const long long warps = (long long)gridDim.x * (blockDim.x / 32);
  const long long warp = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  auto row = [&](unsigned s) {
    if constexpr (kWhole) return s;
    return s - first < range ? s - first : discard;
  };
  Run<Sink> run(discard);
  // The last value whose float candidate needed correcting, and its row: data sitting on an
  // edge (all-equal data often does) pays for one correction, not one per value.
  T memo_value{};
  unsigned memo_slot = discard;
  bool memo = false;
  auto load = [&](uint4(&raw)[kLoads], long long base) {
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      long long v = base + u * 32 + lane;
      raw[u] = v < vectors ? __ldcs(vec + v) : make_uint4(0, 0, 0, 0);
    }
  };
  const long long stride = warps * 32 * kLoads;
  uint4 next[kLoads];
  load(next, warp * 32 * kLoads);
  for (long long base = warp * 32 * kLoads; base < vectors; base += stride) {
    // The next round's loads go out before this round is counted.
    uint4 raw[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
      raw[u] = next[u];
    if (base + stride < vectors) load(next, base + stride);
    // A warp whose lanes each loaded one value only (all-equal data, long runs) places one
    // value per lane and adds all of the lane's loads to its run.
    int loaded = 0;
    bool one_value = same_values<T>(raw[0]);
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const bool valid = base + u * 32 + lane < vectors;
      loaded += valid;
      one_value &= !valid || (raw[u].x == raw[0].x && raw[u].y == raw[0].y &&
                              raw[u].z == raw[0].z && raw[u].w == raw[0].w);
    }
    if (__all_sync(0xFFFFFFFFu, one_value || !loaded)) {
      if (loaded) {
        T value;
        memcpy(&value, &raw[0], sizeof value);
        bool exact = true;
        unsigned s = quick_slot(rule, value, exact);
        if (!exact) {
          if (!memo || !(value == memo_value)) {
            memo_slot = corrected_slot(rule, value, s);
            memo_value = value;
            memo = true;
          }
          s = memo_slot;
        }
        run.add(row(s), unsigned(kVec * loaded), sink);
      }
      continue;
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      // Lanes past the end (only in a warp's last round) take part in the vote, count nothing.
      const bool valid = base + u * 32 + lane < vectors;
      T values[kVec];
      memcpy(values, &raw[u], sizeof raw[u]);
      unsigned rows[kVec];
      bool exact[kVec], all_exact = true;
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        rows[k] = quick_slot(rule, values[k], exact[k]);
        all_exact &= exact[k];
      }
      if (!all_exact) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          if (exact[k]) continue;
          if (!memo || !(values[k] == memo_value)) {
            memo_slot = corrected_slot(rule, values[k], rows[k]);
            memo_value = values[k];
            memo = true;
          }
          rows[k] = memo_slot;
        }
      }
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        rows[k] = row(rows[k]);
      const unsigned leader = __shfl_sync(0xFFFFFFFFu, rows[0], 0);
      const bool skewed =
          vote && __popc(__ballot_sync(0xFFFFFFFFu, valid && rows[0] == leader)) >= 8;
      if (!valid) continue;
      if (skewed) {
        bool equal = true;
#pragma unroll
        for (int k = 1; k < kVec; ++k)
          equal &= rows[k] == rows[0];
        if (equal) {
          run.add(rows[0], kVec, sink);
        } else {
#pragma unroll
          for (int k = 0; k < kVec; ++k)
            run.add(rows[k], 1, sink);
        }
      } else {
        add_ones(sink, rows);
      }
    }
  }
  run.flush(sink);
  // At most 2·kVec − 2 leftover values: warp 0 of the grid takes them, one per lane.
  if (warp == 0) {
    long long leftover = head + (n - tail_begin);
    for (long long j = lane; j < leftover; j += 32) {
      T x = in[j < head ? j : tail_begin + (j - head)];
      bool exact = true;
      unsigned s = quick_slot(rule, x, exact);
      sink.add(row(exact ? s : corrected_slot(rule, x, s)), 1);
    }
  }
}

// Adds row r's count of a pass to the 64-bit counts (through the value → slot table when
// counting per value).
template <class Rule>
__device__ void add_count(const Rule& rule, unsigned long long* counts, unsigned first, unsigned r,
                          unsigned long long count) {
  if (!count) return;
  if constexpr (kCountsPerValue<Rule>) {
    atomicAdd(counts + rule.table[r], count);
  } else {
    atomicAdd(counts + first + r, count);
  }
}

// Counts into a lane-striped shared histogram of range + 1 rows (the last for values outside
// the pass) × `columns`, or (packed) into range + 1 16-bit rows, then adds each row to the
// 64-bit counts.
template <class T, class Rule, bool kPacked, bool kWhole>
__global__ void fast_shared_kernel(const T* __restrict__ in, long long n, Rule rule, unsigned first,
                                   unsigned range, unsigned columns, bool vote,
                                   unsigned long long* counts) {
  extern __shared__ unsigned hist[];
  const unsigned words = kPacked ? (range + 2) / 2 : (range + 1) * columns;
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x)
    hist[i] = 0;
  __syncthreads();
  if constexpr (kPacked) {
    count_values<kWhole>(in, n, rule, first, range, PackedSink(hist, counts + first, range), vote);
  } else {
    count_values<kWhole>(in, n, rule, first, range,
                         StripedSink(hist, columns, threadIdx.x % 32 % columns), vote);
  }
  __syncthreads();
  for (unsigned r = threadIdx.x; r < range; r += blockDim.x) {
    unsigned long long sum = 0;
    if constexpr (kPacked) {
      sum = (hist[r / 2] >> (16 * (r & 1))) & 0xFFFFu;
    } else {
      for (unsigned c = 0; c < columns; ++c)
        sum += hist[r * columns + (c + r) % columns];  // rotated start: threads hit other banks
    }
    add_count(rule, counts, first, r, sum);
  }
}

// Bin counts beyond the passes' limit: straight into the 64-bit global counts, with the same
// per-thread runs for skewed data.
template <class T, class Rule>
__global__ void fast_global_kernel(const T* __restrict__ in, long long n, Rule rule, unsigned slots,
                                   unsigned long long* counts) {
  count_values<true>(in, n, rule, 0u, slots, GlobalSink{counts, slots}, true);
}

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

// The shared-memory kernel of a configuration: packed or striped counters, in passes or in one
// pass over every slot.
template <class T, class Rule>
auto fast_shared_for(const FastConfig& c) {
  if (c.packed)
    return c.passes == 1 ? &fast_shared_kernel<T, Rule, true, true>
                         : &fast_shared_kernel<T, Rule, true, false>;
  return c.passes == 1 ? &fast_shared_kernel<T, Rule, false, true>
                       : &fast_shared_kernel<T, Rule, false, false>;
}

template <class T, class Rule>
FastConfig fast_config(const DeviceInfo& info, int sms, unsigned slots, long long n) {
  FastConfig c;
  c.block = tuning(info, "histogram.fast.block", 1024);
  c.counted = kCountsPerValue<Rule> ? 256u : slots;
  const std::size_t budget = std::min<std::size_t>(info.local_memory, 200u << 10);
  auto passes_for = [&](std::size_t bytes_per_row) {
    std::size_t rows = budget / bytes_per_row - 2;  // a row for values outside the pass, rounding
    return unsigned((c.counted + rows - 1) / rows);
  };
  c.passes = passes_for(sizeof(unsigned));
  c.packed = c.passes > 1 && tuning(info, "histogram.fast.packed", 1);
  if (c.packed) c.passes = passes_for(sizeof(unsigned) / 2);
  c.range = (c.counted + c.passes - 1) / c.passes;
  const std::size_t striped = std::min<std::size_t>(
      budget, std::size_t(tuning(info, "histogram.fast.striped_kib", 64)) << 10);
  c.columns = 1;
  while (!c.packed && c.columns < 32 &&
         std::size_t(c.range + 1) * c.columns * 2 * sizeof(unsigned) <= striped)
    c.columns *= 2;
  // uint8 counted per value always fits (256 counters), and only the shared flush maps values to
  // slots: it never counts globally.
  c.global =
      !kCountsPerValue<Rule> && c.passes > unsigned(tuning(info, "histogram.fast.max_passes", 4));
  c.vote = c.packed || int(c.columns) < tuning(info, "histogram.fast.vote_below_columns", 16);
  c.shared = c.global   ? 0
             : c.packed ? std::size_t(c.range + 2) / 2 * sizeof(unsigned)
                        : std::size_t(c.range + 1) * c.columns * sizeof(unsigned);
  const void* k = c.global ? reinterpret_cast<const void*>(&fast_global_kernel<T, Rule>)
                           : reinterpret_cast<const void*>(fast_shared_for<T, Rule>(c));
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
  if (c.global) {
    fast_global_kernel<T><<<c.blocks, c.block, 0, st>>>(x, n, rule, slots, out);
    check_launch("histogram fast_global_kernel");
    return;
  }
  for (unsigned pass = 0; pass < c.passes; ++pass) {
    unsigned first = pass * c.range;
    unsigned range = std::min(c.range, c.counted - first);
    fast_shared_for<T, Rule>(c)<<<c.blocks, c.block, c.shared, st>>>(
        x, n, rule, first, range, c.packed ? 1 : c.columns, c.vote, out);
    check_launch("histogram fast_shared_kernel");
  }
}

EvenRuleDevice even_rule_device(const HistogramProblem& p) {
  EvenRule r(p);
  return EvenRuleDevice{r.bins, r.lo, r.hi, r.step, r.norm};
}

// The rules only `fast` uses (the classic variants keep the table and float64 rules).
template <class Rule>
constexpr bool kFastOnly =
    std::is_same_v<Rule, PerValueRule> || std::is_same_v<Rule, FloatRuleDevice>;

template <class T>
class CudaHistogram final : public HistogramKernel {
 public:
  CudaHistogram(const Device& d, const HistogramProblem& p, Strategy strategy)
      : device_(d), cuda_(backend_cast<CudaDevice>(d)), p_(p), strategy_(strategy) {
    cuda_.activate();
    if constexpr (sizeof(T) <= 2) {
      auto table = slot_table(p);
      aux_ = Buffer(d, table.size() * sizeof(unsigned));
      aux_.upload(table.data(), aux_.bytes());
    } else if (!p.even) {
      aux_ = Buffer(d, p.edges.size() * sizeof(double));
      aux_.upload(p.edges.data(), aux_.bytes());
    } else if (std::is_same_v<T, float> && strategy == Strategy::fast) {
      float_rule_ = FloatEvenRule(p);
    }
    block_ = tuning(d.info(), "histogram.block", 256);
    if (strategy == Strategy::privatized || strategy == Strategy::aggregated)
      shared_ = std::size_t(p.slots()) * sizeof(unsigned);
    with_rule([&](auto rule) { configure(rule); });
  }

  void run(const Buffer& in, const Buffer& counts) override {
    cuda_.activate();
    auto* out = static_cast<unsigned long long*>(counts.handle());
    PARPAT_CUDA(cudaMemsetAsync(out, 0, std::size_t(p_.slots()) * 8, cuda_.stream()));
    const T* x = static_cast<const T*>(in.handle());
    with_rule([&](auto rule) { launch(x, rule, out); });
  }

  std::size_t temp_bytes() const override { return aux_.bytes(); }

 private:
  // Calls f with the slot rule of this dtype, bins and strategy.
  template <class F>
  void with_rule(F f) {
    const bool fast = strategy_ == Strategy::fast;
    if constexpr (sizeof(T) == 1) {
      const auto* table = static_cast<const unsigned*>(aux_.handle());
      if (fast) {
        f(PerValueRule{table});
      } else {
        f(TableRule{table});
      }
    } else if constexpr (sizeof(T) == 2) {
      f(TableRule{static_cast<const unsigned*>(aux_.handle())});
    } else if (p_.even) {
      if constexpr (std::is_same_v<T, float>) {
        if (fast && float_rule_.usable) {
          f(FloatRuleDevice{float_rule_, even_rule_device(p_)});
          return;
        }
      }
      f(even_rule_device(p_));
    } else {
      f(EdgesRuleDevice{static_cast<const double*>(aux_.handle()), p_.bins});
    }
  }

  template <class Rule>
  void configure(Rule) {
    const int sms = cuda_.props().multiProcessorCount;
    if constexpr (kFastOnly<Rule>) {
      fast_ = fast_config<T, Rule>(device_.info(), sms, unsigned(p_.slots()), p_.n);
    } else {
      configure_classic<Rule>(sms);
    }
  }

  template <class Rule>
  void configure_classic(int sms) {
    const void* k = nullptr;
    switch (strategy_) {
      case Strategy::global_atomic:
        k = reinterpret_cast<const void*>(&global_atomic_kernel<T, Rule>);
        break;
      case Strategy::interleaved:
        k = reinterpret_cast<const void*>(&interleaved_kernel<T, Rule>);
        break;
      case Strategy::privatized:
        k = reinterpret_cast<const void*>(&privatized_kernel<T, Rule, false>);
        break;
      case Strategy::aggregated:
        k = reinterpret_cast<const void*>(&privatized_kernel<T, Rule, true>);
        break;
      case Strategy::fast:
        fast_ = fast_config<T, Rule>(device_.info(), sms, unsigned(p_.slots()), p_.n);
        return;
    }
    if (shared_ > (48u << 10))
      PARPAT_CUDA(
          cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_)));
    blocks_ = blocks_for(sms, k, block_, shared_, p_.n);
  }

  template <class Rule>
  void launch(const T* x, Rule rule, unsigned long long* out) {
    cudaStream_t st = cuda_.stream();
    const long long n = p_.n;
    const unsigned slots = unsigned(p_.slots());
    if constexpr (kFastOnly<Rule>) {
      launch_fast(fast_, x, n, rule, slots, out, st);
    } else {
      launch_classic(x, rule, out, st, n, slots);
    }
  }

  template <class Rule>
  void launch_classic(const T* x, Rule rule, unsigned long long* out, cudaStream_t st, long long n,
                      unsigned slots) {
    switch (strategy_) {
      case Strategy::global_atomic:
        global_atomic_kernel<T><<<blocks_, block_, 0, st>>>(x, n, rule, out);
        check_launch("histogram global_atomic_kernel");
        return;
      case Strategy::interleaved:
        interleaved_kernel<T><<<blocks_, block_, 0, st>>>(x, n, rule, out);
        check_launch("histogram interleaved_kernel");
        return;
      case Strategy::privatized:
        privatized_kernel<T, Rule, false><<<blocks_, block_, shared_, st>>>(x, n, rule, slots, out);
        check_launch("histogram privatized_kernel");
        return;
      case Strategy::aggregated:
        privatized_kernel<T, Rule, true><<<blocks_, block_, shared_, st>>>(x, n, rule, slots, out);
        check_launch("histogram aggregated_kernel");
        return;
      case Strategy::fast:
        launch_fast(fast_, x, n, rule, slots, out, st);
        return;
    }
  }

  Device device_;
  CudaDevice& cuda_;
  HistogramProblem p_;
  Strategy strategy_;
  Buffer aux_;  // value → slot table (uint8/uint16) or explicit edges
  FloatEvenRule float_rule_;
  int block_ = 256, blocks_ = 1;
  std::size_t shared_ = 0;
  FastConfig fast_;
};

// Fills the value → slot table of a uint8/uint16 input on the device with the even rule itself.
__global__ void fill_table_kernel(unsigned* table, unsigned values, EvenRuleDevice rule) {
  unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < values) table[v] = rule.slot(double(v));
}

template <Strategy S>
std::unique_ptr<HistogramKernel> make(const Device& d, const HistogramProblem& p) {
  return visit_dtype(p.dtype, [&](auto t) -> std::unique_ptr<HistogramKernel> {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
                  std::is_same_v<T, std::int32_t> || std::is_same_v<T, float> ||
                  std::is_same_v<T, double>) {
      return std::make_unique<CudaHistogram<T>>(d, p, S);
    } else {
      throw_invalid("histogram: unsupported dtype");
    }
  });
}

bool supports_any(const HistogramProblem&, const DeviceInfo&) {
  return true;
}

// The privatized variants keep every slot of a block in shared memory.
bool fits_shared(const HistogramProblem& p, const DeviceInfo& d) {
  return std::uint64_t(p.slots()) * sizeof(unsigned) <= d.local_memory;
}

}  // namespace

std::vector<HistogramVariant> cuda_histogram_variants() {
  auto info = [](const char* name, const char* idea, const char* params, const char* limits) {
    return variant_info("histogram", Backend::cuda, name, idea, params, limits);
  };
  return {
      {info("global-atomic", "a contiguous section per thread, one 64-bit global atomic per value",
            "block=256", ""),
       supports_any, make<Strategy::global_atomic>},
      {info("interleaved", "grid-stride (coalesced) reads, one 64-bit global atomic per value",
            "block=256", ""),
       supports_any, make<Strategy::interleaved>},
      {info("privatized",
            "a 32-bit histogram per block in shared memory, added to the 64-bit counts at the end",
            "block=256", "bins + 3 ≤ shared memory per block / 4 (about 58000 on Hopper)"),
       fits_shared, make<Strategy::privatized>},
      {info("aggregated",
            "privatized, and each thread counts a run of equal bins before one shared atomic",
            "block=256", "bins + 3 ≤ shared memory per block / 4 (about 58000 on Hopper)"),
       fits_shared, make<Strategy::aggregated>},
      {info("fast",
            "16-byte loads, 4 in flight; uint8 counted per value; float32 bins in float "
            "arithmetic (exact: proven error bound, float64 edges near an edge); a lane-striped "
            "shared "
            "histogram (a bank per lane); per-thread runs for skewed data; passes over bin "
            "ranges beyond shared memory, global atomics past histogram.fast.max_passes passes",
            "block=1024 striped<=64KiB max_passes=4",
            "temporary memory: the uint8/uint16 value table or the explicit edges only"),
       supports_any, make<Strategy::fast>},
  };
}

}  // namespace parpat::detail

namespace parpat::cuda {

std::size_t histogram_workspace_bytes(DType dtype, std::int64_t bins) {
  if (dtype == DType::uint8) return 256 * sizeof(unsigned);
  if (dtype == DType::uint16) return 65536 * sizeof(unsigned);
  return 0;
}

void histogram_even(const void* d_in, DType dtype, std::int64_t n, std::int64_t bins, double lo,
                    double hi, unsigned long long* d_counts, void* d_workspace,
                    std::size_t workspace_bytes, cudaStream_t stream) {
  using namespace parpat::detail;
  if (!histogram_dtype_supported(dtype))
    throw_invalid(
        std::string("histogram takes uint8, uint16, int32, float32 or float64 input, got ") +
        dtype_name(dtype));
  if (n < 0) throw_invalid("histogram: negative number of values");
  if (bins <= 0 || bins > kMaxHistogramBins)
    throw_invalid("the number of bins must be in [1, 2^26], got " + std::to_string(bins));
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || !std::isfinite(hi - lo))
    throw_invalid("the histogram range must be finite with lo < hi");
  if (workspace_bytes < histogram_workspace_bytes(dtype, bins))
    throw_invalid("histogram workspace too small: " + std::to_string(workspace_bytes) + " < " +
                  std::to_string(histogram_workspace_bytes(dtype, bins)) + " bytes");
  HistogramProblem p;
  p.dtype = dtype;
  p.n = n;
  p.bins = bins;
  p.lo = lo;
  p.hi = hi;
  const unsigned slots = unsigned(p.slots());
  PARPAT_CUDA(cudaMemsetAsync(d_counts, 0, std::size_t(slots) * 8, stream));
  if (n == 0) return;
  int ordinal = 0, sms = 0, shared_optin = 0;
  PARPAT_CUDA(cudaGetDevice(&ordinal));
  PARPAT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));
  PARPAT_CUDA(
      cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  DeviceInfo info;
  info.backend = Backend::cuda;
  info.local_memory = std::uint64_t(shared_optin);
  const EvenRuleDevice even = even_rule_device(p);
  visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(d_in);
    if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t>) {
      auto* table = static_cast<unsigned*>(d_workspace);
      unsigned values = sizeof(T) == 1 ? 256u : 65536u;
      fill_table_kernel<<<(values + 255) / 256, 256, 0, stream>>>(table, values, even);
      check_launch("histogram fill_table_kernel");
      if constexpr (sizeof(T) == 1) {
        auto c = fast_config<T, PerValueRule>(info, sms, slots, n);
        launch_fast(c, x, n, PerValueRule{table}, slots, d_counts, stream);
      } else {
        auto c = fast_config<T, TableRule>(info, sms, slots, n);
        launch_fast(c, x, n, TableRule{table}, slots, d_counts, stream);
      }
    } else if constexpr (std::is_same_v<T, float>) {
      FloatEvenRule rule(p);
      if (rule.usable) {
        auto c = fast_config<T, FloatRuleDevice>(info, sms, slots, n);
        launch_fast(c, x, n, FloatRuleDevice{rule, even}, slots, d_counts, stream);
      } else {
        auto c = fast_config<T, EvenRuleDevice>(info, sms, slots, n);
        launch_fast(c, x, n, even, slots, d_counts, stream);
      }
    } else if constexpr (std::is_same_v<T, std::int32_t> || std::is_same_v<T, double>) {
      auto c = fast_config<T, EvenRuleDevice>(info, sms, slots, n);
      launch_fast(c, x, n, even, slots, d_counts, stream);
    }
  });
}

}  // namespace parpat::cuda
