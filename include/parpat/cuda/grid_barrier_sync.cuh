// parpat/cuda/grid_barrier_sync.cuh — the device side of the grid barrier: the handle a kernel
// receives (GridBarrier) and the object its threads synchronise with (GridSync). Included by
// parpat/cuda/grid_barrier.cuh, which has the host side and the usage.
#pragma once

#include "parpat/cuda/grid_barrier_words.cuh"

namespace parpat::cuda {

// The kernel parameter: where the barrier's words are and how this grid uses them. Made by
// launch_with_grid_barrier from a GridBarrierMemory, for that launch's grid and arrivals.
template <GridArrivals Arrivals>
struct BasicGridBarrier {
  // About one second on current GPUs; long enough for any phase that is not itself stuck.
  static constexpr long long kDefaultTimeoutCycles = 2000000000LL;
  unsigned int* words;
  GridBarrierLayout layout;
  long long timeout_cycles;
};

// Block arrivals (any block size), and warp arrivals (for blocks of one warp they save the
// __syncthreads; measured on the H100, the stencil of groups of 32 took 0.83 of cooperative
// groups' time against 0.85 with block arrivals).
using GridBarrier = BasicGridBarrier<GridArrivals::block>;
using WarpGridBarrier = BasicGridBarrier<GridArrivals::warp>;

// Each thread's side of the barrier: make one per thread at the start of the kernel, before any
// thread of its block or warp calls sync(), and call sync() from every thread of the grid the
// same number of times. It keeps the generation in a register, so it cannot be copied: pass it
// by reference.
//
// One level: arrivals use the flip word (word 0). Up to a tuned count they are fire-and-forget
// reductions and every waiter polls at once; above it atomics that return the old value (the
// last arriver does not poll, and fewer polls compete with the arrivals for the line). With
// thousands of arrivals the cost is the serialisation of all n atomics (and of the polls between
// them) on one L2 line, so the arrivals are split into runs of m (about √n) that each meet first
// in a sub-word of their own line; the last arriver of each run (the one whose atomic flips bit
// 31 of the sub-word; acq_rel, so that it has seen its run's writes) then arrives at the top word
// for the run. An arrival cannot reach a sub-word for barrier k + 1 before the top word flipped
// for barrier k, which needs every arrival of k, so levels never mix barriers. There the polls
// themselves crowd the top word's line, so the last arriver, after an acq_rel fence, copies the
// new generation into a few words of their own lines (release lines) and the waiters poll those
// copies; a copy cannot move on to barrier k + 1 before its waiters have left barrier k.
//
// The table: from about a hundred to a few thousand arrivals the arrivals and the polls spread
// over r rows × c columns of words, each in a line (and so an L2 slice) of its own. Arrival u
// belongs to row u mod r and, after one release fence, its warp's lanes add its share to every
// word of that row at once; its waiters poll column (u / r) mod c, a lane per row, and leave when
// every word of the column shows the barrier. Each word takes n / r atomics and serves a c-th of
// the polls, with no extra hop. A row keeps the flip arithmetic among its own members, with a
// generation of two bits (bits 30-31: the row's first member adds 2^30 − (members − 1)), because
// a word counts adds, not barriers: it may take a fast member's add for barrier k + 1 before a
// slow member's add for k has landed. Its generation shows M − [t < M·m] (M the first member's
// adds landed there, t all adds, m the row's members), which never decreases and reaches k only
// once every member's adds up to k have landed. A waiter at barrier k saw k − 1 or later in every
// word of its column when it left k − 1, and no word can show k + 2 before this waiter arrives at
// k + 1; so it sees k − 1, k or k + 1, which two bits tell apart, and once every row of its column
// shows k or k + 1, every arrival of k has landed. No arrival learns that it was the last, so all
// waiters poll. Each thread computes its words and its unit's share once, here: computing them at
// every barrier (integer divisions by the run-time table shape) cost about 0.2 µs per barrier on
// the H100.
template <GridArrivals Arrivals>
class BasicGridSync {
 public:
  // Reads the generation before this thread's unit can arrive, when its word cannot move on
  // yet (with a table: its row's, whose generation all words of the row share).
  __device__ explicit BasicGridSync(const BasicGridBarrier<Arrivals>& barrier)
      : words_(barrier.words),
        layout_(barrier.layout),
        timeout_cycles_(barrier.timeout_cycles),
        thread_(detail::linear_thread()),
        lanes_(detail::warp_lanes()) {
    if (layout_.rows == 0) {
      generation_ = detail::load_relaxed(words_) & detail::kGenerationBit;
      return;
    }
    unsigned int u = unit(), n = units(), lane = thread_ & 31u;
    unsigned int row = u % layout_.rows;
    unsigned int members = n / layout_.rows + (row < n % layout_.rows ? 1u : 0u);
    share_ = u == row ? kTableGeneration - (members - 1u) : 1u;
    arrive_at_ = detail::table_offset(layout_, row, min(lane, layout_.columns - 1u));
    poll_at_ = detail::table_offset(layout_, min(lane, layout_.rows - 1u),
                                    (u / layout_.rows) % layout_.columns);
    generation_ =
        detail::load_relaxed(words_ + detail::table_offset(layout_, row, 0)) >> kTableShift;
  }
  BasicGridSync(const BasicGridSync&) = delete;
  BasicGridSync& operator=(const BasicGridSync&) = delete;

  // Waits until every thread of the grid has called sync() as often as this one; memory
  // written before it by any thread is visible after it to every thread. Returns false (in
  // every thread of the block) when the barrier failed: a wait exceeded the bound.
  __device__ bool sync() {
    if (layout_.rows != 0) return sync_at_table();
    generation_ ^= detail::kGenerationBit;
    if constexpr (kWarp) {
      unsigned int lanes = lanes_;
      __syncwarp(lanes);
      bool last = false;
      if ((thread_ & 31u) == 0) last = arrive(unit(), units());
      if (__shfl_sync(lanes, last, 0)) {
        __syncwarp(lanes);  // the other lanes see what lane 0 acquired
        return true;
      }
      return wait(poll_word(unit()));
    } else {
      __syncthreads();
      bool ok = true;
      if (thread_ == 0) ok = arrive(block(), blocks()) || wait(poll_word(block()));
      return __syncthreads_and(ok) != 0;
    }
  }

  // Whether some wait of this barrier has exceeded its bound (cheap: one load).
  __device__ bool failed() const { return detail::load_relaxed(words_ + 1) != 0; }

 private:
  static constexpr bool kWarp = Arrivals == GridArrivals::warp;

  // The table's generation: bits 30-31 of each word, counting barriers mod 4.
  static constexpr unsigned int kTableShift = 30;
  static constexpr unsigned int kTableGeneration = 1u << kTableShift;

  __device__ static unsigned int block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
  __device__ static unsigned int block() {
    return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  }
  __device__ static unsigned int blocks() { return gridDim.x * gridDim.y * gridDim.z; }
  __device__ static unsigned int warps() { return (block_threads() + 31u) / 32u; }

  // This thread's arrival (a block, or with warp arrivals a warp) and how many there are.
  __device__ unsigned int unit() const {
    return kWarp ? block() * warps() + thread_ / 32u : block();
  }
  __device__ unsigned int units() const {
    return detail::arrival_count(blocks(), block_threads(), Arrivals);
  }

  __device__ unsigned int* error() const { return words_ + 1; }

  __device__ bool wait(unsigned int* word) const {
    return detail::wait_for_generation(layout_, word, generation_, error(), timeout_cycles_);
  }

  // Arrival `unit` of `units` at one or two levels; true when it was the last (and has
  // acquired, and with release lines has published the new generation in each).
  __device__ bool arrive(unsigned int unit, unsigned int units) const {
    unsigned int per = layout_.arrivals_per_subword;
    bool last;
    if (per >= units) {
      last = detail::flip_arrive(layout_, words_, units, unit == 0);
    } else {
      unsigned int run = unit / per;
      unsigned int first = run * per;
      unsigned int members = min(per, units - first);
      unsigned int add = unit == first ? detail::kGenerationBit - (members - 1u) : 1u;
      unsigned int* subword = words_ + detail::subword_offset(layout_, run);
      if (!detail::flipped_by(detail::fetch_add_acq_rel(subword, add), add)) return false;
      last = detail::flip_arrive(layout_, words_, (units + per - 1) / per, run == 0);
    }
    if (last && layout_.release_lines != 0) {
      detail::fence_acq_rel();  // the copies release what the last arriver acquired
      for (unsigned int i = 0; i < layout_.release_lines; ++i)
        detail::store_relaxed(words_ + detail::release_line_offset(layout_, i), generation_);
    }
    return last;
  }

  // The word that the waiters of arrival `unit` poll.
  __device__ unsigned int* poll_word(unsigned int unit) const {
    return layout_.release_lines == 0
               ? words_
               : words_ + detail::release_line_offset(layout_, unit % layout_.release_lines);
  }

  // Whether a table word shows generation `expected` or the one after (mod 4).
  __device__ static bool table_reached(unsigned int value, unsigned int expected) {
    return (((value >> kTableShift) - expected) & 3u) <= 1u;
  }

  // This thread's unit arrives at the table, by every lane of the calling warp: one release
  // fence, then a lane per word of the unit's row adds the unit's share.
  __device__ void arrive_at_table() const {
    detail::fence_acq_rel();
    if ((thread_ & 31u) < layout_.columns) detail::red_add_relaxed(words_ + arrive_at_, share_);
  }

  // Its waiters, every lane of the calling warp: a lane per row polls the unit's column until
  // every row shows this barrier, in runs of check_mask + 1 polls between reads of the clock and
  // the error word, then acquires. False once the bound passed (the error word is then set) or
  // another waiter failed. The warp-wide form of detail::poll_generation, kept apart from it: in
  // this loop a few instructions more per barrier showed in the latency.
  __device__ bool wait_at_table() const {
    unsigned int mask = lanes_;
    unsigned int* word = words_ + poll_at_;
    long long start = clock64();
    while (clock64() - start < layout_.poll_delay) {
    }
    for (;;) {
      for (unsigned int polls = 0; polls <= layout_.check_mask; polls += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          if (__all_sync(mask, table_reached(detail::load_relaxed(word), generation_))) {
            detail::fence_acquire();
            return true;
          }
        }
      }
      if (__any_sync(mask, detail::load_relaxed(error()) != 0)) return false;
      if (__any_sync(mask, clock64() - start > timeout_cycles_)) {
        if ((thread_ & 31u) == 0) atomicExch(error(), 1u);
        return false;
      }
    }
  }

  __device__ bool sync_at_table() {
    generation_ = (generation_ + 1u) & 3u;
    if constexpr (kWarp) {
      __syncwarp(lanes_);
      arrive_at_table();
      return wait_at_table();
    } else {
      __syncthreads();
      bool ok = true;
      if (thread_ < 32) {
        arrive_at_table();
        ok = wait_at_table();
      }
      return __syncthreads_and(ok) != 0;
    }
  }

  unsigned int* words_;
  GridBarrierLayout layout_;
  long long timeout_cycles_;
  unsigned int thread_;      // this thread's index in its block
  unsigned int lanes_;       // the lanes of its warp
  unsigned int generation_;  // bit 31 of the flip word, or with a table its generation mod 4
  // With a table, for this thread's lane of its unit: the word it adds to (lanes below
  // `columns`), the word it polls (lane r polls row r; the lanes past the rows poll the last
  // row again, which the warp's load merges), as offsets from words_, and the unit's share.
  unsigned int arrive_at_ = 0;
  unsigned int poll_at_ = 0;
  unsigned int share_ = 0;
};

using GridSync = BasicGridSync<GridArrivals::block>;
using WarpGridSync = BasicGridSync<GridArrivals::warp>;

}  // namespace parpat::cuda
