// CUDA histogram `fast` beyond shared memory: rows sorted into buckets, then each bucket counted
// in shared memory. Counting 2^20 rows straight into global memory is bound by the L2's atomics
// (about 100 G updates/s on an H200, bench/floor/histogram_floor: 0.4 TB/s of 4-byte values);
// moving each value's row instead costs 2 bytes written and read again.
//  1. bucket_rows_kernel: a block takes tiles of 16-byte vectors (kTileLoads a thread), places
//     each value by the rule (its row, exact as in the other fast kernels), and writes the tile's
//     rows sorted by bucket (row >> shift) as 16-bit offsets within the bucket, in the tile's own
//     stretch of the temporary buffer; `meta[bucket][tile]` holds the bucket's start and count
//     in the tile. The sort is a counting sort in shared memory: a count per (bucket, column)
//     (lanes of one bucket spread over kBucketColumns counters), an exclusive scan, then each
//     value takes a place with one atomic. A tile whose values all share a row adds them with one
//     global atomic and writes nothing. Each bucket's total over the chunk is summed with one
//     global atomic per tile.
//  2. count_buckets_kernel: a bucket of T values makes K = round(T / target) items (at least
//     one), each an equal share of the chunk's tiles (for data drawn alike throughout, an equal
//     share of the values), so a heavy bucket (normal data) spreads over several blocks. Blocks
//     take items from a queue and count the item's rows in a lane-striped shared histogram of
//     the bucket's rows — a warp reads 32 tiles' starts and counts at once, then each tile's
//     stretch with 16-byte loads, four tiles in flight — and add each row to its slot's 64-bit
//     count (one atomic per row an item saw).
#pragma once

#include "histogram/cuda/rules.cuh"

namespace parpat::detail {
// Private to histogram/cuda.cu, the one file that includes it.
namespace {

constexpr int kBucketBlock = 1024;       // threads of the sorting and counting blocks
constexpr int kTileLoads = 4;            // 16-byte vectors a thread sorts per tile
constexpr unsigned kBucketColumns = 8;   // counters per bucket while a tile is sorted
constexpr unsigned kMaxBuckets = 256;    // kMaxBuckets · kBucketColumns counters (8 KiB)
constexpr unsigned kItemTilesAhead = 4;  // tiles whose rows a warp loads at once

template <class T>
constexpr unsigned kTileValues = kBucketBlock* kTileLoads*(16 / sizeof(T));

// One chunk of the input's 16-byte vectors, sorted and counted at once (its rows fit the
// temporary buffer).
struct BucketChunk {
  const uint4* vectors;  // the chunk's first vector
  long long count;       // vectors in the chunk
  unsigned tiles;        // tiles in the chunk
  unsigned shift;        // a row's bucket: row >> shift
  unsigned buckets;
};

// Exclusive prefix sums of a[0, n) in place, n ≤ 4 · blockDim.x; returns the total. Every thread
// of the block calls it.
__device__ unsigned block_exclusive_scan(unsigned* a, unsigned n, unsigned* warp_sums) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned first = threadIdx.x * 4;
  unsigned v[4], sum = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    v[k] = first + k < n ? a[first + k] : 0u;
    sum += v[k];
  }
  unsigned inclusive = sum;
  for (unsigned d = 1; d < 32; d *= 2) {
    const unsigned below = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
    if (lane >= d) inclusive += below;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = blockDim.x / 32;
    unsigned w = lane < warps ? warp_sums[lane] : 0u;
    for (unsigned d = 1; d < 32; d *= 2) {
      const unsigned below = __shfl_up_sync(0xFFFFFFFFu, w, d);
      if (lane >= d) w += below;
    }
    warp_sums[lane] = w;  // inclusive over warps
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
  __shared__ __align__(16) unsigned short staging[kTile];
  __shared__ unsigned cursor[kMaxBuckets * kBucketColumns];
  __shared__ unsigned warp_sums[32];
  __shared__ unsigned leader;
  const RowSlots slots = row_slots(rule);
  const unsigned column = threadIdx.x % kBucketColumns;
  const unsigned entries = chunk.buckets * kBucketColumns;
  const unsigned low = (1u << chunk.shift) - 1;
  T memo_value{};
  unsigned memo_row = 0;
  bool memo = false;
  auto load = [&](uint4(&raw)[kTileLoads], unsigned tile) {
#pragma unroll
    for (int u = 0; u < kTileLoads; ++u) {
      const long long v = (long long)tile * (kTile / kVec) + u * kBucketBlock + threadIdx.x;
      raw[u] = tile < chunk.tiles && v < chunk.count ? __ldcs(chunk.vectors + v)
                                                     : make_uint4(0, 0, 0, 0);
    }
  };
  uint4 next[kTileLoads];
  load(next, blockIdx.x);
  for (unsigned tile = blockIdx.x; tile < chunk.tiles; tile += gridDim.x) {
    // Rows of this tile (kNone past the chunk), while the next tile's vectors load.
    unsigned rows[kValues];
#pragma unroll
    for (int u = 0; u < kTileLoads; ++u) {
      const long long v = (long long)tile * (kTile / kVec) + u * kBucketBlock + threadIdx.x;
      T values[kVec];
      memcpy(values, &next[u], sizeof next[u]);
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        bool exact = true;
        unsigned r = quick_place<true>(rule, values[k], exact);
        if (!exact) {
          if (!memo || !(values[k] == memo_value)) {
            memo_row = corrected_place<true>(rule, values[k], r);
            memo_value = values[k];
            memo = true;
          }
          r = memo_row;
        }
        rows[u * kVec + k] = v < chunk.count ? r : kNone;
      }
    }
    load(next, tile + gridDim.x);
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
      if (rows[k] != kNone)
        atomicAdd(&cursor[(rows[k] >> chunk.shift) * kBucketColumns + column], 1u);
    __syncthreads();
    const unsigned total = block_exclusive_scan(cursor, entries, warp_sums);
    unsigned start = 0, end = 0;
    if (threadIdx.x < chunk.buckets) {
      start = cursor[threadIdx.x * kBucketColumns];
      end = threadIdx.x + 1 < chunk.buckets ? cursor[(threadIdx.x + 1) * kBucketColumns] : total;
    }
    __syncthreads();  // the starts are read before values take places
    if (threadIdx.x < chunk.buckets) {
      meta[(long long)threadIdx.x * chunk.tiles + tile] = start | (end - start) << 16;
      if (end > start) atomicAdd(totals + threadIdx.x, end - start);
    }
    // The places first, then the stores: the atomics go out back to back.
    unsigned places[kValues];
#pragma unroll
    for (int k = 0; k < kValues; ++k)
      places[k] = rows[k] != kNone
                      ? atomicAdd(&cursor[(rows[k] >> chunk.shift) * kBucketColumns + column], 1u)
                      : kNone;
#pragma unroll
    for (int k = 0; k < kValues; ++k)
      if (places[k] != kNone) staging[places[k]] = (unsigned short)(rows[k] & low);
    __syncthreads();
    uint4* out = reinterpret_cast<uint4*>(sorted + (long long)tile * kTile);
    const uint4* in = reinterpret_cast<const uint4*>(staging);
    for (unsigned i = threadIdx.x; i < (total + 7) / 8; i += blockDim.x)
      __stcs(out + i, in[i]);
    // The next tile zeroes `cursor` and writes `leader` only after every thread has passed the
    // sort's barriers; `staging` is written again after two more.
  }
}

// The values before the first aligned vector and after the last (fewer than 2 · 16 / sizeof(T)),
// straight into the 64-bit counts.
template <class T, class Rule>
__global__ void bucket_leftovers_kernel(const T* __restrict__ in, long long head,
                                        long long tail_begin, long long n, Rule rule,
                                        unsigned long long* counts) {
  const long long leftover = head + (n - tail_begin);
  for (long long j = threadIdx.x; j < leftover; j += blockDim.x) {
    const T x = in[j < head ? j : tail_begin + (j - head)];
    bool exact = true;
    const unsigned r = quick_place<true>(rule, x, exact);
    atomicAdd(counts + row_slots(rule).of(exact ? r : corrected_place<true>(rule, x, r)), 1ull);
  }
}

// Counts the rows of bucket items taken from `queue` into a lane-striped shared histogram of
// bucket_rows rows × `columns`, then adds each row seen to its slot's 64-bit count.
template <class Rule>
__global__ void __launch_bounds__(kBucketBlock)
    count_buckets_kernel(const unsigned short* __restrict__ sorted,
                         const unsigned* __restrict__ meta, const unsigned* __restrict__ totals,
                         unsigned* queue, BucketChunk chunk, unsigned tile_values,
                         unsigned long long target, unsigned counted, unsigned columns, Rule rule,
                         unsigned long long* counts) {
  extern __shared__ unsigned hist[];
  __shared__ unsigned first_item[kMaxBuckets + 1];  // a bucket's first item; then all items
  __shared__ unsigned warp_sums[32];
  __shared__ unsigned taken_bucket, taken_begin, taken_end;
  const RowSlots slots = row_slots(rule);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const unsigned shift = chunk.shift, tiles = chunk.tiles, bucket_rows = 1u << shift;
  const unsigned base = unsigned(__cvta_generic_to_shared(hist)) + lane % columns * 4;
  const unsigned stride = columns * 4;
  for (unsigned b = threadIdx.x; b < chunk.buckets; b += blockDim.x)
    first_item[b] = totals[b] ? unsigned(max(1ull, (totals[b] + target / 2) / target)) : 0u;
  __syncthreads();
  const unsigned items_total = block_exclusive_scan(first_item, chunk.buckets, warp_sums);
  if (threadIdx.x == 0) first_item[chunk.buckets] = items_total;
  for (;;) {
    if (threadIdx.x == 0) {
      const unsigned index = atomicAdd(queue, 1u);
      unsigned b = 0;  // the last bucket whose first item is at most `index`
      for (unsigned step = kMaxBuckets; step; step /= 2)
        if (b + step < chunk.buckets && first_item[b + step] <= index) b += step;
      const unsigned long long k = index - first_item[b], of = first_item[b + 1] - first_item[b];
      taken_bucket = index < items_total ? b : kNone;
      taken_begin = unsigned(k * tiles / max(of, 1ull));
      taken_end = unsigned((k + 1) * tiles / max(of, 1ull));
    }
    for (unsigned i = threadIdx.x; i < bucket_rows * columns; i += blockDim.x)
      hist[i] = 0;
    __syncthreads();
    struct {
      unsigned bucket, begin, end;
    } const item{taken_bucket, taken_begin, taken_end};
    if (item.bucket == kNone) return;
    const unsigned* starts = meta + (long long)item.bucket * tiles;
    // A warp takes 32 tiles at a time: lane l reads tile l's start and count.
    for (unsigned t0 = item.begin + warp * 32; t0 < item.end; t0 += warps * 32) {
      const unsigned mine = t0 + lane < item.end ? starts[t0 + lane] : 0u;
      const unsigned in_warp = min(32u, item.end - t0);
      for (unsigned j0 = 0; j0 < in_warp; j0 += kItemTilesAhead) {
        // Rows of the chunk: fewer than 2^32 (bucket_chunk_mib ≤ 4096 of 2-byte rows).
        uint4 raw[kItemTilesAhead];
        unsigned first[kItemTilesAhead], last[kItemTilesAhead];
#pragma unroll
        for (unsigned a = 0; a < kItemTilesAhead; ++a) {
          const unsigned m = __shfl_sync(0xFFFFFFFFu, mine, (j0 + a) % 32);
          first[a] = (t0 + j0 + a) * tile_values + (m & 0xFFFFu);
          last[a] = first[a] + (j0 + a < in_warp ? m >> 16 : 0u);
          const unsigned at = (first[a] & ~7u) + lane * 8;
          raw[a] = at < last[a] ? __ldcs(reinterpret_cast<const uint4*>(sorted + at))
                                : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (unsigned a = 0; a < kItemTilesAhead; ++a) {
          // A stretch longer than one window of 256 rows loads the next window before it counts
          // this one.
          for (unsigned window = first[a] & ~7u; window < last[a]; window += 256) {
            const unsigned at = window + lane * 8;
            const uint4 now = raw[a];
            if (window + 256 < last[a])
              raw[a] = at + 256 < last[a]
                           ? __ldcs(reinterpret_cast<const uint4*>(sorted + at + 256))
                           : make_uint4(0, 0, 0, 0);
            const unsigned words[4] = {now.x, now.y, now.z, now.w};
            if (at >= first[a] && at + 8 <= last[a]) {  // all eight rows of this lane count
#pragma unroll
              for (int k = 0; k < 8; ++k) {
                const unsigned r = words[k / 2] >> (16 * (k % 2)) & 0xFFFFu;
                asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(base + r * stride) : "memory");
              }
            } else {  // the stretch's ends: rows [from, to) of this lane's eight
              const unsigned from = first[a] > at ? min(8u, first[a] - at) : 0u;
              const unsigned to = last[a] > at ? min(8u, last[a] - at) : 0u;
#pragma unroll
              for (unsigned k = 0; k < 8; ++k) {
                if (k < from || k >= to) continue;
                const unsigned r = words[k / 2] >> (16 * (k % 2)) & 0xFFFFu;
                asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(base + r * stride) : "memory");
              }
            }
          }
        }
      }
    }
    __syncthreads();
    const unsigned row0 = item.bucket << shift;
    for (unsigned r = threadIdx.x; r < bucket_rows && row0 + r < counted; r += blockDim.x) {
      unsigned long long sum = 0;
      for (unsigned c = 0; c < columns; ++c)
        sum += hist[r * columns + c];
      if (sum) atomicAdd(counts + slots.of(row0 + r), sum);
    }
    __syncthreads();  // the taken item and `hist` are reused
  }
}

}  // namespace
}  // namespace parpat::detail
