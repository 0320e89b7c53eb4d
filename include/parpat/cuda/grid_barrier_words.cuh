// parpat/cuda/grid_barrier_words.cuh — the memory operations and the workspace layout of the
// grid barrier (included by parpat/cuda/grid_barrier.cuh; not meant to be included alone).
//
// The synchronisation primitives are PTX with the global state space spelled out (the generic
// forms cost an address-space check per access): arrivals are release atomics or reductions,
// polls relaxed loads, and one acquire fence follows the flip. The layout says where the words
// of one barrier live for a grid; the host picks it (plan_grid_barrier) and passes it by value.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace parpat::cuda {

// Who arrives at the barrier: each block (its thread 0, after __syncthreads), or each warp (its
// lane 0, after __syncwarp: no __syncthreads at all, which is most of the cost of a barrier among
// a few dozen blocks of one warp). A compile-time choice, part of the barrier's type: a run-time
// switch between the two in one kernel cost about 3 % of the latency on the H100.
enum class GridArrivals { block, warp };

// How a barrier of one grid arrives and waits, chosen on the host for the device, the grid, the
// block and the arrivals (plan_grid_barrier) and passed to the kernel by value; every branch on
// it is uniform across the grid.
struct GridBarrierLayout {
  unsigned int arrivals_per_subword;  // arrivals sharing one sub-word; >= all: one level
  unsigned int atom_arrive;           // 1: atom returning the old value (the last arriver skips its
                                      // poll), 0: a reduction, and polls start at once
  unsigned int check_mask;     // polls between reads of the clock and the error word, minus one
  unsigned int sleep_ns;       // __nanosleep between polls (0: none)
  unsigned int release_lines;  // 0: waiters poll the arrival word; k > 0: the last arriver
                               // copies the generation into k lines of their own, which they poll
  unsigned int poll_delay;     // cycles between an arrival and its first poll (0: none)
  unsigned int rows;           // 0: one arrival word; r >= 1: a table of r rows (arrival u adds
                               // to every word of row u mod r) ...
  unsigned int columns;        // ... by this many columns (its waiters poll column
                               // (u / r) mod columns, every row of it)
  unsigned int table_stride;   // lines from one word of the table to the next
};

inline bool operator==(const GridBarrierLayout& a, const GridBarrierLayout& b) {
  return a.arrivals_per_subword == b.arrivals_per_subword && a.atom_arrive == b.atom_arrive &&
         a.check_mask == b.check_mask && a.sleep_ns == b.sleep_ns &&
         a.release_lines == b.release_lines && a.poll_delay == b.poll_delay && a.rows == b.rows &&
         a.columns == b.columns && a.table_stride == b.table_stride;
}

namespace detail {

// The workspace, in 128-byte lines so that the words' accesses go to different L2 lines: line 0
// holds the arrival word (word 0) and the error word (word 1); then the table (its words
// table_stride lines apart), the release lines and the sub-words, a word per line.
constexpr unsigned int kLineWords = 32;
constexpr unsigned int kGenerationBit = 0x80000000u;

// The arrivals at a barrier of `blocks` blocks of `block_threads` threads: one per block, or
// one per warp.
__host__ __device__ inline unsigned int arrival_count(unsigned int blocks,
                                                      unsigned int block_threads,
                                                      GridArrivals arrivals) {
  return arrivals == GridArrivals::warp ? blocks * ((block_threads + 31u) / 32u) : blocks;
}

// The lines that the table of `layout` spans (none without a table).
__host__ __device__ inline unsigned int table_lines(const GridBarrierLayout& layout) {
  return layout.rows != 0 ? (layout.rows * layout.columns - 1) * layout.table_stride + 1 : 0;
}

// The sub-words that `arrivals` arrivals use under `layout` (none at one level).
__host__ __device__ inline unsigned int subword_count(const GridBarrierLayout& layout,
                                                      unsigned int arrivals) {
  unsigned int per = layout.arrivals_per_subword;
  return layout.rows != 0 || per == 0 || per >= arrivals ? 0 : (arrivals + per - 1) / per;
}

// The words a barrier of `arrivals` arrivals needs under `layout`.
__host__ __device__ inline std::size_t workspace_words(const GridBarrierLayout& layout,
                                                       unsigned int arrivals) {
  return (1 + static_cast<std::size_t>(table_lines(layout)) + layout.release_lines +
          subword_count(layout, arrivals)) *
         kLineWords;
}

// Word offsets from the workspace's base.
__host__ __device__ inline unsigned int table_offset(const GridBarrierLayout& layout,
                                                     unsigned int row, unsigned int column) {
  return (1 + (row * layout.columns + column) * layout.table_stride) * kLineWords;
}
__host__ __device__ inline unsigned int release_line_offset(const GridBarrierLayout& layout,
                                                            unsigned int i) {
  return (1 + table_lines(layout) + i) * kLineWords;
}
__host__ __device__ inline unsigned int subword_offset(const GridBarrierLayout& layout,
                                                       unsigned int i) {
  return release_line_offset(layout, layout.release_lines + i);
}

__device__ inline unsigned int* global_address(unsigned int* p) {
  return reinterpret_cast<unsigned int*>(__cvta_generic_to_global(p));
}

// This thread's index in its block, and the lanes of its warp (the last warp of a block may be
// partial).
__device__ inline unsigned int linear_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ inline unsigned int warp_lanes() {
  unsigned int lanes = min(32u, blockDim.x * blockDim.y * blockDim.z - (linear_thread() & ~31u));
  return lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
}

__device__ inline unsigned int load_relaxed(unsigned int* p) {
  unsigned int v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(global_address(p)) : "memory");
  return v;
}

__device__ inline unsigned int load_acquire(unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(global_address(p)) : "memory");
  return v;
}

__device__ inline void store_relaxed(unsigned int* p, unsigned int v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(global_address(p)), "r"(v) : "memory");
}

__device__ inline void store_release(unsigned int* p, unsigned int v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(global_address(p)), "r"(v) : "memory");
}

// Whether this compiler knows `fence.acquire` (PTX ISA 8.6, CUDA 12.8; sm_90 and later): one L1
// invalidation, no wait for outstanding stores as a full fence would.
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
#define PARPAT_HAVE_FENCE_ACQUIRE 1
#else
#define PARPAT_HAVE_FENCE_ACQUIRE 0
#endif

// Turns the preceding relaxed reads into acquire reads (an acquire pattern of the PTX model).
__device__ inline void fence_acquire() {
#if PARPAT_HAVE_FENCE_ACQUIRE && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.acquire.gpu;" ::: "memory");
#else
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
#endif
}

__device__ inline void fence_acq_rel() {
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

__device__ inline unsigned int fetch_add_release(unsigned int* p, unsigned int v) {
  unsigned int old;
  asm volatile("atom.release.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(global_address(p)), "r"(v)
               : "memory");
  return old;
}

__device__ inline unsigned int fetch_add_acq_rel(unsigned int* p, unsigned int v) {
  unsigned int old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(global_address(p)), "r"(v)
               : "memory");
  return old;
}

// Arrivals that need no answer: a waiter that knows its target needs no returned value.
__device__ inline void red_add_release(unsigned int* p, unsigned int v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(global_address(p)), "r"(v)
               : "memory");
}

__device__ inline void red_add_relaxed(unsigned int* p, unsigned int v) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(global_address(p)), "r"(v)
               : "memory");
}

// Whether an arrival that added `add` to `old` flipped bit 31, i.e. was the last one.
__device__ inline bool flipped_by(unsigned int old, unsigned int add) {
  return ((old ^ (old + add)) & kGenerationBit) != 0;
}

// One arrival at a flip word of `participants` arrivals (`master` for exactly one of them):
// the master adds 0x80000000 − (participants − 1), the others 1, so bit 31 flips exactly at the
// last arrival and the low bits are zero again. Returns whether it was the last, which only an
// atomic arrival can tell; the last arriver has then acquired every other arrival and needs no
// poll.
__device__ inline bool flip_arrive(const GridBarrierLayout& layout, unsigned int* word,
                                   unsigned int participants, bool master) {
  unsigned int add = master ? kGenerationBit - (participants - 1u) : 1u;
  if (!layout.atom_arrive) {
    red_add_release(word, add);
    return false;
  }
  if (!flipped_by(fetch_add_release(word, add), add)) return false;
  fence_acquire();
  return true;
}

// Polls until bit 31 of *word equals `expected`: after `poll_delay` cycles, runs of
// check_mask + 1 polls (a power of two, at least 4) with nothing but the load and the compare
// between them, unrolled by 4, then the clock and the error word. False once `timeout_cycles`
// passed (the error word is then set) or another waiter failed.
template <bool Sleep>
__device__ bool poll_generation(const GridBarrierLayout& layout, unsigned int* word,
                                unsigned int expected, unsigned int* error,
                                long long timeout_cycles) {
  long long start = clock64();
  while (clock64() - start < layout.poll_delay) {
  }
  for (;;) {
    for (unsigned int polls = 0; polls <= layout.check_mask; polls += 4) {
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        if ((load_relaxed(word) & kGenerationBit) == expected) return true;
        if constexpr (Sleep) __nanosleep(layout.sleep_ns);
      }
    }
    if (load_relaxed(error) != 0) return false;
    if (clock64() - start > timeout_cycles) {
      atomicExch(error, 1u);
      return false;
    }
  }
}

// Waits for the generation `expected` of *word, then acquires. False when the wait failed.
__device__ inline bool wait_for_generation(const GridBarrierLayout& layout, unsigned int* word,
                                           unsigned int expected, unsigned int* error,
                                           long long timeout_cycles) {
  bool ok = layout.sleep_ns != 0
                ? poll_generation<true>(layout, word, expected, error, timeout_cycles)
                : poll_generation<false>(layout, word, expected, error, timeout_cycles);
  fence_acquire();
  return ok;
}

}  // namespace detail
}  // namespace parpat::cuda
