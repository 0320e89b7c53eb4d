// CUDA histogram `fast` for up to 16 · 65536 rows of 4- and 8-byte input (sm_90): the rows are
// shared out over the blocks of a thread-block cluster, row r counted by block r mod C of C in
// 16-bit packed counters (DrainedPackedSink, exact by headroom), and each value's row travels to
// its block through distributed shared memory instead of through device memory (the bucket sort
// of kernels_bucketed.cuh writes and reads 2 bytes a value, in chunks of temporary memory).
// Rows interleaved over the blocks give every block about the same share of any data whose
// density changes slowly over the rows (normal data), so no block of the cluster waits long at
// its barriers.
//
// cluster_count_kernel: persistent clusters; every round each block
//  1. places a tile of kClusterTile values (its rows, exact as in the other fast kernels), the
//     next tile's vectors loading meanwhile; a tile of one row adds to its slot's 64-bit count
//     with one atomic and sends nothing;
//  2. sorts the tile's rows by owner (row mod C) into its staging buffer: a count per (owner,
//     lane), an exclusive scan (each owner's stretch padded to whole 16-byte vectors with a pad
//     row), then each value takes a place with one atomic and stores its local row (row / C);
//     `owner_meta` holds each owner's start and count;
//  3. meets the cluster at its barrier (release / acquire) — staging is double-buffered, so one
//     barrier a round suffices;
//  4. reads its own stretch of every block's staging (16-byte loads from distributed shared
//     memory, the vectors of all stretches numbered through and taken by the threads in turn)
//     and adds each local row to its packed counters: plain shared reds while the rows received
//     since the last drain stay within kDrainWindow, the checked adds of PackedSink in a round
//     that alone could pass it.
// At the end every block adds a contiguous range of rows (read from their owners' counters, so
// that a warp's 64-bit atomics fall on neighbouring slots) to the global counts.
#pragma once

#include <cooperative_groups.h>

#include "histogram/cuda/kernels_bucketed.cuh"
#include "histogram/cuda/sinks.cuh"

namespace parpat::detail {
// Private to histogram/cuda.cu, the one file that includes it.
namespace {

constexpr int kClusterBlock = 1024;                                // threads a block
constexpr unsigned kClusterValues = 8;                             // values a thread and round
constexpr unsigned kClusterTile = kClusterBlock * kClusterValues;  // values a block and round
constexpr unsigned kMaxClusterBlocks = 16;                         // non-portable cluster size
constexpr unsigned kStagingRows = kClusterTile + kBucketPad * kMaxClusterBlocks;  // with the pads

// One problem for cluster_count_kernel.
struct ClusterCount {
  const uint4* vectors;  // the first vector of the whole tiles
  unsigned tiles;        // whole tiles of kClusterTile values
  unsigned rounds;       // tiles each block takes (its last ones may lie past the input)
  unsigned owner_bits;   // C = 2^owner_bits blocks a cluster
  unsigned counted;      // rows
  unsigned pad_row;      // the local row that takes the pads (even: a word of its own)
  unsigned hist_words;   // the packed counters' words (a multiple of 4)
};

// The dynamic shared memory of cluster_count_kernel: the packed counters, two staging buffers,
// the (owner, lane) counters and two tables of owner stretches.
__host__ __device__ constexpr std::size_t cluster_shared_bytes(unsigned hist_words) {
  return (std::size_t(hist_words) + 2 * kStagingRows + kMaxClusterBlocks * 32 +
          2 * kMaxClusterBlocks) *
         sizeof(unsigned);
}

template <class T, class Rule>
__global__ void __launch_bounds__(kClusterBlock, 1)
    cluster_count_kernel(ClusterCount c, Rule rule, unsigned long long* counts) {
#if __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  constexpr int kVec = 16 / sizeof(T);
  constexpr int kLoads = kClusterValues / kVec;
  extern __shared__ __align__(16) unsigned shared[];
  unsigned* hist = shared;
  unsigned* staging = hist + c.hist_words;
  unsigned* cursor = staging + 2 * kStagingRows;
  unsigned* owner_meta = cursor + kMaxClusterBlocks * 32;
  __shared__ unsigned bucket_count[kMaxClusterBlocks];
  __shared__ unsigned warp_sums[32];
  __shared__ unsigned stretch_first[kMaxClusterBlocks + 1];  // a stretch's first vector, numbered
  __shared__ unsigned stretch_start[kMaxClusterBlocks];      // and its start in its staging
  __shared__ unsigned leader;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned owners = 1u << c.owner_bits, owner_mask = owners - 1;
  const unsigned rank = cluster.block_rank();
  const unsigned clusters = gridDim.x >> c.owner_bits, first_block = blockIdx.x - rank;
  const unsigned my_rows = (c.counted - rank + owner_mask) >> c.owner_bits;
  const RowSlots slots = row_slots(rule);
  const DrainedPackedSink drained(hist, counts, rank, my_rows, slots, owners);
  const PackedSink& checked = drained;
  for (unsigned i = threadIdx.x; i < c.hist_words; i += blockDim.x)
    hist[i] = 0;
  for (unsigned i = threadIdx.x; i < owners * 32; i += blockDim.x)
    cursor[i] = 0;
  // Counter (owner, lane) at column_base + owner · 128, opaque to the compiler (one multiply-add
  // an address), as the bucket sort's.
  unsigned column_base = unsigned(__cvta_generic_to_shared(cursor)) + threadIdx.x % 32 * 4;
  unsigned owner_stride = 32 * 4;
  asm volatile("" : "+r"(column_base), "+r"(owner_stride));
  VectorPlacer<T, Rule> placer;
  // Round k's tile of this block: the clusters take turns, each a tile a block.
  auto tile_of = [&](unsigned round) { return (round * clusters) * owners + first_block + rank; };
  auto load = [&](unsigned tile, int u) {
    return tile < c.tiles ? __ldcs(c.vectors + (long long)tile * (kClusterTile / kVec) +
                                   u * kClusterBlock + threadIdx.x)
                          : make_uint4(0, 0, 0, 0);
  };
  uint4 next[kLoads];
#pragma unroll
  for (int u = 0; u < kLoads; ++u)
    next[u] = load(tile_of(0), u);
  unsigned since_drain = 0;  // rows received since the counters were last drained
  for (unsigned round = 0; round < c.rounds; ++round) {
    unsigned* stage = staging + (round & 1) * kStagingRows;
    unsigned* meta = owner_meta + (round & 1) * kMaxClusterBlocks;
    const bool valid = tile_of(round) < c.tiles;
    unsigned rows[kClusterValues];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const auto placed = placer.place(rule, next[u]);
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        rows[u * kVec + k] = placed.rows[k];
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
      next[u] = load(tile_of(round + 1), u);
    if (threadIdx.x == 0) leader = rows[0];
    __syncthreads();  // `leader` written, `cursor` zeroed
    bool same = true;
#pragma unroll
    for (unsigned k = 0; k < kClusterValues; ++k)
      same &= rows[k] == leader;
    const bool one_row = __syncthreads_and(valid && same);
    if (!valid || one_row) {
      if (one_row && threadIdx.x == 0)
        atomicAdd(counts + slots.of(leader), (unsigned long long)kClusterTile);
      if (threadIdx.x < owners) meta[threadIdx.x] = 0;
    } else {
#pragma unroll
      for (unsigned k = 0; k < kClusterValues; ++k)
        asm volatile(
            "red.shared.add.u32 [%0], 1;" ::"r"(column_base + (rows[k] & owner_mask) * owner_stride)
            : "memory");
      __syncthreads();
      block_exclusive_scan(cursor, owners * 32, warp_sums, bucket_count, 32);
      if (threadIdx.x < owners) {
        const unsigned start = cursor[threadIdx.x * 32], count = bucket_count[threadIdx.x];
        meta[threadIdx.x] = start | count << 16;
        for (unsigned pad = start + count; pad < start + padded_rows(count); ++pad)
          stage[pad] = c.pad_row;
      }
      __syncthreads();  // the starts are read before values take places
      unsigned places[kClusterValues];
#pragma unroll
      for (unsigned k = 0; k < kClusterValues; ++k)
        asm volatile("atom.shared.add.u32 %0, [%1], 1;"
                     : "=r"(places[k])
                     : "r"(column_base + (rows[k] & owner_mask) * owner_stride)
                     : "memory");
#pragma unroll
      for (unsigned k = 0; k < kClusterValues; ++k)
        stage[places[k]] = rows[k] >> c.owner_bits;
    }
    cluster.sync();  // every block's staging of this round is complete
    for (unsigned i = threadIdx.x; i < owners * 32; i += blockDim.x)
      cursor[i] = 0;
    if (threadIdx.x < 32) {
      const unsigned lane = threadIdx.x;
      const unsigned m = lane < owners ? *cluster.map_shared_rank(meta + rank, lane) : 0u;
      const unsigned vectors = padded_rows(m >> 16) / 4;
      const unsigned inclusive = warp_inclusive_sum(vectors, lane);
      if (lane < owners) {
        stretch_first[lane] = inclusive - vectors;
        stretch_start[lane] = m & 0xFFFFu;
      }
      if (lane == 31) stretch_first[owners] = inclusive;
    }
    __syncthreads();
    const unsigned total = stretch_first[owners], received = total * 4;
    if (since_drain + received > kDrainWindow) {
      drained.drain();
      __syncthreads();
      since_drain = 0;
    }
    const bool checked_adds = received > kDrainWindow;
    for (unsigned v = threadIdx.x; v < total; v += blockDim.x) {
      unsigned q = 0;  // the block whose stretch holds vector v
      for (unsigned step = kMaxClusterBlocks / 2; step; step /= 2)
        if (q + step < owners && stretch_first[q + step] <= v) q += step;
      const unsigned* from =
          cluster.map_shared_rank(stage, q) + stretch_start[q] + (v - stretch_first[q]) * 4;
      const uint4 w = *reinterpret_cast<const uint4*>(from);
      const unsigned local[4] = {w.x, w.y, w.z, w.w};
      if (checked_adds) {
        checked.add_ones(local);
      } else {
        drained.add_ones(local);
      }
    }
    // A round that could pass the headroom settled its own carries, but left rows anywhere
    // below 2^16: the next round drains first.
    since_drain = checked_adds ? kDrainWindow : since_drain + received;
  }
  cluster.sync();  // every count is in
  // Block b adds rows [b·span, (b + 1)·span) of the cluster, row r read from block r mod C.
  const unsigned span = (c.counted + owner_mask) >> c.owner_bits;
  const unsigned end = min(c.counted, (rank + 1) * span);
  for (unsigned r = rank * span + threadIdx.x; r < end; r += blockDim.x) {
    const unsigned local = r >> c.owner_bits;
    const unsigned word = *cluster.map_shared_rank(hist + local / 2, r & owner_mask);
    const unsigned count = word >> (16 * (local & 1)) & 0xFFFFu;
    if (count) atomicAdd(counts + slots.of(r), (unsigned long long)count);
  }
  cluster.sync();  // no block leaves while another reads its counters
#endif
}

}  // namespace
}  // namespace parpat::detail
