// Grid barriers on CUDA. Each method is a small device-side policy with a sync() that every
// thread of the grid calls; three kernels (the classic stencil, the early-release stress test
// and an empty loop of barriers for latency) are templates over the policy. Every spin goes
// through bounded_spin (parpat/cuda/grid_barrier.cuh): past its bound it sets the error word
// and the kernel stops, so no method can hang. All spinning methods are launched cooperatively
// (cudaLaunchKernelEx with the cooperative attribute), so the driver guarantees that every
// block is resident, and the grid is first checked against the occupancy of the very kernel.
//
// The classic methods keep their idea and lose their races:
// - atomic-all and representative used to reset the counter to 0 once everyone had arrived.
//   A fast block that leaves and arrives at the next barrier before the reset loses its
//   increment (everybody then waits forever), and a block that reads the counter after the
//   reset never sees the full count. Here the counter only grows: barrier k waits for
//   k · participants arrivals (wrap-around compared as a signed difference). Knowing its
//   target, a waiter arrives with a reduction that returns nothing (red.release) and starts
//   polling at once.
// - flags (Xiao & Feng) published and read its flags with plain stores and loads and no
//   fences, so data written before the barrier was not guaranteed to be visible after it, and
//   implementations that cleared the flags for reuse raced with the next barrier. Here the
//   flags hold the barrier number (monotonic, never cleared) and are written with release
//   stores and read with acquire loads.
//
// `flip` is the bit-31 flip of the public header, as lean as cooperative groups' grid.sync:
// one arrival per block (or, for blocks of one warp, one per warp and no __syncthreads at all),
// relaxed polls with one acquire fence after the flip, the clock read only every thousand
// polls; from about a hundred to 2200 arrivals every arrival adds, after one release fence, to a
// row of a table of words in lines of their own and the waiters poll a column of it, so that no
// L2 line takes all the atomics or all the polls; above 2200 (a warp's arrivals in blocks of one
// warp, for instance) a delay of 900 cycles before the first poll, so that the arrivals queue on
// the word's line without the polls, a short sleep between polls, a first level of sub-words so
// that no L2 line serialises more than about √n atomics, and waiters that poll copies of the
// generation in lines of their own (see FlipBarrier). `hierarchical` first meets in the
// thread-block cluster's hardware barrier, then one block per cluster arrives at the flip word and
// polls it, and a second cluster barrier releases the cluster; a grid of one cluster (up to 8
// blocks by default) needs nothing but the cluster barrier. `cg` is cooperative groups'
// grid.sync and `relaunch` a kernel boundary per phase.
//
// The alternatives whose cost only a GPU can tell (atomic or reduction arrivals, relaxed or
// acquire polls, who polls, the cluster size, where the sub-word level starts) are kernel
// arguments read from the tuning table (Knobs below), so that PARPAT_TUNING sweeps them
// without a rebuild.
#include <cooperative_groups.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "barrier/barrier_internal.hpp"
#include "parpat/array.hpp"
#include "parpat/cuda/grid_barrier.cuh"
#include "runtime/cuda/cuda_device.hpp"
#include "runtime/tuning.hpp"

namespace parpat::detail {

namespace {

namespace cg = cooperative_groups;
namespace gb = parpat::cuda::detail;

constexpr long long kTimeoutCycles = parpat::cuda::GridBarrier::kDefaultTimeoutCycles;
constexpr unsigned int kGenerationBit = 0x80000000u;

__device__ inline void store_release(unsigned int* p, unsigned int v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(gb::global_address(p)), "r"(v)
               : "memory");
}

__device__ inline void store_relaxed(unsigned int* p, unsigned int v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(gb::global_address(p)), "r"(v)
               : "memory");
}

__device__ inline void fence_acq_rel() {
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

__device__ inline void red_add_relaxed(unsigned int* p, unsigned int v) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(gb::global_address(p)), "r"(v)
               : "memory");
}

__device__ inline unsigned int fetch_add_acq_rel(unsigned int* p, unsigned int v) {
  unsigned int old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(gb::global_address(p)), "r"(v)
               : "memory");
  return old;
}

// Whether a monotonic counter has reached `target`, across wrap-around of 32 bits.
__device__ inline bool reached(unsigned int value, unsigned int target) {
  return static_cast<int>(value - target) >= 0;
}

// The measured alternatives of `flip` and `hierarchical`, chosen on the host from the tuning
// table (read_knobs) and passed by value to the kernels; every branch on them is uniform.
struct Knobs {
  unsigned int arrivals_per_subword;  // flip: arrivals sharing one sub-word; >= all: one level
  unsigned int atom_arrive;    // 1 = atom returning the old value (the last arriver skips its
                               // poll), 0 = fire-and-forget red, polls start at once
  unsigned int relaxed_poll;   // 1 = relaxed polls + one acquire fence, 0 = acquire loads
  unsigned int check_mask;     // polls between reads of the clock and error word, minus one
  unsigned int sleep_ns;       // __nanosleep between polls (0: none; only for large grids)
  unsigned int release_lines;  // flip: 0 = waiters poll the arrival word; k > 0 = the last
                               // arriver copies the generation into k lines of their own
  unsigned int poll_delay;     // cycles between the arrival and the first poll (0: none)
  unsigned int rows;           // flip, one level: 0 = one arrival word; r >= 1 = a table of r
                               // rows (arrival u adds to every word of row u mod r) ...
  unsigned int columns;        // ... by this many columns (its waiters poll column
                               // (u / r) mod columns, every row of it)
  unsigned int table_stride;   // lines from one word of the table to the next
};

// The workspace: word 0 the arrival word or counter, word 1 the error word, then the flags
// method's `in` and `out` arrays (one word per block each), then the flip method's table of
// words (table_stride lines apart), release lines and sub-words, each word alone in its own
// 128-byte line so that their accesses go to different L2 lines.
constexpr unsigned int kLineWords = 32;

// The lines that the table of `knobs` spans (none without a table).
__host__ __device__ inline unsigned int table_lines(const Knobs& k) {
  return k.rows != 0 ? (k.rows * k.columns - 1) * k.table_stride + 1 : 0;
}

struct Words {
  unsigned int* base;
  Knobs knobs;
  __device__ unsigned int* counter() const { return base; }
  __device__ unsigned int* error() const { return base + 1; }
  __device__ unsigned int* in() const { return base + 2; }
  __device__ unsigned int* out() const { return base + 2 + gridDim.x; }
  __device__ unsigned int first_line() const {
    return (2 + 2 * gridDim.x + kLineWords - 1) / kLineWords;
  }
  // The word at `row`, `column` of the table, as an offset from base.
  __device__ unsigned int table_offset(unsigned int row, unsigned int column) const {
    return (first_line() + (row * knobs.columns + column) * knobs.table_stride) * kLineWords;
  }
  __device__ unsigned int* release_line(unsigned int i) const {
    return base + (first_line() + table_lines(knobs) + i) * kLineWords;
  }
  __device__ unsigned int* subword(unsigned int i) const {
    return release_line(knobs.release_lines + i);
  }
};

// Room for the flags of `groups` blocks, the table of `knobs`, its release lines and up to
// `subwords` sub-words.
std::size_t workspace_words(int groups, const Knobs& knobs, int subwords) {
  std::size_t lines = (2 + 2 * static_cast<std::size_t>(groups) + kLineWords - 1) / kLineWords;
  return (lines + table_lines(knobs) + knobs.release_lines +
          static_cast<std::size_t>(std::max(subwords, 1))) *
         kLineWords;
}

// Every thread is a participant: one release increment each, then an acquire spin.
struct AtomicAllBarrier {
  Words words;
  unsigned int epoch = 0;
  __device__ bool sync() {
    unsigned int participants = gridDim.x * blockDim.x;
    unsigned int target = ++epoch * participants;
    unsigned int* counter = words.counter();
    gb::red_add_release(counter, 1u);
    return gb::bounded_spin([&] { return reached(gb::load_acquire(counter), target); },
                            words.error(), kTimeoutCycles);
  }
};

// One thread per block arrives; the block's other threads wait at __syncthreads.
struct RepresentativeBarrier {
  Words words;
  unsigned int epoch = 0;
  __device__ bool sync() {
    __syncthreads();
    ++epoch;
    bool ok = true;
    if (threadIdx.x == 0) {
      unsigned int target = epoch * gridDim.x;
      unsigned int* counter = words.counter();
      gb::red_add_release(counter, 1u);
      ok = gb::bounded_spin([&] { return reached(gb::load_acquire(counter), target); },
                            words.error(), kTimeoutCycles);
    }
    return __syncthreads_and(ok) != 0;
  }
};

// Xiao & Feng: block b raises in[b]; block 0's threads wait for every in[], meet, and raise
// every out[]; block b waits for out[b]. No atomics, no contended word.
struct FlagsBarrier {
  Words words;
  unsigned int epoch = 0;
  __device__ bool sync() {
    __syncthreads();
    ++epoch;
    bool ok = true;
    if (blockIdx.x == 0) {
      for (unsigned int b = threadIdx.x + 1; ok && b < gridDim.x; b += blockDim.x) {
        unsigned int* flag = words.in() + b;
        ok = gb::bounded_spin([&] { return reached(gb::load_acquire(flag), epoch); }, words.error(),
                              kTimeoutCycles);
      }
      ok = __syncthreads_and(ok) != 0;
      for (unsigned int b = threadIdx.x + 1; ok && b < gridDim.x; b += blockDim.x)
        store_release(words.out() + b, epoch);
      return ok;
    }
    if (threadIdx.x == 0) {
      store_release(words.in() + blockIdx.x, epoch);
      unsigned int* flag = words.out() + blockIdx.x;
      ok = gb::bounded_spin([&] { return reached(gb::load_acquire(flag), epoch); }, words.error(),
                            kTimeoutCycles);
    }
    return __syncthreads_and(ok) != 0;
  }
};

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

struct CgBarrier {
  Words words;
  __device__ bool sync() {
    cg::this_grid().sync();
    return true;
  }
};

// Set in every block of a cluster, through distributed shared memory, when the cluster's
// global wait failed; read after the cluster barrier that follows.
__shared__ unsigned int cluster_failed;

__device__ inline void cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}
__device__ inline void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
__device__ inline void cluster_wait_acquire() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

// The cluster's blocks meet in its hardware barrier, published by each block's warp 0 alone:
// after __syncthreads its release covers the writes of the whole block (a release is cumulative),
// so the other warps arrive relaxed; every thread waits with acquire. On the H100 this took
// 0.45 µs per barrier among 2 blocks of 1024 threads, against 0.68 with a release arrival by
// every thread (cooperative groups' cluster.sync()), whose releases queue; 0.40 against 0.38
// among 2 blocks of 128.
__device__ inline void meet_in_cluster() {
  __syncthreads();
  if (threadIdx.x < 32)
    cluster_arrive_release();
  else
    cluster_arrive_relaxed();
  cluster_wait_acquire();
}

// The cluster's blocks meet in its hardware barrier (meet_in_cluster: release/acquire, so the
// block that goes on has seen the cluster's writes). When the grid is one cluster that is the
// whole barrier: the hardware waits for every thread of the grid, and the cluster's blocks are
// resident together by construction, so there is no spin to bound (2 blocks of 1024 on the H100:
// 0.45 µs per barrier against cooperative groups' 1.10). Otherwise block rank 0 then arrives at
// the flip word for the whole cluster, with one of gridDim / cluster arrivals. By default
// (EveryBlockPolls false) only rank 0's thread 0 polls the word, and a second cluster barrier
// releases the cluster: the others arrive at it at once with a relaxed arrival and wait in
// hardware, rank 0's warp 0 arrives with release after thread 0's acquire, so that the acquire
// reaches every block. A failed wait is pushed into every block's `cluster_failed` before that
// arrival, so all blocks of a cluster leave with the same answer and nobody reads another block's
// shared memory (which may have exited). With EveryBlockPolls (tuning
// `barrier.hierarchical.release` 1) every block's thread 0 polls the word and there is no second
// cluster barrier. Every thread keeps the word's generation bit in a register, read at the start of
// the kernel, before any arrival, when the bit cannot flip yet.
template <bool EveryBlockPolls>
struct HierarchicalBarrier {
  Words words;
  unsigned int generation;

  __device__ explicit HierarchicalBarrier(Words w)
      : words(w), generation(gb::load_relaxed(w.counter()) & kGenerationBit) {
    if (threadIdx.x == 0) cluster_failed = 0;
  }

  __device__ bool sync() {
    cg::cluster_group cluster = cg::this_cluster();
    unsigned int* word = words.counter();
    unsigned int clusters = gridDim.x / cluster.num_blocks();
    bool rank0 = cluster.block_rank() == 0;
    meet_in_cluster();
    if (clusters == 1) return true;
    generation ^= kGenerationBit;
    if constexpr (EveryBlockPolls) {
      bool ok = true;
      if (threadIdx.x == 0) {
        bool last = rank0 && flip_arrive(words.knobs, word, clusters, blockIdx.x == 0);
        ok = last || wait_for_generation(words, word, generation);
      }
      return __syncthreads_and(ok) != 0;
    } else {
      if (rank0 && threadIdx.x < 32) {
        if (threadIdx.x == 0) {
          bool ok = flip_arrive(words.knobs, word, clusters, blockIdx.x == 0) ||
                    wait_for_generation(words, word, generation);
          if (!ok)
            for (unsigned int rank = 0; rank < cluster.num_blocks(); ++rank)
              *cluster.map_shared_rank(&cluster_failed, rank) = 1u;
        }
        __syncwarp(warp_lanes());  // warp 0 arrives together, after thread 0's wait
        cluster_arrive_release();
      } else {
        cluster_arrive_relaxed();
      }
      cluster_wait_acquire();
      return cluster_failed == 0;
    }
  }
};

// The stencil and stress kernels are held to 32 registers (__launch_bounds__(1024, 2)), so that
// 16 blocks of 128 threads fit on an SM of 64K registers as the latency kernel does by itself:
// the safe grid of a method is the least over its three kernels.
template <class Barrier>
__global__ void __launch_bounds__(1024, 2)
    stencil_kernel(Words words, unsigned int* a, unsigned int n, long long steps) {
  Barrier barrier{words};
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int right = i + 1 < n ? i + 1 : i + 1 - n;
  unsigned int right2 = i + 2 < n ? i + 2 : i + 2 - n;
  for (long long s = 0; s < steps; ++s) {
    unsigned int t = a[i] + a[right] + a[right2];
    if (!barrier.sync()) return;
    a[i] = t;
    if (!barrier.sync()) return;
  }
}

// The last thread of each block publishes the round (not thread 0, which arrives for the block
// in most methods, so the barrier must also publish its block's other threads' writes); after
// the barrier every thread checks the block after it and the block half-way round, which must
// hold this round or the next.
template <class Barrier>
__global__ void __launch_bounds__(1024, 2)
    stress_kernel(Words words, unsigned int* slots, unsigned long long* early, long long rounds) {
  Barrier barrier{words};
  unsigned int next = (blockIdx.x + 1) % gridDim.x;
  unsigned int far = (blockIdx.x + gridDim.x / 2) % gridDim.x;
  unsigned long long seen = 0;
  for (long long r = 1; r <= rounds; ++r) {
    unsigned int round = static_cast<unsigned int>(r);
    if (threadIdx.x == blockDim.x - 1) store_relaxed(slots + blockIdx.x, round);
    if (!barrier.sync()) break;
    seen += (gb::load_relaxed(slots + next) - round > 1u) ? 1 : 0;
    seen += (gb::load_relaxed(slots + far) - round > 1u) ? 1 : 0;
  }
  if (seen) atomicAdd(early, seen);
}

template <class Barrier>
__global__ void latency_kernel(Words words, int barriers) {
  Barrier barrier{words};
  for (int k = 0; k < barriers; ++k)
    if (!barrier.sync()) return;
}

__global__ void stencil_step(const unsigned int* a, unsigned int* b, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int right = i + 1 < n ? i + 1 : i + 1 - n;
  unsigned int right2 = i + 2 < n ? i + 2 : i + 2 - n;
  b[i] = a[i] + a[right] + a[right2];
}

__global__ void stress_publish(unsigned int* slots, unsigned int round) {
  if (threadIdx.x == 0) slots[blockIdx.x] = round;
}

__global__ void stress_check(const unsigned int* slots, unsigned int round,
                             unsigned long long* early) {
  unsigned int next = (blockIdx.x + 1) % gridDim.x;
  unsigned int far = (blockIdx.x + gridDim.x / 2) % gridDim.x;
  unsigned long long seen = (slots[next] != round ? 1 : 0) + (slots[far] != round ? 1 : 0);
  if (seen) atomicAdd(early, seen);
}

__global__ void empty_kernel() {}

// ---------------------------------------------------------------------------------------------
// Host side.

// The tuned largest cluster size (a power of two, 1..16: the tuning limits refuse others).
int largest_cluster(const DeviceInfo& info) {
  return tuning(info, "barrier.hierarchical.cluster", 8);
}

// The cluster size for `groups` blocks: the largest power of two up to the tuned maximum that
// divides the grid.
int cluster_size(const DeviceInfo& info, int groups) {
  int size = largest_cluster(info);
  while (size > 1 && groups % size != 0)
    size /= 2;
  return size;
}

// Clusters above 8 blocks are not portable: the kernel must opt in before any query or launch.
template <class... Params>
void allow_cluster(void (*kernel)(Params...), int cluster) {
  if (cluster > 8)
    PARPAT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

// Whether cooperative and cluster launch combine on this driver: -1 unknown, 0 no, 1 yes.
std::atomic<int> cooperative_clusters{-1};

cudaLaunchConfig_t launch_config(CudaDevice& cuda, int groups, int group_size, int cluster,
                                 bool cooperative, cudaLaunchAttribute* attrs) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(groups);
  config.blockDim = dim3(group_size);
  config.stream = cuda.stream();
  config.attrs = attrs;
  config.numAttrs = 0;
  if (cooperative) {
    attrs[config.numAttrs].id = cudaLaunchAttributeCooperative;
    attrs[config.numAttrs].val.cooperative = 1;
    ++config.numAttrs;
  }
  if (cluster > 0) {
    attrs[config.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attrs[config.numAttrs].val.clusterDim.x = cluster;
    attrs[config.numAttrs].val.clusterDim.y = 1;
    attrs[config.numAttrs].val.clusterDim.z = 1;
    ++config.numAttrs;
  }
  return config;
}

// The largest co-resident grid of `kernel` with `group_size` threads (clustered when
// `clustered`), from the occupancy of that kernel.
template <class... Params>
int occupancy_groups(CudaDevice& cuda, void (*kernel)(Params...), int group_size, bool clustered) {
  cuda.activate();
  int per_sm = 0;
  PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, group_size, 0));
  int groups = per_sm * cuda.info().compute_units;
  if (!clustered) return groups;
  // The launch picks its cluster size from the grid, so the bound must hold for every size it
  // may pick.
  int largest = largest_cluster(cuda.info());
  allow_cluster(kernel, largest);
  for (int cluster = 1; cluster <= largest; cluster *= 2) {
    cudaLaunchAttribute attrs[2];
    cudaLaunchConfig_t config = launch_config(cuda, std::max(cluster, groups - groups % cluster),
                                              group_size, cluster, false, attrs);
    int clusters = 0;
    cudaError_t status = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw Error(ErrorKind::unsupported,
                  cuda.info().name + " cannot run clusters of " + std::to_string(cluster) +
                      " blocks of " + std::to_string(group_size) + " threads of this kernel (" +
                      cudaGetErrorString(status) +
                      "); lower the tuning value barrier.hierarchical.cluster",
                  "cuda", "cudaOccupancyMaxActiveClusters");
    }
    groups = std::min(groups, clusters * cluster);
  }
  return groups;
}

// Launches a spinning kernel so that every block is resident: cooperatively, and for the
// hierarchical method with cluster dimensions too. Where the driver refuses cooperative and
// cluster launch together, the cluster launch alone is used: the grid was already checked
// against cudaOccupancyMaxActiveClusters, so all clusters fit at once on an otherwise idle
// device.
template <class... Params, class... Args>
void launch_resident(CudaDevice& cuda, bool clustered, int groups, int group_size,
                     void (*kernel)(Params...), Args... args) {
  cuda.activate();
  int cluster = clustered ? cluster_size(cuda.info(), groups) : 0;
  allow_cluster(kernel, cluster);
  cudaLaunchAttribute attrs[2];
  bool cooperative = !clustered || cooperative_clusters.load() != 0;
  cudaLaunchConfig_t config = launch_config(cuda, groups, group_size, cluster, cooperative, attrs);
  cudaError_t status = cudaLaunchKernelEx(&config, kernel, args...);
  if (clustered && cooperative) {
    if (status == cudaSuccess) {
      cooperative_clusters.store(1);
    } else if (status != cudaErrorCooperativeLaunchTooLarge) {
      cudaGetLastError();
      cooperative_clusters.store(0);
      config = launch_config(cuda, groups, group_size, cluster, false, attrs);
      status = cudaLaunchKernelEx(&config, kernel, args...);
    }
  }
  PARPAT_CUDA(status);
  check_launch("barrier kernel");
}

enum class Method { atomic_all, representative, flags, flip, hierarchical, cg };

void require_cooperative(const Device& device) {
  if (!device.info().cooperative_launch)
    throw Error(ErrorKind::unsupported,
                device.label() +
                    " has no cooperative launch, so a grid barrier cannot be guaranteed there "
                    "(use the relaunch method)",
                "cuda", "cudaDevAttrCooperativeLaunch");
}

// How many of `arrivals` share one flip sub-word: all of them (one level) up to the tuned
// `barrier.flip.one_level_max`, where one word's serialised atomics still cost less than a
// second level's round trip; above it about √arrivals, which balances the atomics per sub-word
// against the arrivals at the top word (a tuned `barrier.flip.subword_blocks` overrides it).
unsigned int arrivals_per_subword(const DeviceInfo& info, int arrivals) {
  if (arrivals <= tuning(info, "barrier.flip.one_level_max", 600))
    return static_cast<unsigned int>(arrivals);
  int per = tuning(info, "barrier.flip.subword_blocks", 0);
  if (per <= 0) {
    per = 1;
    while (per * per < arrivals)
      ++per;
  }
  return static_cast<unsigned int>(per);
}

// The arrivals at a flip barrier of `groups` blocks of `group_size`: one per block, or one per
// warp for blocks up to the tuned `barrier.flip.warp_arrivals_block_max` threads.
bool warp_arrivals(const DeviceInfo& info, int group_size) {
  return group_size <= tuning(info, "barrier.flip.warp_arrivals_block_max", 64);
}

int flip_arrivals(const DeviceInfo& info, int groups, int group_size) {
  return warp_arrivals(info, group_size) ? groups * ((group_size + 31) / 32) : groups;
}

// The knobs of `flip` and `hierarchical` (`clustered`) for `groups` blocks of `group_size`
// threads, from the tuning table (src/runtime/tuning.cpp says what each key means; its limits
// refuse any value out of a key's range, so none is clamped here).
Knobs read_knobs(const DeviceInfo& info, int groups, int group_size, bool clustered) {
  Knobs k = {};
  int arrivals = flip_arrivals(info, groups, group_size);
  k.relaxed_poll = tuning(info, "barrier.flip.poll", 1) != 0 ? 1 : 0;
  unsigned int every = 1;
  unsigned int tuned =
      static_cast<unsigned int>(tuning(info, "barrier.flip.poll_check_every", 1024));
  while (every < tuned)
    every *= 2;
  k.check_mask = every - 1;
  if (!clustered && arrivals >= tuning(info, "barrier.flip.table_from", 100) &&
      arrivals <= tuning(info, "barrier.flip.table_max", 2200)) {
    int rows = 1;
    if (arrivals >= tuning(info, "barrier.flip.table_rows_from", 500))
      rows = std::min(std::max(arrivals / tuning(info, "barrier.flip.arrivals_per_row", 132), 2),
                      tuning(info, "barrier.flip.table_rows_max", 8));
    int columns =
        std::max(std::min(arrivals / tuning(info, "barrier.flip.arrivals_per_column", 132),
                          tuning(info, "barrier.flip.table_columns_max", 8)),
                 tuning(info, "barrier.flip.table_columns", 4));
    // A lane per row and per column in the fewest lanes of a warp that arrives or polls, and
    // no row without members.
    int lanes = group_size % 32 != 0 ? group_size % 32 : 32;
    k.arrivals_per_subword = static_cast<unsigned int>(arrivals);
    k.rows = static_cast<unsigned int>(std::min({rows, arrivals, lanes}));
    k.columns = static_cast<unsigned int>(std::min(columns, lanes));
    k.table_stride =
        static_cast<unsigned int>(tuning(info, "barrier.flip.table_stride_lines", 128));
    k.poll_delay = static_cast<unsigned int>(tuning(info, "barrier.flip.table_poll_delay", 200));
    return k;
  }
  k.arrivals_per_subword = arrivals_per_subword(info, arrivals);
  if (clustered) arrivals = groups / cluster_size(info, groups);
  bool release_lines =
      !clustered && arrivals >= tuning(info, "barrier.flip.release_lines_from", 1500);
  k.release_lines =
      release_lines ? static_cast<unsigned int>(tuning(info, "barrier.flip.release_lines", 4)) : 0;
  bool delayed = !release_lines && arrivals >= tuning(info, "barrier.flip.poll_delay_from", 1000);
  k.poll_delay =
      delayed ? static_cast<unsigned int>(tuning(info, "barrier.flip.poll_delay_cycles", 900)) : 0;
  k.atom_arrive =
      release_lines || (!delayed && arrivals > tuning(info, "barrier.flip.red_arrivals_max", 160))
          ? 1
          : 0;
  k.sleep_ns = arrivals >= tuning(info, "barrier.flip.poll_sleep_from", 1000)
                   ? static_cast<unsigned int>(tuning(info, "barrier.flip.poll_sleep_ns", 32))
                   : 0;
  return k;
}

// The sub-words a flip barrier of these knobs uses.
int subword_count(const DeviceInfo& info, const Knobs& k, int groups, int group_size) {
  int arrivals = flip_arrivals(info, groups, group_size);
  int per = static_cast<int>(k.arrivals_per_subword);
  return per >= arrivals ? 0 : (arrivals + per - 1) / per;
}

// A zeroed workspace for `groups` blocks of `group_size`, with the knobs of this launch.
struct Workspace {
  Knobs knobs;
  Buffer buffer;
  Workspace(const Device& device, int groups, int group_size, bool clustered)
      : knobs(read_knobs(device.info(), groups, group_size, clustered)),
        buffer(device, workspace_words(groups, knobs,
                                       subword_count(device.info(), knobs, groups, group_size)) *
                           sizeof(unsigned int)) {}
  Words words() const { return Words{static_cast<unsigned int*>(buffer.handle()), knobs}; }
  void clear(CudaDevice& cuda) const {
    PARPAT_CUDA(cudaMemsetAsync(buffer.handle(), 0, buffer.bytes(), cuda.stream()));
  }
  bool failed() const {
    unsigned int error = 0;
    buffer.download(&error, sizeof error, sizeof(unsigned int));
    return error != 0;
  }
};

template <class P>
struct PolicyTag {
  using type = P;
};

// Calls f(PolicyTag<P>) for every policy P that method M may launch (flip and hierarchical
// have one per mode), so that the safe grid holds whatever the tuning picks.
template <Method M, class F>
void for_each_policy(F&& f) {
  if constexpr (M == Method::atomic_all) {
    f(PolicyTag<AtomicAllBarrier>{});
  } else if constexpr (M == Method::representative) {
    f(PolicyTag<RepresentativeBarrier>{});
  } else if constexpr (M == Method::flags) {
    f(PolicyTag<FlagsBarrier>{});
  } else if constexpr (M == Method::flip) {
    f(PolicyTag<FlipBarrier<FlipMode::block>>{});
    f(PolicyTag<FlipBarrier<FlipMode::block_warp_wait>>{});
    f(PolicyTag<FlipBarrier<FlipMode::warp>>{});
  } else if constexpr (M == Method::hierarchical) {
    f(PolicyTag<HierarchicalBarrier<false>>{});
    f(PolicyTag<HierarchicalBarrier<true>>{});
  } else {
    f(PolicyTag<CgBarrier>{});
  }
}

// Calls f(PolicyTag<P>) for the policy of method M that the tuning picks for groups of
// `group_size`.
template <Method M, class F>
void with_policy(const DeviceInfo& info, int group_size, F&& f) {
  if constexpr (M == Method::flip) {
    if (warp_arrivals(info, group_size))
      f(PolicyTag<FlipBarrier<FlipMode::warp>>{});
    else if (tuning(info, "barrier.flip.wait", 0) != 0)
      f(PolicyTag<FlipBarrier<FlipMode::block_warp_wait>>{});
    else
      f(PolicyTag<FlipBarrier<FlipMode::block>>{});
  } else if constexpr (M == Method::hierarchical) {
    if (tuning(info, "barrier.hierarchical.release", 0) != 0)
      f(PolicyTag<HierarchicalBarrier<true>>{});
    else
      f(PolicyTag<HierarchicalBarrier<false>>{});
  } else {
    for_each_policy<M>(f);
  }
}

template <Method M>
int spin_max_groups(const Device& device, int group_size) {
  require_cooperative(device);
  auto& cuda = backend_cast<CudaDevice>(device);
  if (M == Method::hierarchical && cuda.props().major < 9)
    throw Error(ErrorKind::unsupported,
                device.label() + " has no thread-block clusters (they need sm_90 or later)");
  bool clustered = M == Method::hierarchical;
  int groups = kUnlimitedGroups;
  for_each_policy<M>([&](auto tag) {
    using P = typename decltype(tag)::type;
    groups = std::min(groups, occupancy_groups(cuda, stencil_kernel<P>, group_size, clustered));
    groups = std::min(groups, occupancy_groups(cuda, stress_kernel<P>, group_size, clustered));
    groups = std::min(groups, occupancy_groups(cuda, latency_kernel<P>, group_size, clustered));
  });
  return groups;
}

template <Method M>
void spin_stencil(const Device& device, int groups, int group_size, std::int64_t steps,
                  StencilResult& result) {
  auto& cuda = backend_cast<CudaDevice>(device);
  unsigned int n = static_cast<unsigned int>(groups) * group_size;
  Workspace ws(device, groups, group_size, M == Method::hierarchical);
  std::vector<unsigned int> host(n, 1u);
  Buffer a(device, n * sizeof(unsigned int));
  a.upload(host.data(), a.bytes());
  ws.clear(cuda);
  with_policy<M>(device.info(), group_size, [&](auto tag) {
    using P = typename decltype(tag)::type;
    cuda.timer_start();
    launch_resident(cuda, M == Method::hierarchical, groups, group_size, stencil_kernel<P>,
                    ws.words(), static_cast<unsigned int*>(a.handle()), n,
                    static_cast<long long>(steps));
    result.time_ms = cuda.timer_stop_ms();
  });
  result.barrier_failed = ws.failed();
  a.download(host.data(), a.bytes());
  result.value = host[0];
  result.all_equal = std::all_of(host.begin(), host.end(), [&](auto v) { return v == host[0]; });
}

template <Method M>
void spin_stress(const Device& device, int groups, int group_size, std::int64_t rounds,
                 StressResult& result) {
  auto& cuda = backend_cast<CudaDevice>(device);
  Workspace ws(device, groups, group_size, M == Method::hierarchical);
  Buffer slots(device, groups * sizeof(unsigned int)), early(device, sizeof(unsigned long long));
  PARPAT_CUDA(cudaMemsetAsync(slots.handle(), 0, slots.bytes(), cuda.stream()));
  PARPAT_CUDA(cudaMemsetAsync(early.handle(), 0, early.bytes(), cuda.stream()));
  ws.clear(cuda);
  with_policy<M>(device.info(), group_size, [&](auto tag) {
    using P = typename decltype(tag)::type;
    cuda.timer_start();
    launch_resident(cuda, M == Method::hierarchical, groups, group_size, stress_kernel<P>,
                    ws.words(), static_cast<unsigned int*>(slots.handle()),
                    static_cast<unsigned long long*>(early.handle()),
                    static_cast<long long>(rounds));
    result.time_ms = cuda.timer_stop_ms();
  });
  result.barrier_failed = ws.failed();
  unsigned long long count = 0;
  early.download(&count, sizeof count);
  result.early_releases = count;
}

template <Method M>
double spin_barriers_ms(const Device& device, int groups, int group_size, int barriers, int reps,
                        bool& failed) {
  auto& cuda = backend_cast<CudaDevice>(device);
  Workspace ws(device, groups, group_size, M == Method::hierarchical);
  std::vector<double> times;
  with_policy<M>(device.info(), group_size, [&](auto tag) {
    using P = typename decltype(tag)::type;
    for (int rep = 0; rep < reps + 2; ++rep) {
      ws.clear(cuda);
      cuda.timer_start();
      launch_resident(cuda, M == Method::hierarchical, groups, group_size, latency_kernel<P>,
                      ws.words(), barriers);
      double ms = cuda.timer_stop_ms();
      if (rep >= 2) times.push_back(ms);
    }
  });
  failed = ws.failed();
  return median_ms(times);
}

int relaunch_max_groups(const Device&, int) {
  return kUnlimitedGroups;
}

void relaunch_stencil(const Device& device, int groups, int group_size, std::int64_t steps,
                      StencilResult& result) {
  auto& cuda = backend_cast<CudaDevice>(device);
  unsigned int n = static_cast<unsigned int>(groups) * group_size;
  std::vector<unsigned int> host(n, 1u);
  Buffer a(device, n * sizeof(unsigned int)), b(device, n * sizeof(unsigned int));
  a.upload(host.data(), a.bytes());
  auto* from = static_cast<unsigned int*>(a.handle());
  auto* to = static_cast<unsigned int*>(b.handle());
  cuda.timer_start();
  for (std::int64_t s = 0; s < steps; ++s) {
    stencil_step<<<groups, group_size, 0, cuda.stream()>>>(from, to, n);
    std::swap(from, to);
  }
  check_launch("stencil_step");
  result.time_ms = cuda.timer_stop_ms();
  cuda.download(from, 0, host.data(), n * sizeof(unsigned int));
  result.value = host[0];
  result.all_equal = std::all_of(host.begin(), host.end(), [&](auto v) { return v == host[0]; });
}

void relaunch_stress(const Device& device, int groups, int group_size, std::int64_t rounds,
                     StressResult& result) {
  auto& cuda = backend_cast<CudaDevice>(device);
  Buffer slots(device, groups * sizeof(unsigned int)), early(device, sizeof(unsigned long long));
  auto* s = static_cast<unsigned int*>(slots.handle());
  auto* e = static_cast<unsigned long long*>(early.handle());
  PARPAT_CUDA(cudaMemsetAsync(e, 0, early.bytes(), cuda.stream()));
  cuda.timer_start();
  for (std::int64_t r = 1; r <= rounds; ++r) {
    stress_publish<<<groups, group_size, 0, cuda.stream()>>>(s, static_cast<unsigned int>(r));
    stress_check<<<groups, group_size, 0, cuda.stream()>>>(s, static_cast<unsigned int>(r), e);
  }
  check_launch("stress_check");
  result.time_ms = cuda.timer_stop_ms();
  unsigned long long count = 0;
  early.download(&count, sizeof count);
  result.early_releases = count;
}

double relaunch_barriers_ms(const Device& device, int groups, int group_size, int barriers,
                            int reps, bool& failed) {
  auto& cuda = backend_cast<CudaDevice>(device);
  failed = false;
  std::vector<double> times;
  for (int rep = 0; rep < reps + 2; ++rep) {
    cuda.timer_start();
    for (int k = 0; k < barriers; ++k)
      empty_kernel<<<groups, group_size, 0, cuda.stream()>>>();
    check_launch("empty_kernel");
    double ms = cuda.timer_stop_ms();
    if (rep >= 2) times.push_back(ms);
  }
  return median_ms(times);
}

VariantInfo info(const char* name, const char* idea, const char* params, bool is_default = false) {
  VariantInfo v = variant_info("barrier", Backend::cuda, name, idea, params);
  v.is_default = is_default;
  return v;
}

template <Method M>
BarrierVariant spin_variant(VariantInfo v) {
  return {std::move(v), spin_max_groups<M>, spin_stencil<M>, spin_stress<M>, spin_barriers_ms<M>};
}

}  // namespace

std::vector<BarrierVariant> cuda_barrier_variants() {
  return {
      spin_variant<Method::atomic_all>(
          info("atomic-all", "every thread adds 1 to one counter, waits for k·threads",
               "cooperative launch")),
      spin_variant<Method::representative>(
          info("representative", "one thread per block adds 1, the block waits at __syncthreads",
               "cooperative launch")),
      spin_variant<Method::flags>(
          info("flags", "Xiao & Feng: per-block in/out flags, block 0 gathers and releases",
               "cooperative launch")),
      spin_variant<Method::flip>(
          info("flip",
               "generation flip, one arrival per block (per warp for blocks <= 32), relaxed polls; "
               "from 100 to 2200 arrivals the arrivals and polls spread over a table of words, "
               "above it runs of ~sqrt(n) meet in sub-words first and the waiters poll copies of "
               "the generation",
               "cooperative launch", true)),
      spin_variant<Method::hierarchical>(
          info("hierarchical",
               "cluster barrier in hardware, one flip arrival and one poller per cluster, a "
               "second cluster barrier releases the cluster",
               "cluster<=8 (tuned), sm_90")),
      spin_variant<Method::cg>(
          info("cg", "cooperative groups grid.sync (baseline)", "cooperative launch")),
      {info("relaunch", "one kernel launch per phase (baseline)", ""), relaunch_max_groups,
       relaunch_stencil, relaunch_stress, relaunch_barriers_ms},
  };
}

}  // namespace parpat::detail
