// CUDA `flip`: one word per barrier, one release arrival per block (or per warp), and a bit-31
// generation that flips at the last arrival so no reset can race the next barrier; above the
// tuned arrival counts the arrivals spread over sub-words or a table of words (rows split the
// arrivals, columns the polls, a two-bit generation per row), with tuned poll delays and sleeps.
#pragma once

#include "barrier/cuda/words.cuh"

namespace parpat::detail {
// Private to barrier/cuda.cu, the one file that includes it.
namespace {

// One arrival at a flip word of `participants` arrivals (`master` for exactly one of them).
// Returns whether it was the last, which only an atomic arrival can tell; the last arriver has
// then acquired every other arrival (fence) and needs no poll.
__device__ inline bool flip_arrive(const Knobs& knobs, unsigned int* word,
                                   unsigned int participants, bool master) {
  unsigned int add = master ? 0x80000000u - (participants - 1u) : 1u;
  if (!knobs.atom_arrive) {
    gb::red_add_release(word, add);
    return false;
  }
  if (!gb::flipped_by(gb::fetch_add_release(word, add), add)) return false;
  gb::fence_acquire();
  return true;
}

// Polls until bit 31 of *word equals `expected`: runs of check_mask + 1 polls (a power of two,
// at least 4) with nothing but the load and the compare between them, unrolled by 4, then the
// clock and the error word. False once the bound passed (the error word is then set) or another
// waiter failed.
template <bool Relaxed, bool Sleep>
__device__ bool poll_generation(const Words& words, unsigned int* word, unsigned int expected) {
  const Knobs& k = words.knobs;
  long long start = clock64();
  while (clock64() - start < k.poll_delay) {
  }
  for (;;) {
    for (unsigned int polls = 0; polls <= k.check_mask; polls += 4) {
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        unsigned int v = Relaxed ? gb::load_relaxed(word) : gb::load_acquire(word);
        if ((v & kGenerationBit) == expected) return true;
        if constexpr (Sleep) __nanosleep(k.sleep_ns);
      }
    }
    if (gb::load_relaxed(words.error()) != 0) return false;
    if (clock64() - start > kTimeoutCycles) {
      atomicExch(words.error(), 1u);
      return false;
    }
  }
}

// Waits for the generation `expected`, then acquires. False when the wait failed.
__device__ inline bool wait_for_generation(const Words& words, unsigned int* word,
                                           unsigned int expected) {
  const Knobs& k = words.knobs;
  if (!k.relaxed_poll)
    return k.sleep_ns != 0 ? poll_generation<false, true>(words, word, expected)
                           : poll_generation<false, false>(words, word, expected);
  bool ok = k.sleep_ns != 0 ? poll_generation<true, true>(words, word, expected)
                            : poll_generation<true, false>(words, word, expected);
  gb::fence_acquire();
  return ok;
}

// The lanes of this thread's warp (the last warp of a block may be partial).
__device__ inline unsigned int warp_lanes() {
  unsigned int first = threadIdx.x & ~31u;
  unsigned int lanes = min(32u, blockDim.x - first);
  return lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
}

// Flip arrivals, at one or two levels. An arrival is a block (its thread 0, after
// __syncthreads) or, for blocks of one warp by default, a warp (its lane 0, after
// __syncwarp): then sync() has no __syncthreads at all, whose cost is most of a barrier among
// a few dozen blocks. Above about 1100 arrivals the cost of a one-word barrier is the
// serialisation of all n atomics (and of the polls between them) on one L2 line, so the
// arrivals are split into runs of m (about √n) that each meet first in a sub-word of their own
// line; the last arriver of each run (the one whose atomic flips bit 31 of the sub-word, found
// from the returned value; acq_rel, so that it has seen its run's writes) then arrives at the
// top word for the run. Each level uses the flip arithmetic of the public header: the first
// member adds 0x80000000 − (members − 1), the others 1, so bit 31 flips exactly at the last
// arrival and the low bits are zero again: nothing is ever reset. An arrival cannot reach a
// sub-word for barrier k + 1 before the top word flipped for barrier k, which needs every
// arrival of k, so levels never mix barriers. Every thread keeps the top word's generation bit
// in a register (read at the start of the kernel, before any arrival, when the bit cannot flip
// yet), so a fire-and-forget arrival needs no returned value and every warp can poll. With
// thousands of arrivals the polls themselves crowd the top word's line and delay the atomics
// queued there; then (Knobs::release_lines) the last arriver, after an acq_rel fence, copies the
// new generation into a few words of their own lines, and the waiters poll those copies: no
// poll meets an arrival. A copy cannot move on to barrier k + 1 before its waiters have left
// barrier k, since k + 1 needs their arrivals. The copy costs the last arriver the atomic's
// answer and a fence, which is why it only pays at the largest grids. From about a hundred to
// 2200 arrivals (Knobs::rows) the arrivals and the polls are spread instead over a table of r
// rows × c columns of words, each in a line (and so an L2 slice) of its own: arrival u belongs
// to row u mod r and, after one release fence, its warp's lanes add its share to every word of
// that row at once; its waiters poll column (u / r) mod c, a lane per row, and leave when every
// word of the column shows the barrier. Each word takes n / r atomics and serves a c-th of the
// polls, and no extra hop is needed. A row keeps the flip arithmetic among its own members, with
// a generation of two bits (bits 30-31: the row's first member adds 2^30 − (members − 1)),
// because a word counts adds, not barriers: it may take a fast member's add for barrier k + 1
// before a slow member's add for k has landed. Its generation shows M − [t < M·m] (M the first
// member's adds landed there, t all adds, m the row's members), which never decreases and
// reaches k only once every member's adds up to k have landed. A waiter at barrier k saw k − 1
// or later in every word of its column when it left k − 1, and no word can show k + 2 before
// this waiter arrives at k + 1; so it sees k − 1, k or k + 1 (other rows may have arrived at
// k + 1 already), which two bits tell apart, and once every row of its column shows k or k + 1,
// every arrival of k has landed. Which add completes a word tells nothing about the others (a
// straggler's add for k − 1 may still be on its way), so no arrival learns that it was the last:
// all waiters poll. Each thread computes its words and its unit's share once, at the start of the
// kernel: computing them at every barrier (integer divisions by the run-time table shape) cost
// about 0.2 µs per barrier on the H100. The three ways to arrive and wait are separate
// instantiations (FlipMode), chosen on the host from the knobs: in one kernel the compiler would
// merge their arrivals into one code path that no longer knows a single lane is active and wraps it
// in a warp-aggregation scan.
enum class FlipMode {
  block,            // thread 0 (with a table, warp 0) arrives and polls, the block waits at
                    // __syncthreads
  block_warp_wait,  // thread 0 (warp 0) arrives, every warp polls for itself
  warp,             // every warp arrives and polls for itself: no __syncthreads at all
};

// The table's generation: bits 30-31 of each word, counting barriers mod 4.
constexpr unsigned int kTableShift = 30;
constexpr unsigned int kTableGeneration = 1u << kTableShift;

// Whether a table word shows generation `expected` or the one after (mod 4).
__device__ inline bool table_reached(unsigned int value, unsigned int expected) {
  return (((value >> kTableShift) - expected) & 3u) <= 1u;
}

template <FlipMode Mode>
struct FlipBarrier {
  Words words;
  unsigned int generation;  // bit 31 of the flip word, or with a table its generation mod 4
  // With a table, for this thread's lane of its unit: the word it adds to (lanes below
  // `columns`), the word it polls (lane r polls row r; the lanes past the rows poll the last row
  // again, which the warp's load merges), as offsets from words.base, and the unit's share.
  unsigned int arrive_at = 0;
  unsigned int poll_at = 0;
  unsigned int share = 0;

  // The generation is read at the start of the kernel, before this thread's unit arrives, when
  // its own word cannot move on yet (with a table: its row's, whose generation all words share).
  __device__ explicit FlipBarrier(Words w) : words(w) {
    const Knobs& k = w.knobs;
    if (k.rows == 0) {
      generation = gb::load_relaxed(w.counter()) & kGenerationBit;
      return;
    }
    unsigned int u = unit(), n = units(), lane = threadIdx.x & 31u;
    unsigned int row = u % k.rows;
    unsigned int members = n / k.rows + (row < n % k.rows ? 1u : 0u);
    share = u == row ? kTableGeneration - (members - 1u) : 1u;
    arrive_at = w.table_offset(row, min(lane, k.columns - 1u));
    poll_at = w.table_offset(min(lane, k.rows - 1u), (u / k.rows) % k.columns);
    generation = gb::load_relaxed(w.base + w.table_offset(row, 0)) >> kTableShift;
  }

  __device__ static unsigned int warps() { return (blockDim.x + 31) / 32; }

  // This thread's arrival (a block or, in warp mode, a warp) and how many there are.
  __device__ static unsigned int unit() {
    return Mode == FlipMode::warp ? blockIdx.x * warps() + threadIdx.x / 32 : blockIdx.x;
  }
  __device__ static unsigned int units() {
    return Mode == FlipMode::warp ? gridDim.x * warps() : gridDim.x;
  }

  // Arrival `unit` of `units`; true when it was the last (and has acquired, and with release
  // lines has published the new generation in each).
  __device__ bool arrive(unsigned int unit, unsigned int units) {
    const Knobs& k = words.knobs;
    unsigned int* top = words.counter();
    unsigned int per = k.arrivals_per_subword;
    bool last;
    if (per >= units) {
      last = flip_arrive(k, top, units, unit == 0);
    } else {
      unsigned int run = unit / per;
      unsigned int first = run * per;
      unsigned int members = min(per, units - first);
      unsigned int add = unit == first ? 0x80000000u - (members - 1u) : 1u;
      if (!gb::flipped_by(fetch_add_acq_rel(words.subword(run), add), add)) return false;
      last = flip_arrive(k, top, (units + per - 1) / per, run == 0);
    }
    if (last && k.release_lines != 0) {
      fence_acq_rel();  // the copies release what the last arriver acquired
      for (unsigned int i = 0; i < k.release_lines; ++i)
        store_relaxed(words.release_line(i), generation);
    }
    return last;
  }

  // The word that the waiters of arrival `unit` poll.
  __device__ unsigned int* poll_word(unsigned int unit) const {
    const Knobs& k = words.knobs;
    return k.release_lines == 0 ? words.counter() : words.release_line(unit % k.release_lines);
  }

  // This thread's unit arrives at the table, by every lane of the calling warp: one release
  // fence, then a lane per word of the unit's row adds the unit's share.
  __device__ void arrive_at_table() const {
    fence_acq_rel();
    if ((threadIdx.x & 31u) < words.knobs.columns) red_add_relaxed(words.base + arrive_at, share);
  }

  // Its waiters, every lane of the calling warp: a lane per row polls the unit's column until
  // every row shows this barrier, in runs of check_mask + 1 polls between reads of the clock and
  // the error word, then acquires. False once the bound passed (the error word is then set) or
  // another waiter failed. The warp-wide form of poll_generation, kept apart from it: in this
  // loop a few instructions more per barrier showed in the latency (see the FlipBarrier comment).
  __device__ bool wait_at_table() const {
    const Knobs& k = words.knobs;
    unsigned int mask = warp_lanes();
    unsigned int* word = words.base + poll_at;
    long long start = clock64();
    while (clock64() - start < k.poll_delay) {
    }
    for (;;) {
      for (unsigned int polls = 0; polls <= k.check_mask; polls += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          if (__all_sync(mask, table_reached(gb::load_relaxed(word), generation))) {
            gb::fence_acquire();
            return true;
          }
        }
      }
      if (__any_sync(mask, gb::load_relaxed(words.error()) != 0)) return false;
      if (__any_sync(mask, clock64() - start > kTimeoutCycles)) {
        if ((threadIdx.x & 31u) == 0) atomicExch(words.error(), 1u);
        return false;
      }
    }
  }

  __device__ bool sync() {
    if (words.knobs.rows != 0) return sync_at_table();
    generation ^= kGenerationBit;
    if constexpr (Mode == FlipMode::warp) {
      unsigned int lanes = warp_lanes();
      __syncwarp(lanes);
      bool last = false;
      if ((threadIdx.x & 31u) == 0) last = arrive(unit(), units());
      if (__shfl_sync(lanes, last, 0)) {
        __syncwarp(lanes);  // the other lanes see what lane 0 acquired
        return true;
      }
      return wait_for_generation(words, poll_word(unit()), generation);
    } else if constexpr (Mode == FlipMode::block_warp_wait) {
      __syncthreads();
      bool last = false;
      if (threadIdx.x == 0) last = arrive(blockIdx.x, gridDim.x);
      if (threadIdx.x < 32 && __shfl_sync(warp_lanes(), last, 0)) {
        __syncwarp(warp_lanes());
        return true;
      }
      return wait_for_generation(words, poll_word(blockIdx.x), generation);
    } else {
      __syncthreads();
      bool ok = true;
      if (threadIdx.x == 0)
        ok = arrive(blockIdx.x, gridDim.x) ||
             wait_for_generation(words, poll_word(blockIdx.x), generation);
      return __syncthreads_and(ok) != 0;
    }
  }

  __device__ bool sync_at_table() {
    generation = (generation + 1u) & 3u;
    if constexpr (Mode == FlipMode::warp) {
      __syncwarp(warp_lanes());
      arrive_at_table();
      return wait_at_table();
    } else if constexpr (Mode == FlipMode::block_warp_wait) {
      __syncthreads();
      if (threadIdx.x < 32) arrive_at_table();
      return wait_at_table();
    } else {
      __syncthreads();
      bool ok = true;
      if (threadIdx.x < 32) {
        arrive_at_table();
        ok = wait_at_table();
      }
      return __syncthreads_and(ok) != 0;
    }
  }
};

}  // namespace
}  // namespace parpat::detail
