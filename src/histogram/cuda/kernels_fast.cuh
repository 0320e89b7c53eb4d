// CUDA histogram `fast`: 16-byte loads, four in flight per thread. 1-byte input is counted per
// value (256 counters whatever the bin count; the flush maps values to bins through the table),
// and so are int16 and uint16 from histogram.fast.per_value16_min_bins bins (65536 packed
// counters). The shared histogram is lane-striped: slot s of lane l at π(s)·C + l mod C, with C up
// to 32 columns, so the lanes of a warp hit distinct banks and distinct words however the data is
// spread (π: StripedRows, rows a power of two apart in distinct banks); with fewer columns a
// per-vector vote sends skewed data through per-thread runs. 32-bit shared counts are added to the
// 64-bit global ones at the end. Where 32-bit counters would take passes, 16-bit packed ones (two
// rows a word) hold twice the rows; their vector adds go unchecked and the block drains rows near
// the top of their 16 bits between windows of values (sinks.cuh). When the slots do not fit in
// shared memory the kernel makes passes over slot ranges (each pass reads the input again and
// counts only its range); past `histogram.fast.max_passes` passes it counts straight into global
// memory. Input whose elements lie a step apart (a view such as x[::2]) is read in place: each
// lane's vector gathers kVec elements, one from each of kVec consecutive 32-element stretches of
// the warp's share, so that a warp's scalar loads are coalesced as far as the step allows (a
// histogram counts in any order).
#pragma once

#include "histogram/cuda/sinks.cuh"

namespace parpat::detail {
// Private to histogram/cuda.cu, the one file that includes it.
namespace {

constexpr int kFastLoads = 4;  // 16-byte loads a lane has in flight

// The unsigned integer of N bytes, for loading any element type's bits (__ldcs has no overload
// for the half types).
template <std::size_t N>
using Unsigned = std::conditional_t<
    N == 1, unsigned char,
    std::conditional_t<N == 2, unsigned short,
                       std::conditional_t<N == 4, unsigned, unsigned long long>>>;

template <class T>
__device__ bool same_values(const uint4& v) {
  bool words = v.x == v.y && v.y == v.z && v.z == v.w;
  if constexpr (sizeof(T) == 1) return words && v.x == __byte_perm(v.x, 0, 0);
  if constexpr (sizeof(T) == 2) return words && v.x == __byte_perm(v.x, 0, 0x1010);
  if constexpr (sizeof(T) == 8) return v.x == v.z && v.y == v.w;
  return words;
}

// The fast kernels' main loop. Lanes read 16-byte vectors, kLoads of them in flight, in a
// warp-uniform grid-stride loop. Each value's row comes without branches (its slot, or the float
// rule's row order, FloatRuleDevice::quick_row; a rare inexact float candidate is corrected once
// per vector), is shifted into the pass's rows [0, range) — row `range` takes values outside the
// pass; kWhole: the pass is every row — and goes to the sink, which counts rows at their slots.
// With a vote (lanes that share counters: few columns, packed or global), one vote per vector (do
// `vote_lanes` lanes share lane 0's first row?) sends skewed data through per-thread runs, a
// vector of equal rows in one step, so equal values cost one add per run instead of one each on
// the same words. Lanes of one row queue on a word only a lane in `columns`: the vote asks for 8
// lanes a column (vote_lanes = 8·columns, at most 32), below which the queue costs less than the
// runs (int16 with half its values below the range, 1024 bins in 4 columns: 263 against 212 µs). A
// warp whose loads all hold one value counts them in one step either way. The per-value work is
// kept to the slot, one address and one shared atomic: `fast` on bytes is bound by the integer
// pipe. `step` > 1: the n values are in[0], in[step], ...; the vectors are gathered (whole warp
// groups of 32 vectors only, the rest goes to the leftovers).
template <bool kWhole, class T, class Rule, class Sink>
__device__ void count_values(const T* __restrict__ in, long long n, long long step,
                             const Rule& rule, unsigned first, unsigned range, const Sink& sink,
                             unsigned vote_lanes) {
  constexpr int kVec = 16 / sizeof(T);
  constexpr int kLoads = kFastLoads;
  const unsigned lane = threadIdx.x % 32;
  const unsigned discard = range;
  const bool stepped = step != 1;
  long long head = stepped
                       ? 0
                       : (long long)((16 - (reinterpret_cast<unsigned long long>(in) % 16)) % 16) /
                             (long long)sizeof(T);
  head = min(head, n);
  const long long vectors = stepped ? n / (32 * kVec) * 32 : (n - head) / kVec;
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
  unsigned memo_row = discard;
  bool memo = false;
  // Vector v of stepped input: its warp group's elements (v − lane)·kVec + k·32 + lane.
  using Word = Unsigned<sizeof(T)>;
  const Word* words = reinterpret_cast<const Word*>(in);
  auto gather = [&](long long v) {
    const long long element = (v - lane) * kVec + lane;
    Word parts[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      parts[k] = __ldcs(words + (element + k * 32) * step);
    uint4 raw;
    memcpy(&raw, parts, sizeof raw);
    return raw;
  };
  // Vectors base + u·32 + lane, u < kLoads; those past the input are zero.
  auto load = [&](uint4(&raw)[kLoads], long long base, bool checked) {
    if (stepped) {
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const long long v = base + u * 32 + lane;
        raw[u] = !checked || v < vectors ? gather(v) : make_uint4(0, 0, 0, 0);
      }
    } else {
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const long long v = base + u * 32 + lane;
        raw[u] = !checked || v < vectors ? __ldcs(vec + v) : make_uint4(0, 0, 0, 0);
      }
    }
  };
  // One round of a warp: kLoads vectors a lane, bit u of `valid` set where vector u is in the
  // input (all four but in a warp's last round).
  auto count_round = [&](const uint4(&raw)[kLoads], unsigned valid_loads) {
    // A warp whose lanes each loaded one value only (all-equal data, long runs) places one
    // value per lane and adds all of the lane's loads to its run; two words per lane rule it
    // out for most data before the whole test.
    if (__all_sync(0xFFFFFFFFu, raw[0].x == raw[0].y)) {
      int loaded = 0;
      bool one_value = same_values<T>(raw[0]);
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const bool valid = valid_loads >> u & 1;
        loaded += valid;
        one_value &= !valid || (raw[u].x == raw[0].x && raw[u].y == raw[0].y &&
                                raw[u].z == raw[0].z && raw[u].w == raw[0].w);
      }
      if (__all_sync(0xFFFFFFFFu, one_value || !loaded)) {
        if (loaded) {
          T value;
          memcpy(&value, &raw[0], sizeof value);
          bool exact = true;
          unsigned s = quick_place<true>(rule, value, exact);
          if (!exact) {
            if (!memo || !(value == memo_value)) {
              memo_row = corrected_place<true>(rule, value, s);
              memo_value = value;
              memo = true;
            }
            s = memo_row;
          }
          run.add(row(s), unsigned(kVec * loaded), sink);
        }
        return;
      }
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      // Lanes past the end (only in a warp's last round) take part in the vote, count nothing.
      const bool valid = valid_loads >> u & 1;
      T values[kVec];
      memcpy(values, &raw[u], sizeof raw[u]);
      unsigned rows[kVec];
      bool exact[kVec], all_exact = true;
      if constexpr (kEven16<Rule>) {
        rule.rows(raw[u], rows);
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          rows[k] = quick_place<true>(rule, values[k], exact[k]);
          all_exact &= exact[k];
        }
      }
      if (!all_exact) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          if (exact[k]) continue;
          if (!memo || !(values[k] == memo_value)) {
            memo_row = corrected_place<true>(rule, values[k], rows[k]);
            memo_value = values[k];
            memo = true;
          }
          rows[k] = memo_row;
        }
      }
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        rows[k] = row(rows[k]);
      bool skewed = false;
      if (vote_lanes) {  // the same for the whole grid: every lane votes
        const unsigned leader = __shfl_sync(0xFFFFFFFFu, rows[0], 0);
        skewed = __popc(__ballot_sync(0xFFFFFFFFu, valid && rows[0] == leader)) >= vote_lanes;
      }
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
  };
  // The next round's loads go out before this round is counted; a round wholly inside the input
  // loads without bounds checks.
  constexpr long long kRound = 32 * kLoads;  // vectors a warp reads in one round
  const long long stride = warps * kRound;
  uint4 next[kLoads];
  load(next, warp * kRound, true);
  auto one_round = [&](long long base) {
    uint4 raw[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
      raw[u] = next[u];
    const long long ahead = base + stride;
    if (ahead + kRound <= vectors) {
      load(next, ahead, false);
    } else if (ahead < vectors) {
      load(next, ahead, true);
    }
    const long long left = vectors - base - lane;  // this lane's vectors from here on
    unsigned valid_loads = (1u << kLoads) - 1;
    if (left < kRound) {
      valid_loads = 0;
#pragma unroll
      for (int u = 0; u < kLoads; ++u)
        valid_loads |= unsigned(u * 32 < left) << u;
    }
    count_round(raw, valid_loads);
  };
  if constexpr (std::is_same_v<Sink, DrainedPackedSink>) {
    // The whole block makes as many rounds as its first warp (a later warp may sit some out)
    // and drains its rows after every window of kDrainWindow values or fewer, runs flushed
    // first (fast_shared_kernel drains only where a round of the block fits a window).
    const long long block_base = (long long)blockIdx.x * (blockDim.x / 32) * kRound;
    const long long rounds =
        block_base < vectors ? (vectors - block_base + stride - 1) / stride : 0;
    const long long window = kDrainWindow / (blockDim.x * kLoads * kVec);
    for (long long r = 0; r < rounds; ++r) {
      const long long base = warp * kRound + r * stride;
      if (base < vectors) one_round(base);
      if ((r + 1) % window == 0 || r + 1 == rounds) {
        run.flush(sink);
        __syncthreads();
        sink.drain();
        __syncthreads();
      }
    }
  } else {
    for (long long base = warp * kRound; base < vectors; base += stride)
      one_round(base);
  }
  run.flush(sink);
  // At most 2·kVec − 2 leftover values (32·kVec − 1 of stepped input): warp 0 of the grid takes
  // them, one per lane.
  if (warp == 0) {
    long long leftover = head + (n - tail_begin);
    for (long long j = lane; j < leftover; j += 32) {
      T x = in[(j < head ? j : tail_begin + (j - head)) * step];
      bool exact = true;
      unsigned s = quick_place<true>(rule, x, exact);
      sink.add(row(exact ? s : corrected_place<true>(rule, x, s)), 1);
    }
  }
}

// How many rows a thread of the flush looks up at once: a per-value rule's slots come from a
// table in global memory, and a thread that waited for each row's slot before its atomic made 64
// round trips at 65536 rows.
constexpr int kFlushAhead = 8;

// Adds the block's rows [0, range) of a pass to the 64-bit counts at their slots, one atomic a
// row with a count; a thread looks up kFlushAhead rows' slots before their atomics.
template <bool kPacked, class Rule>
__device__ void add_rows(const Rule& rule, const unsigned* hist, unsigned range,
                         const StripedRows& rows, unsigned first, unsigned long long* counts) {
  const RowSlots slots = row_slots(rule);
  for (unsigned r0 = threadIdx.x; r0 < range; r0 += kFlushAhead * blockDim.x) {
    unsigned long long count[kFlushAhead];
    unsigned slot[kFlushAhead];
#pragma unroll
    for (int k = 0; k < kFlushAhead; ++k) {
      const unsigned r = r0 + k * blockDim.x;
      count[k] = r < range ? shared_row_count<kPacked>(hist, r, rows) : 0ull;
      slot[k] = count[k] ? slots.of(first + r) : 0u;
    }
#pragma unroll
    for (int k = 0; k < kFlushAhead; ++k)
      if (count[k]) atomicAdd(counts + slot[k], count[k]);
  }
}

// The end of a block that counted per value where values share slots (7 bins over 65536 values;
// where each value has a slot of its own, one atomic per row costs less): each warp walks its own
// stretch of rows 32 at a time, sums each run of neighbouring rows with one slot (a segmented
// scan by shuffles: neighbouring values mostly share a slot) and carries the run of the last lane
// into the next 32 rows, so a slot that a stretch of consecutive values shares costs the warp one
// global atomic, not one per value. Per-block sums stay below 2^30 (kMaxValuesPerBlock): 32 bits
// hold any run's.
template <bool kPacked>
__device__ void flush_per_value(const unsigned* hist, unsigned range, const StripedRows& rows,
                                unsigned first, const RowSlots& slots, unsigned long long* counts) {
  constexpr unsigned kAll = 0xFFFFFFFFu;
  const unsigned lane = threadIdx.x % 32, warps = blockDim.x / 32;
  const unsigned stretch = (range + warps * 32 - 1) / (warps * 32) * 32;
  const unsigned begin = threadIdx.x / 32 * stretch, end = min(range, begin + stretch);
  unsigned carry_slot = ~0u;  // no slot: rows past the stretch
  unsigned long long carry = 0;
  for (unsigned base = begin; base < end; base += 32) {
    const unsigned r = base + lane;
    const unsigned slot = r < end ? slots.of(first + r) : ~0u;
    unsigned sum = r < end ? unsigned(shared_row_count<kPacked>(hist, r, rows)) : 0u;
    // Every lane takes part in every shuffle and vote (none behind a short-circuit).
    const unsigned before = __shfl_up_sync(kAll, slot, 1), after = __shfl_down_sync(kAll, slot, 1);
    const bool head = lane == 0 || before != slot;
    const bool tail = after != slot;  // never lane 31 (its own slot comes back)
    // The first lane of this lane's run, then the run's sum up to this lane.
    const unsigned run_begin = 31 - __clz(__ballot_sync(kAll, head) & (2u << lane) - 1);
    for (unsigned d = 1; d < 32; d *= 2) {
      const unsigned below = __shfl_up_sync(kAll, sum, d);
      if (lane >= run_begin + d) sum += below;
    }
    const bool continues = __shfl_sync(kAll, slot, 0) == carry_slot;  // the first run's slot
    if (lane == 0 && carry && !continues) atomicAdd(counts + carry_slot, carry);
    const unsigned long long total = sum + (run_begin == 0 && continues ? carry : 0ull);
    if (tail && lane != 31 && total) atomicAdd(counts + slot, total);
    carry = __shfl_sync(kAll, total, 31);
    carry_slot = __shfl_sync(kAll, slot, 31);
  }
  if (lane == 0 && carry) atomicAdd(counts + carry_slot, carry);
}

// Whether packed rows drain by headroom (DrainedPackedSink) rather than check every add: all input
// but float16 and bfloat16, whose values crowd every 32nd row or so and pay more for the reds'
// bank conflicts and the drains than for the checks (H100, 2^29 uniform values at 65536 bins:
// 562 against 697 µs).
template <class Rule>
constexpr bool kHalfFloatRule = false;
template <DType kDtype, bool kHi>
constexpr bool kHalfFloatRule<Even16RuleDevice<kDtype, kHi>> =
    Even16RuleDevice<kDtype, kHi>::kFloat;
template <class T, class Rule>
constexpr bool kDrained = sizeof(T) != 2 || std::is_same_v<Rule, PerValueRule> ||
                          (kEven16<Rule> && !kHalfFloatRule<Rule>);

// Counts into a lane-striped shared histogram of range + 1 rows (the last for values outside
// the pass) laid out as `rows` says (columns, permuted or not: StripedRows), or (packed, `rows` of
// one column in order) into range + 1 16-bit rows, then adds each row to the 64-bit counts.
template <class T, class Rule, bool kPacked, bool kWhole>
__global__ void fast_shared_kernel(const T* __restrict__ in, long long n, long long step, Rule rule,
                                   unsigned first, unsigned range, StripedRows rows, bool vote,
                                   unsigned long long* counts) {
  // No vote: 0 lanes; packed counters take one word for two rows, a column of one.
  const unsigned columns = rows.columns;
  const unsigned vote_lanes = vote ? min(32u, 8 * columns) : 0;
  extern __shared__ unsigned hist[];
  const unsigned words = kPacked ? (range + 2) / 2 : unsigned(rows.words(range + 1));
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x)
    hist[i] = 0;
  __syncthreads();
  if constexpr (kPacked) {
    if (kDrained<T, Rule> && blockDim.x * kFastLoads * (16 / sizeof(T)) <= kDrainWindow) {
      count_values<kWhole>(in, n, step, rule, first, range,
                           DrainedPackedSink(hist, counts, first, range, row_slots(rule)),
                           vote_lanes);
    } else {
      count_values<kWhole>(in, n, step, rule, first, range,
                           PackedSink(hist, counts, first, range, row_slots(rule)), vote_lanes);
    }
  } else if (kPermutedRows<T> && rows.order == RowOrder::permuted) {
    count_values<kWhole>(in, n, step, rule, first, range,
                         StripedSink<RowOrder::permuted>(hist, rows, threadIdx.x % 32 % columns),
                         vote_lanes);
  } else if (kSkewedRows<T> && rows.order == RowOrder::skewed) {
    count_values<kWhole>(in, n, step, rule, first, range,
                         StripedSink<RowOrder::skewed>(hist, rows, threadIdx.x % 32 % columns),
                         vote_lanes);
  } else {
    count_values<kWhole>(in, n, step, rule, first, range,
                         StripedSink<RowOrder::in_order>(hist, rows, threadIdx.x % 32 % columns),
                         vote_lanes);
  }
  __syncthreads();
  bool merge = false;
  if constexpr (kCountsPerValue<Rule>) merge = rule.shared_slots;
  if (merge) {
    flush_per_value<kPacked>(hist, range, rows, first, row_slots(rule), counts);
  } else {
    add_rows<kPacked>(rule, hist, range, rows, first, counts);
  }
}

// Bin counts beyond the passes' limit: straight into the 64-bit global counts, with the same
// per-thread runs for skewed data.
template <class T, class Rule>
__global__ void fast_global_kernel(const T* __restrict__ in, long long n, long long step, Rule rule,
                                   unsigned slots, unsigned long long* counts) {
  count_values<true>(in, n, step, rule, 0u, slots, GlobalSink{counts, slots, row_slots(rule)}, 8);
}

}  // namespace
}  // namespace parpat::detail
