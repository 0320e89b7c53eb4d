// CUDA histogram `fast` beyond shared memory: rows sorted into buckets, then each bucket counted
// in shared memory. Counting 2^20 rows straight into global memory is bound by the L2's atomics
// (about 100 G updates/s on an H200, bench/floor/histogram_floor: 0.4 TB/s of 4-byte values);
// moving each value's row instead costs 2 bytes written and read again.
//  1. bucket_rows_kernel: a block takes whole tiles of 16-byte vectors (kTileLoads a thread; the
//     values past the last whole tile go straight to the counts, as few as they are), places
//     each value by the rule (its row, exact as in the other fast kernels), and writes the tile's
//     rows sorted by bucket (row >> shift) as 16-bit offsets within the bucket, in the tile's own
//     stretch of the temporary buffer; `meta[bucket][tile]` holds the bucket's start and count
//     in the tile. The sort is a counting sort in shared memory: a count per (bucket, column)
//     (a counter per lane up to 128 buckets, so a warp's atomics never share a bank; lanes in
//     pairs beyond), an exclusive scan, then each value takes a place with one atomic. Each
//     bucket's stretch is rounded up to whole 16-byte vectors with rows of offset 0, which the
//     count takes away again, so that the count reads whole vectors only. A tile whose values all
//     share a row adds them with one global atomic and writes nothing. Each bucket's total over the
//     chunk is summed with one global atomic per tile.
//  2. count_buckets_kernel: a bucket of T values makes K = round(T / target) items (at least
//     one), each an equal share of the chunk's tiles (for data drawn alike throughout, an equal
//     share of the values), so a heavy bucket (normal data) spreads over several blocks. Blocks
//     take items from a queue and count the item's rows in a lane-striped shared histogram of
//     the bucket's rows — a warp reads 32 tiles' starts and counts at once, numbers their
//     stretches' 16-byte vectors through, and its lanes take the vectors in turn, eight in
//     flight, a lane's eight rows at once — take the pads away from row 0 and add each row to
//     its slot's 64-bit count (one atomic per row an item saw).
#pragma once

#include "histogram/cuda/rules.cuh"

namespace parpat::detail {
// Private to histogram/cuda.cu, the one file that includes it.
namespace {

constexpr int kBucketBlock = 1024;     // threads of the sorting and counting blocks
constexpr int kTileLoads = 4;          // 16-byte vectors a thread sorts per tile
constexpr unsigned kMaxBuckets = 256;  // and 16 counters a bucket (the scan's 4096)
constexpr unsigned kVectorsAhead = 8;  // 16-byte vectors of rows a lane loads at once
constexpr unsigned kBucketPad = 8;     // a bucket's stretch in a tile: whole 16-byte vectors

// Counters per bucket while a tile is sorted: one per lane where the scan (4 counters a
// thread) takes them, else one per two lanes.
__host__ __device__ constexpr unsigned sort_columns(unsigned buckets) {
  return buckets * 32 <= 4 * kBucketBlock ? 32 : 16;
}

__device__ __host__ constexpr unsigned padded_rows(unsigned count) {
  return (count + kBucketPad - 1) / kBucketPad * kBucketPad;
}

template <class T>
constexpr unsigned kTileValues = kBucketBlock* kTileLoads*(16 / sizeof(T));

// One chunk of the input's whole tiles of 16-byte vectors, sorted and counted at once (its rows
// fit the temporary buffer).
struct BucketChunk {
  const uint4* vectors;  // the chunk's first vector
  unsigned tiles;        // tiles in the chunk
  unsigned shift;        // a row's bucket: row >> shift
  unsigned buckets;
  unsigned stride;   // rows of the temporary buffer a tile takes (its values and the pads)
  unsigned columns;  // sort_columns(buckets), passed: worked out in the sort it cost 2-5 %
};

// Sum of v over the lanes up to and including this one (lane = threadIdx.x % 32).
__device__ __forceinline__ unsigned warp_inclusive_sum(unsigned v, unsigned lane) {
  for (unsigned d = 1; d < 32; d *= 2) {
    const unsigned below = __shfl_up_sync(0xFFFFFFFFu, v, d);
    if (lane >= d) v += below;
  }
  return v;
}

// Exclusive prefix sums of a[0, n) in place, n ≤ 4 · blockDim.x; returns the total. Every thread
// of the block calls it. With `bucket_counts`, a[] holds a bucket's `columns` counters (16 or 32)
// after another: each bucket's sum is rounded up by padded_rows (the pads placed last, after its
// last column's values) and written to bucket_counts, unpadded.
__device__ unsigned block_exclusive_scan(unsigned* a, unsigned n, unsigned* warp_sums,
                                         unsigned* bucket_counts = nullptr, unsigned columns = 0) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned first = threadIdx.x * 4;
  unsigned v[4], sum = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    v[k] = first + k < n ? a[first + k] : 0u;
    sum += v[k];
  }
  if (bucket_counts) {  // a bucket's columns: four of them a thread, columns / 4 threads
    const unsigned threads = columns / 4;
    unsigned bucket = sum;
    for (unsigned d = 1; d < threads; d *= 2)
      bucket += __shfl_xor_sync(0xFFFFFFFFu, bucket, d);
    if (threadIdx.x % threads == threads - 1 && first < n) {
      bucket_counts[threadIdx.x / threads] = bucket;
      v[3] += padded_rows(bucket) - bucket;
      sum += padded_rows(bucket) - bucket;
    }
  }
  const unsigned inclusive = warp_inclusive_sum(sum, lane);
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = blockDim.x / 32;
    // Inclusive over warps.
    warp_sums[lane] = warp_inclusive_sum(lane < warps ? warp_sums[lane] : 0u, lane);
  }
  __syncthreads();
  unsigned running = inclusive - sum + (warp ? warp_sums[warp - 1] : 0u);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (first + k < n) a[first + k] = running;
    running += v[k];
  }
  const unsigned total = warp_sums[31];
  __syncthreads();  // warp_sums may be reused
  return total;
}

template <class T, class Rule>
__global__ void __launch_bounds__(kBucketBlock)
    bucket_rows_kernel(BucketChunk chunk, Rule rule, unsigned short* __restrict__ sorted,
                       unsigned* __restrict__ meta, unsigned* __restrict__ totals,
                       unsigned long long* counts) {
  constexpr int kVec = 16 / sizeof(T);
  constexpr int kValues = kTileLoads * kVec;  // per thread and tile
  constexpr unsigned kTile = kTileValues<T>;
  __shared__ __align__(16) unsigned short staging[kTile + kBucketPad * kMaxBuckets];
  extern __shared__ unsigned cursor[];  // buckets · columns counters
  __shared__ unsigned bucket_count[kMaxBuckets];
  __shared__ unsigned warp_sums[32];
  __shared__ unsigned leader;
  const RowSlots slots = row_slots(rule);
  const unsigned column = threadIdx.x % chunk.columns;
  // Counter (bucket, column) lies at column_base + bucket · bucket_stride (shared addresses),
  // opaque to the compiler so that each address is one shift and one multiply-add (int32 at
  // 2^20 bins, the sort: 585 -> 573 µs; float32 670 -> 653).
  unsigned column_base = unsigned(__cvta_generic_to_shared(cursor)) + column * 4;
  unsigned bucket_stride = chunk.columns * 4;
  asm volatile("" : "+r"(column_base), "+r"(bucket_stride));
  const unsigned entries = chunk.buckets * chunk.columns;
  const unsigned low = (1u << chunk.shift) - 1;
  T memo_value{};
  unsigned memo_row = 0;
  bool memo = false;
  auto load = [&](unsigned tile, int u) {
    return tile < chunk.tiles ? __ldcs(chunk.vectors + (long long)tile * (kTile / kVec) +
                                       u * kBucketBlock + threadIdx.x)
                              : make_uint4(0, 0, 0, 0);
  };
  // 8-byte input places half as many values a thread and tile, too few to hide the next tile's
  // loads behind the sort alone: each of its vectors is loaded again as soon as it is taken, so
  // the loads are in flight while the rows are placed (H200, float64 at 2^20 bins: the sort
  // 614 -> 515 µs). 4-byte input loads after its rows (sooner: 712 -> 740 µs, int32).
  constexpr bool kLoadWhilePlacing = sizeof(T) == 8;
  uint4 next[kTileLoads];
#pragma unroll
  for (int u = 0; u < kTileLoads; ++u)
    next[u] = load(blockIdx.x, u);
  for (unsigned tile = blockIdx.x; tile < chunk.tiles; tile += gridDim.x) {
    // Rows of this tile (a whole one), while the next tile's vectors load.
    unsigned rows[kValues];
#pragma unroll
    for (int u = 0; u < kTileLoads; ++u) {
      T values[kVec];
      memcpy(values, &next[u], sizeof next[u]);
      if constexpr (kLoadWhilePlacing) next[u] = load(tile + gridDim.x, u);
      // The vector's quick rows first, then its rare inexact values corrected: a test a vector,
      // not a branch a value (float32 at 2^20 bins, the sort: 657-669 -> 639-642 µs).
      unsigned inexact = 0;
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        bool exact = true;
        rows[u * kVec + k] = quick_place<true>(rule, values[k], exact);
        inexact |= unsigned(!exact) << k;
      }
      if (inexact) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          if (inexact >> k & 1) {
            if (!memo || !(values[k] == memo_value)) {
              memo_row = corrected_place<true>(rule, values[k], rows[u * kVec + k]);
              memo_value = values[k];
              memo = true;
            }
            rows[u * kVec + k] = memo_row;
          }
        }
      }
    }
    if constexpr (!kLoadWhilePlacing) {
#pragma unroll
      for (int u = 0; u < kTileLoads; ++u)
        next[u] = load(tile + gridDim.x, u);
    }
    for (unsigned i = threadIdx.x; i < entries; i += blockDim.x)
      cursor[i] = 0;
    if (threadIdx.x == 0) leader = rows[0];
    __syncthreads();
    bool same = true;
#pragma unroll
    for (int k = 0; k < kValues; ++k)
      same &= rows[k] == leader;
    if (__syncthreads_and(same)) {  // a whole tile of one row (all-equal data, long runs)
      if (threadIdx.x == 0) atomicAdd(counts + slots.of(leader), (unsigned long long)kTile);
      for (unsigned b = threadIdx.x; b < chunk.buckets; b += blockDim.x)
        meta[(long long)b * chunk.tiles + tile] = 0;
      continue;
    }
#pragma unroll
    for (int k = 0; k < kValues; ++k)
      asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(column_base +
                                                       (rows[k] >> chunk.shift) * bucket_stride)
                   : "memory");
    __syncthreads();
    const unsigned total =
        block_exclusive_scan(cursor, entries, warp_sums, bucket_count, chunk.columns);
    unsigned start = 0, count = 0;
    if (threadIdx.x < chunk.buckets) {
      start = cursor[threadIdx.x * chunk.columns];
      count = bucket_count[threadIdx.x];
    }
    __syncthreads();  // the starts are read before values take places
    if (threadIdx.x < chunk.buckets) {
      meta[(long long)threadIdx.x * chunk.tiles + tile] = start | count << 16;
      if (count) atomicAdd(totals + threadIdx.x, count);
      for (unsigned pad = start + count; pad < start + padded_rows(count); ++pad)
        staging[pad] = 0;
    }
    // The places first, then the stores: the atomics go out back to back.
    unsigned places[kValues];
#pragma unroll
    for (int k = 0; k < kValues; ++k)
      asm volatile("atom.shared.add.u32 %0, [%1], 1;"
                   : "=r"(places[k])
                   : "r"(column_base + (rows[k] >> chunk.shift) * bucket_stride)
                   : "memory");
#pragma unroll
    for (int k = 0; k < kValues; ++k)
      staging[places[k]] = (unsigned short)(rows[k] & low);
    __syncthreads();
    uint4* out = reinterpret_cast<uint4*>(sorted + (long long)tile * chunk.stride);
    const uint4* in = reinterpret_cast<const uint4*>(staging);
    for (unsigned i = threadIdx.x; i < total / 8; i += blockDim.x)
      __stcs(out + i, in[i]);
    // The next tile zeroes `cursor` and writes `leader` only after every thread has passed the
    // sort's barriers; `staging` is written again after two more.
  }
}

// The values before the first aligned vector and after the last whole tile (fewer than a tile
// and 16 / sizeof(T)), straight into the 64-bit counts.
template <class T, class Rule>
__global__ void bucket_leftovers_kernel(const T* __restrict__ in, long long head,
                                        long long tail_begin, long long n, Rule rule,
                                        unsigned long long* counts) {
  const long long leftover = head + (n - tail_begin);
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < leftover;
       j += (long long)gridDim.x * blockDim.x) {
    const T x = in[j < head ? j : tail_begin + (j - head)];
    bool exact = true;
    const unsigned r = quick_place<true>(rule, x, exact);
    atomicAdd(counts + row_slots(rule).of(exact ? r : corrected_place<true>(rule, x, r)), 1ull);
  }
}

// Counts the rows of bucket items taken from `queue` into a lane-striped shared histogram of
// bucket_rows rows × `columns`, then adds each row seen to its slot's 64-bit count.
template <class Rule>
__global__ void __launch_bounds__(kBucketBlock, 1)
    count_buckets_kernel(const unsigned short* __restrict__ sorted,
                         const unsigned* __restrict__ meta, const unsigned* __restrict__ totals,
                         unsigned* queue, BucketChunk chunk, unsigned long long target,
                         unsigned counted, unsigned columns, Rule rule,
                         unsigned long long* counts) {
  extern __shared__ unsigned hist[];
  __shared__ unsigned first_item[kMaxBuckets + 1];  // a bucket's first item; then all items
  __shared__ unsigned warp_sums[32];
  __shared__ unsigned warp_pads[32];  // rows of offset 0 each warp counted to fill out vectors
  __shared__ unsigned taken;          // the item this block took from the queue
  // Each warp's tiles that hold vectors, in order: the row at which vector 0 of the warp's
  // numbering would lie for the tile (so vector v lies at base + 8·v).
  __shared__ unsigned tile_base[32][32];
  const RowSlots slots = row_slots(rule);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const unsigned shift = chunk.shift, tiles = chunk.tiles, bucket_rows = 1u << shift;
  const unsigned base = unsigned(__cvta_generic_to_shared(hist)) + lane % columns * 4;
  const unsigned stride = columns * 4;
  unsigned lanes_below, lanes_up_to;  // masks of the lanes before this one, and this one too
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lanes_below));
  asm("mov.u32 %0, %%lanemask_le;" : "=r"(lanes_up_to));
  for (unsigned b = threadIdx.x; b < chunk.buckets; b += blockDim.x)
    first_item[b] = totals[b] ? unsigned(max(1ull, (totals[b] + target / 2) / target)) : 0u;
  __syncthreads();
  const unsigned items_total = block_exclusive_scan(first_item, chunk.buckets, warp_sums);
  if (threadIdx.x == 0) first_item[chunk.buckets] = items_total;
  for (;;) {
    // One thread takes the item; every thread finds its bucket and tiles (a warp must reach the
    // block's barriers converged, so no thread works alone before one).
    if (threadIdx.x == 0) taken = atomicAdd(queue, 1u);
    for (unsigned i = threadIdx.x; i < bucket_rows * columns; i += blockDim.x)
      hist[i] = 0;
    __syncthreads();
    const unsigned index = taken;
    if (index >= items_total) return;
    unsigned bucket = 0;  // the last bucket whose first item is at most `index`
    for (unsigned step = kMaxBuckets; step; step /= 2)
      if (bucket + step < chunk.buckets && first_item[bucket + step] <= index) bucket += step;
    const unsigned long long k = index - first_item[bucket];
    const unsigned long long of = max(1u, first_item[bucket + 1] - first_item[bucket]);
    struct {
      unsigned bucket, begin, end;
    } const item{bucket, unsigned(k * tiles / of), unsigned((k + 1) * tiles / of)};
    const unsigned* starts = meta + (long long)item.bucket * tiles;
    unsigned pads = 0;  // rows of offset 0 that only filled out a vector: the lane's tiles', then
                        // the warp's
    // A warp takes 32 tiles at a time: lane l reads tile l's start and count. The tiles' whole
    // vectors are numbered through (a warp scan), and the lanes take them in turn, kVectorsAhead
    // windows of 32 at once, so short stretches leave no lane idle. A lane finds its vector's
    // tile without a search: the tiles that hold vectors, in order, keep their bases in
    // tile_base[warp] (so that vector v of such a tile lies at base + 8·v), and the lane's is the
    // one after those that start before the window and those that start in it up to the lane
    // (a warp OR of the window's starts); a search through the tiles' ends, a chain of
    // dependent shared loads, took 230 µs against 220 (int32 at 2^20 bins, uniform; normal 328
    // against 291). Rows of the chunk: fewer than 2^32 (bucket_chunk_mib ≤ 4096 of 2-byte rows,
    // and the pads); a base may wrap, base + 8·v not.
    for (unsigned t0 = item.begin + warp * 32; t0 < item.end; t0 += warps * 32) {
      const unsigned t = t0 + lane;
      const unsigned m = t < item.end ? starts[t] : 0u;
      const unsigned count = m >> 16, vectors = padded_rows(count) / kBucketPad;
      pads += padded_rows(count) - count;
      const unsigned inclusive = warp_inclusive_sum(vectors, lane);
      const unsigned total = __shfl_sync(0xFFFFFFFFu, inclusive, 31);
      const unsigned first = inclusive - vectors;  // the tile's first vector in the numbering
      const bool holds = vectors != 0;
      const unsigned holding = __ballot_sync(0xFFFFFFFFu, holds);
      __syncwarp();
      if (holds)
        tile_base[warp][__popc(holding & lanes_below)] =
            t * chunk.stride + (m & 0xFFFFu) - first * kBucketPad;
      __syncwarp();
      const unsigned lane_base = tile_base[warp][lane];  // of the lane-th tile that holds vectors
      for (unsigned v0 = 0; v0 < total; v0 += 32 * kVectorsAhead) {
        uint4 raw[kVectorsAhead];
#pragma unroll
        for (unsigned a = 0; a < kVectorsAhead; ++a) {
          const unsigned window = v0 + a * 32, v = window + lane;
          raw[a] = make_uint4(0, 0, 0, 0);
          if (window < total) {
            const bool starts_in = holds && first - window < 32u;
            const unsigned window_starts =
                __reduce_or_sync(0xFFFFFFFFu, starts_in ? 1u << (first - window) : 0u);
            const unsigned before = __popc(__ballot_sync(0xFFFFFFFFu, holds && first < window));
            const unsigned base_of_v = __shfl_sync(
                0xFFFFFFFFu, lane_base, before - 1 + __popc(window_starts & lanes_up_to));
            if (v < total)
              raw[a] = __ldcs(reinterpret_cast<const uint4*>(sorted + base_of_v + v * kBucketPad));
          }
        }
#pragma unroll
        for (unsigned a = 0; a < kVectorsAhead; ++a) {
          if (v0 + a * 32 + lane < total) {
            const unsigned words[4] = {raw[a].x, raw[a].y, raw[a].z, raw[a].w};
#pragma unroll
            for (int k = 0; k < 8; ++k) {
              const unsigned r = words[k / 2] >> (16 * (k % 2)) & 0xFFFFu;
              asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(base + r * stride) : "memory");
            }
          }
        }
      }
    }
    pads = __reduce_add_sync(0xFFFFFFFFu, pads);
    if (lane == 0) warp_pads[warp] = pads;
    __syncthreads();
    const unsigned row0 = item.bucket << shift;
    for (unsigned r = threadIdx.x; r < bucket_rows && row0 + r < counted; r += blockDim.x) {
      unsigned long long sum = 0;
      for (unsigned c = 0; c < columns; ++c)
        sum += hist[r * columns + c];
      if (r == 0)
        for (unsigned w = 0; w < warps; ++w)
          sum -= warp_pads[w];
      if (sum) atomicAdd(counts + slots.of(row0 + r), sum);
    }
    __syncthreads();  // `taken`, `warp_pads` and `hist` are reused
  }
}

}  // namespace
}  // namespace parpat::detail
