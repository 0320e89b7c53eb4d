// CUDA histogram `fast` beyond shared memory, in one resident grid: the bucket sort and count of
// kernels_bucketed.cuh as a pipeline over chunks of the input, so that the sorted rows need only
// S slots of temporary memory of a chunk each (S·16 MiB, not the whole input's rows) and each
// block counts its bucket item in shared memory across all chunks, adding its rows to the 64-bit
// counts once (two kernels a chunk pay that flush, about 18 µs on an H200, for every chunk;
// histogram-bucket-chunk-temporary).
// The grid has a block per multiprocessor, launched cooperatively, so every block is resident
// and may wait for the others. The blocks take tiles from one queue, in order, a tile ahead (so
// its loads start while the tile before is sorted); chunk c's rows go to slot c mod S. When a
// block moves on to a tile of chunk c it
//  - adds the tiles it sorted of its previous chunk to that chunk's sorted word (a release);
//  - counts its item of every chunk up to c − 2 not yet counted (waiting until all of the
//    chunk's tiles are sorted, which they were long ago), adding 1 to that chunk's counted word;
//  - waits until every block has counted chunk c − S (the slot's last reader), which they did
//    when they moved on to chunk c − S + 2: with S ≥ 3 a chunk or more ago.
// So no block waits for another but at the end, and a block whose count took longer sorts
// fewer tiles. After the queue runs dry each block counts the chunks left, then adds its rows.
// A wait is thread 0 polling a word (relaxed, bounded by kPipelineWaitCycles: past it the kernel
// traps, a launch failure on the host, never a hang) and one acquire fence.
// The items: before its first count every block works out the same plan from chunk 0's bucket
// totals: the grid's G blocks as items of the B buckets (B ≤ G), bucket b taking
// 1 + ⌊E·C(b+1)/A⌋ − ⌊E·C(b)/A⌋ of them (E = G − B spare blocks, C(b) the totals before b, A all
// of them), so a heavy bucket (normal data) spreads over several blocks and the items sum to G.
// Item k of K counts tiles [k·n/K, (k+1)·n/K) of its bucket's stretches in every chunk of n tiles.
#pragma once

#include "histogram/cuda/kernels_bucketed.cuh"
#include "parpat/cuda/grid_barrier_words.cuh"

namespace parpat::detail {
// Private to histogram/cuda.cu, the one file that includes it.
namespace {

constexpr long long kPipelineWaitCycles = 1ll << 32;  // about 2 s at the H200's clock

// One launch of the pipeline: its whole tiles of 16-byte vectors in chunks, and where the slots
// and the progress words lie.
struct BucketPipeline {
  BucketChunk shape;     // vectors: the first tile; tiles: all of the launch's
  unsigned chunks;       // chunks in this launch
  unsigned chunk_tiles;  // tiles a chunk, but the last
  unsigned slots;        // S ≥ 3
  unsigned count_columns, counted;
  unsigned* progress;    // chunk c: sorted by progress[32·c], counted by progress[32·(chunks+c)];
                         // the queue of tiles at progress[64·chunks]
  unsigned* totals;      // chunk 0's bucket totals
  unsigned* meta;        // a slot's meta: buckets · chunk_tiles words, slot after slot
  unsigned short* rows;  // a slot's rows: chunk_tiles · stride, slot after slot
  unsigned cursor_words;  // the sort's counters at the start of dynamic shared memory
};

// Every thread: the block's writes so far are released to the others through `word` (+ 1).
__device__ void arrive_at(unsigned* word) {
  __syncthreads();
  if (threadIdx.x == 0) parpat::cuda::detail::red_add_release(word, 1);
}

// Every thread: returns once `word` has reached `target`, having acquired what was released.
__device__ void wait_for(unsigned* word, unsigned target) {
  if (threadIdx.x == 0) {
    const long long start = clock64();
    while (parpat::cuda::detail::load_relaxed(word) < target) {
      if (clock64() - start > kPipelineWaitCycles) __trap();
      __nanosleep(64);
    }
    parpat::cuda::detail::fence_acquire();
  }
  __syncthreads();
}

// What a block of the pipeline keeps between tiles (block-wide, in shared memory, so that the
// sort's registers stay its own): written by thread 0, read after a barrier.
struct PipelineState {
  unsigned chunk;    // of the tiles this block sorts now (~0u: none yet)
  unsigned mine;     // tiles of it this block sorted
  unsigned counted;  // chunks this block's item has counted
  unsigned bucket, item, items;
  unsigned taken[2];  // tiles taken a turn ahead, by the turn's parity
};

// The pipeline's Tiles for sort_bucket_tiles: tiles from the queue, slots by chunk, and at each
// new chunk the counts and waits above.
template <class Rule>
struct PipelineTiles {
  static constexpr bool kKeepRows = true;
  const BucketPipeline& run;
  PipelineState& state;
  Rule rule;
  unsigned* hist;  // the item's lane-striped rows
  unsigned pads = 0;

  __device__ unsigned chunk_of(unsigned tile) const { return tile / run.chunk_tiles; }
  __device__ unsigned tiles_in(unsigned c) const {
    return min(run.chunk_tiles, run.shape.tiles - c * run.chunk_tiles);
  }
  __device__ unsigned* sorted_word(unsigned c) const { return run.progress + 32 * c; }
  __device__ unsigned* counted_word(unsigned c) const {
    return run.progress + 32 * (run.chunks + c);
  }
  __device__ unsigned* slot_meta(unsigned c) const {
    return run.meta + (long long)(c % run.slots) * run.shape.buckets * run.chunk_tiles;
  }
  __device__ unsigned short* slot_rows(unsigned c) const {
    return run.rows + (long long)(c % run.slots) * run.chunk_tiles * run.shape.stride;
  }

  __device__ unsigned start(unsigned& following) {
    if (threadIdx.x == 0) {
      unsigned* queue = run.progress + 64 * run.chunks;
      state.taken[0] = atomicAdd(queue, 1u);
      state.taken[1] = atomicAdd(queue, 1u);
      state.chunk = ~0u;
      state.mine = state.counted = 0;
    }
    __syncthreads();
    following = state.taken[1];
    const unsigned first = state.taken[0];
    __syncthreads();  // taken[] is written again in the first turn
    return first;
  }
  __device__ bool valid(unsigned tile) const { return tile < run.shape.tiles; }
  __device__ void take(unsigned turn) {
    ++state.mine;
    state.taken[turn % 2] = atomicAdd(run.progress + 64 * run.chunks, 1u);
  }
  __device__ unsigned taken(unsigned turn, unsigned) const { return state.taken[turn % 2]; }
  __device__ unsigned meta_stride() const { return run.chunk_tiles; }
  __device__ unsigned* meta_of(unsigned tile) const {
    return slot_meta(chunk_of(tile)) + tile % run.chunk_tiles;
  }
  __device__ unsigned short* rows_of(unsigned tile) const {
    return slot_rows(chunk_of(tile)) + (long long)(tile % run.chunk_tiles) * run.shape.stride;
  }
  __device__ unsigned* totals_of(unsigned tile) const {
    return tile < run.chunk_tiles ? run.totals : nullptr;
  }

  // Whether `tile` is of another chunk than the tiles before it: then every thread calls enter().
  __device__ bool enters_chunk(unsigned tile) const { return chunk_of(tile) != state.chunk; }

  // Every thread, before sorting the first tile of chunk c.
  __device__ void enter(unsigned tile) {
    const unsigned c = chunk_of(tile);
    leave();
    while (state.counted + 2 <= c)
      count_next();
    if (c >= run.slots) wait_for(counted_word(c - run.slots), gridDim.x);
    if (threadIdx.x == 0) {
      state.chunk = c;
      state.mine = 0;
    }
    __syncthreads();
  }

  // Every thread, after the last tile: the chunks not yet counted.
  __device__ void finish() {
    leave();
    while (state.counted < run.chunks)
      count_next();
  }

  // The tiles this block sorted of its chunk, released to the chunk's sorted word.
  __device__ void leave() {
    __syncthreads();
    if (threadIdx.x == 0 && state.chunk != ~0u)
      parpat::cuda::detail::red_add_release(sorted_word(state.chunk), state.mine);
  }

  // Counts this block's item of the next chunk in order, once all of its tiles are sorted.
  __device__ void count_next() {
    const unsigned c = state.counted;
    wait_for(sorted_word(c), tiles_in(c));
    if (c == 0) plan();
    const unsigned n = tiles_in(c), item = state.item, items = state.items;
    const unsigned base =
        unsigned(__cvta_generic_to_shared(hist)) + threadIdx.x % 32 % run.count_columns * 4;
    pads += count_bucket_stretches(slot_rows(c),
                                   slot_meta(c) + (long long)state.bucket * run.chunk_tiles,
                                   unsigned((unsigned long long)item * n / items),
                                   unsigned((unsigned long long)(item + 1) * n / items),
                                   run.shape.stride, base, run.count_columns * 4);
    arrive_at(counted_word(c));
    if (threadIdx.x == 0) state.counted = c + 1;
    __syncthreads();
  }

  // This block's item from chunk 0's bucket totals (buckets < blockDim: a thread a bucket).
  __device__ void plan() {
    __shared__ unsigned first_item[kMaxBuckets + 1];  // a bucket's first item, then G
    __shared__ unsigned warp_sums[32];
    const unsigned buckets = run.shape.buckets, b = threadIdx.x;
    if (b < buckets) first_item[b] = run.totals[b];
    __syncthreads();
    const unsigned long long all = block_exclusive_scan(first_item, buckets, warp_sums);
    const unsigned spare = gridDim.x - buckets;
    unsigned first = 0;
    if (b <= buckets) {
      // Data whose tiles were all of one row leaves no totals: equal items then.
      const unsigned long long before = b < buckets ? first_item[b] : all;
      first = b + unsigned(all ? spare * before / all : spare * b / buckets);
    }
    __syncthreads();
    if (b <= buckets) first_item[b] = first;
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned bucket = bucket_of_item(first_item, buckets, blockIdx.x);
      state.bucket = bucket;
      state.item = blockIdx.x - first_item[bucket];
      state.items = first_item[bucket + 1] - first_item[bucket];
    }
    __syncthreads();
  }
};

template <class T, class Rule>
__global__ void __launch_bounds__(kBucketBlock, 1)
    bucket_pipeline_kernel(BucketPipeline run, Rule rule, unsigned long long* counts) {
  extern __shared__ unsigned dynamic_shared[];
  __shared__ PipelineState state;
  unsigned* hist = dynamic_shared + run.cursor_words;
  for (unsigned i = threadIdx.x; i < (1u << run.shape.shift) * run.count_columns; i += blockDim.x)
    hist[i] = 0;
  PipelineTiles<Rule> tiles{run, state, rule, hist};
  sort_bucket_tiles<T, Rule>(tiles, run.shape, rule, counts, dynamic_shared);
  tiles.finish();
  add_bucket_rows(hist, run.count_columns, run.shape.shift, state.bucket, run.counted, tiles.pads,
                  rule, counts);
}

}  // namespace
}  // namespace parpat::detail
