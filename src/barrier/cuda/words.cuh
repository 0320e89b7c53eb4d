// The memory operations of the CUDA grid barriers (release and relaxed stores, acq_rel fences and
// atomics, relaxed reductions, in PTX on global addresses) and their workspace: the arrival word or
// counter, the error word, the flags, the flip table and its release lines, laid out by the knobs
// the host read from the tuning policy.
#pragma once

#include <cooperative_groups.h>
#include <cstddef>
#include "parpat/cuda/grid_barrier.cuh"

namespace parpat::detail {
// Private to barrier/cuda.cu, the one file that includes it.
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

}  // namespace
}  // namespace parpat::detail
