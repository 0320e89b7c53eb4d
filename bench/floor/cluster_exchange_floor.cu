// cluster_exchange_floor: what sharing a histogram's rows out over a thread-block cluster costs
// a round on this GPU, with none of the sorting. The design tried in tuning record
// histogram-cuda-cluster-rows counted 2^20 rows in clusters of 16 blocks (block q counting the rows
// r with r mod 16 = q), each round a tile of 8192 rows a block sorted by owner and read by the
// owners through distributed shared memory; it ran at 2.1x the bucket sort's time. This probe
// keeps that round's skeleton and drops its work, so that what is left bounds any such design:
// 2^28 4-byte rows uniform in [0, 2^20); blocks of 1024 threads, one an SM (the design's shared
// memory: 128 KiB of 16-bit packed counters and the staging buffers); each round a block loads a
// tile of 8192 rows (8 a thread) and writes them to its staging buffer as if sorted already
// (owner q's stretch is the tile's q-th share), then reads its own stretch of every block's buffer
// with 16-byte distributed-shared loads and adds each row to its counters (one red.shared a row,
// the row's 16-bit field of word (r >> 4) / 2). Forms:
//   sync         one cluster barrier a round, two staging buffers, the next tile's loads issued
//                before the barrier (the tried kernel's rounds);
//   sync, late   the same, the next tile's loads issued after the barrier: a release arrive is a
//                GPU-scope memory barrier, which may wait for loads still in flight;
//   split        the barrier split: arrive after writing, the next tile's loads, the previous
//                round's stretches read and counted, then wait; three staging buffers;
//   local        staged and read back within the block (its own tile, a block barrier each way):
//                the rounds' cost without the cluster;
//   no exchange  each block counts its own tile straight from registers;
//   push, bulk   no cluster barrier: each block writes its tile as 16-bit rows (the row's place
//                among its owner's rows) to one of three staging buffers, and each owner's
//                stretch goes to that owner's inbox by one bulk copy (cp.async.bulk into
//                distributed shared memory), completing on the owner's mbarrier for the buffer;
//                an owner counts a round's inbox a round later, once its barrier's phase is
//                complete, and hands the buffer back by a remote arrive on each sender's
//                barrier (16 threads at once: a release arrive at cluster scope is a GPU-scope
//                memory barrier, which waits for the thread's loads in flight), which a sender
//                waits for before it writes that buffer again;
//   push, direct    no staging: each thread stores its 16-byte vector straight into its owner's
//                inbox (st.async, completing on the owner's barrier), six inbox buffers, each
//                counted three rounds after it was sent (so the blocks of a cluster may drift
//                apart by rounds), the hand-back as in push, bulk;
//   push, sorted    push, direct with the sorting that the skeleton leaves out: each round the
//                tile's rows are sorted by owner (row mod 16) in shared memory (a counter per
//                owner and lane, a scan, a place per row, each owner's stretch padded to 16-byte
//                vectors), and the vectors go to their owners' inboxes (up to kCap rows a sender
//                and owner a round), each sender announcing its bytes to the owner's barrier and
//                its row count in the inbox's header; four inbox buffers, counted two rounds
//                later, relaxed arrives and waits. Rows past kCap would be lost: the run is then
//                marked WRONG.
// Every run is checked: as many rows counted as the rounds cover, and the sum of the rows read
// (the push forms: of their 16-bit places) equal to the sum over the input's first rows (so a
// stale or misplaced read is caught). Every wait on another block is bounded (about 2 s, then a
// trap). Forms measured and dropped (one thread's 16 hand-back arrives, relaxed arrives, plain
// remote stores with an arrive a warp) are in the record and in git history.
//
// Timing: cudaEvents around each launch, the median of 9 after 2 warm-ups. Measured on an H200:
// tuning record histogram-cluster-exchange-floor.
// Build: cmake --build BUILD --target cluster_exchange_floor. Run: BUILD/bench/
// cluster_exchange_floor [CLUSTER...] (blocks a cluster, powers of two up to 16; default 16 8).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cluster_async.cuh"

namespace cg = cooperative_groups;
using namespace cluster_async;

namespace {

constexpr int kBlock = 1024;
constexpr unsigned kTile = kBlock * 8;     // rows a block and round
constexpr unsigned kCounterWords = 32768;  // 65536 16-bit counters
constexpr long long kRows = 1ll << 28;

enum class Form { sync, sync_late, split, local, no_exchange, push_bulk, push_direct, push_sorted };

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cluster_exchange_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Adds one to the 16-bit counter of place `local` (of word local / 2 from `base`).
__device__ void count_place(unsigned base, unsigned local) {
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(base + local / 2 * 4),
               "r"(1u << (16 * (local & 1)))
               : "memory");
}

// Adds the vector's rows to the packed counters and to the thread's sum of the rows read.
__device__ void count_rows(unsigned base, const uint4& w, unsigned long long& sum) {
  for (unsigned r : {w.x, w.y, w.z, w.w}) {
    count_place(base, (r >> 4) & 0xFFFFu);
    sum += r;
  }
}

// A block's tiles of kTile rows, round after round (round r: tile r · gridDim.x + blockIdx.x),
// two 16-byte vectors a thread, loaded a round ahead into `next`.
struct TileLoads {
  const uint4* rows;
  unsigned rounds;
  uint4 next[2];

  __device__ void load(unsigned round) {
    if (round >= rounds) return;
    const uint4* tile = rows + ((long long)round * gridDim.x + blockIdx.x) * (kTile / 4);
    next[0] = __ldcs(tile + threadIdx.x);
    next[1] = __ldcs(tile + kBlock + threadIdx.x);
  }
};

__device__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
}
__device__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}

// The block's sum of v, added to *out with one atomic.
__device__ void add_block_sum(unsigned long long v, unsigned long long* out) {
  __shared__ unsigned long long warp_sums[kBlock / 32];
  for (int d = 16; d; d /= 2)
    v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long sum = 0;
    for (unsigned w = 0; w < kBlock / 32; ++w)
      sum += warp_sums[w];
    atomicAdd(out, sum);
  }
  __syncthreads();
}

// totals[0]: rows counted (the counters' sum), totals[1]: the sum of the rows read.
template <Form kForm>
__global__ void __launch_bounds__(kBlock, 1)
    exchange(const uint4* rows, unsigned rounds, unsigned long long* totals) {
  constexpr bool kCluster = kForm != Form::local && kForm != Form::no_exchange;
  extern __shared__ __align__(16) unsigned shared[];
  unsigned* counters = shared;
  unsigned* staging = shared + kCounterWords;  // up to three buffers of kTile rows
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned owner_bits = __ffs(cluster.num_blocks()) - 1, rank = cluster.block_rank();
  const unsigned vectors_bits = 11 - owner_bits;  // 16-byte vectors in one owner's stretch, log2
  const unsigned base = unsigned(__cvta_generic_to_shared(counters));
  unsigned long long sum = 0;
  for (unsigned i = threadIdx.x; i < kCounterWords; i += kBlock)
    counters[i] = 0;
  __syncthreads();
  TileLoads tiles{rows, rounds, {}};
  // Reads and counts this block's stretch of every block's buffer b, 2 vectors a thread.
  auto receive = [&](unsigned b) {
    uint4 w[2];
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const unsigned i = threadIdx.x + k * kBlock;
      const unsigned q = i >> vectors_bits, v = i & ((1u << vectors_bits) - 1);
      const auto* from = reinterpret_cast<const uint4*>(
          cluster.map_shared_rank(staging + b * kTile, q) + (rank << (vectors_bits + 2)));
      w[k] = from[v];
    }
    count_rows(base, w[0], sum);
    count_rows(base, w[1], sum);
  };
  tiles.load(0);
  if constexpr (kCluster) cluster.sync();  // every block has started
  for (unsigned round = 0; round < rounds; ++round) {
    const uint4 tile[2] = {tiles.next[0], tiles.next[1]};
    if constexpr (kForm != Form::sync_late && kForm != Form::split) tiles.load(round + 1);
    if constexpr (kForm == Form::no_exchange) {
      count_rows(base, tile[0], sum);
      count_rows(base, tile[1], sum);
      continue;
    }
    const unsigned b = kForm == Form::split ? round % 3 : round % 2;
    uint4* mine = reinterpret_cast<uint4*>(staging + b * kTile);
    mine[threadIdx.x] = tile[0];
    mine[kBlock + threadIdx.x] = tile[1];
    if constexpr (kForm == Form::local) {
      __syncthreads();
      count_rows(base, mine[(threadIdx.x + 512) % kBlock], sum);  // another thread's vectors
      count_rows(base, mine[kBlock + (threadIdx.x + 512) % kBlock], sum);
      __syncthreads();
    } else if constexpr (kForm == Form::split) {
      cluster_arrive();
      tiles.load(round + 1);
      if (round > 0) receive((round + 2) % 3);  // the previous round's buffer
      cluster_wait();
    } else {
      cluster.sync();
      if constexpr (kForm == Form::sync_late) tiles.load(round + 1);
      receive(b);
    }
  }
  if constexpr (kForm == Form::split) {
    if (rounds > 0) receive((rounds - 1) % 3);
  }
  if constexpr (kCluster) cluster.sync();  // no block leaves while its buffers are read
  __syncthreads();                         // every thread's counts are in
  unsigned long long counted = 0;
  for (unsigned i = threadIdx.x; i < kCounterWords; i += kBlock)
    counted += (counters[i] & 0xFFFFu) + (counters[i] >> 16);
  add_block_sum(counted, totals);
  add_block_sum(sum, totals + 1);
}

// push, bulk and push, direct: 16-bit rows pushed to their owners, counted rounds later.
template <bool kDirect>
__global__ void __launch_bounds__(kBlock, 1)
    exchange_push(const uint4* rows, unsigned rounds, unsigned long long* totals) {
  constexpr unsigned kBuffers = kDirect ? 6 : 3, kLag = kDirect ? 3 : 1;  // rounds a buffer waits
  constexpr unsigned kBufferBytes = kTile * 2;                            // a tile of 16-bit rows
  extern __shared__ __align__(16) unsigned shared[];
  __shared__ __align__(8) unsigned long long inbox_full[kBuffers], buffer_free[kBuffers];
  unsigned* counters = shared;
  auto* inbox = reinterpret_cast<uint4*>(shared + kCounterWords);
  auto* staging = inbox + kBuffers * kBufferBytes / 16;  // not for push, direct
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned blocks = cluster.num_blocks(), rank = cluster.block_rank();
  const unsigned stretch = kBufferBytes / blocks;  // bytes a sender sends an owner a round
  const unsigned base = shared_address(counters);
  unsigned long long sum = 0;
  for (unsigned i = threadIdx.x; i < kCounterWords; i += kBlock)
    counters[i] = 0;
  if (threadIdx.x == 0) {
    for (unsigned b = 0; b < kBuffers; ++b) {
      barrier_init(shared_address(inbox_full + b), 1);
      barrier_init(shared_address(buffer_free + b), blocks);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (unsigned b = 0; b < kBuffers; ++b)
      arrive_expecting(shared_address(inbox_full + b), kBufferBytes);
  }
  TileLoads tiles{rows, rounds, {}};
  // Counts round k's inbox once every sender's stretch is in, then hands the buffer back.
  auto receive = [&](unsigned k) {
    const unsigned b = k % kBuffers;
    wait_phase<false>(shared_address(inbox_full + b), (k / kBuffers) & 1);
    const uint4 w = inbox[b * kBufferBytes / 16 + threadIdx.x];
    for (unsigned word : {w.x, w.y, w.z, w.w}) {
      for (unsigned local : {word & 0xFFFFu, word >> 16}) {
        count_place(base, local);
        sum += local;
      }
    }
    __syncthreads();  // every thread has read the buffer
    if (threadIdx.x == 0) arrive_expecting(shared_address(inbox_full + b), kBufferBytes);
    __syncwarp();  // the barrier's next phase is set up before any sender is told
    if (threadIdx.x < blocks)
      arrive_remote<false>(remote(shared_address(buffer_free + b), threadIdx.x));
  };
  tiles.load(0);
  cluster.sync();  // every block's barriers are set up
  for (unsigned round = 0; round < rounds; ++round) {
    const unsigned b = round % kBuffers;
    if (round >= kBuffers)
      wait_phase<false>(shared_address(buffer_free + b), (round / kBuffers - 1) & 1);
    const uint4 tile[2] = {tiles.next[0], tiles.next[1]};
    tiles.load(round + 1);
    // The thread's 8 rows as their places among the owner's rows: owner q's stretch is the
    // tile's q-th share, as if sorted.
    unsigned local[8] = {tile[0].x, tile[0].y, tile[0].z, tile[0].w,
                         tile[1].x, tile[1].y, tile[1].z, tile[1].w};
    for (unsigned& r : local)
      r = (r >> 4) & 0xFFFFu;
    const uint4 vector = make_uint4(local[0] | local[1] << 16, local[2] | local[3] << 16,
                                    local[4] | local[5] << 16, local[6] | local[7] << 16);
    if constexpr (kDirect) {
      const unsigned senders = kBlock / blocks, q = threadIdx.x / senders;
      const unsigned to = shared_address(inbox + b * kBufferBytes / 16) + rank * stretch +
                          threadIdx.x % senders * 16;
      store_remote(remote(to, q), vector, remote(shared_address(inbox_full + b), q));
    } else {
      staging[b * kBufferBytes / 16 + threadIdx.x] = vector;
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // for the bulk copies
      __syncthreads();
      if (threadIdx.x < blocks) {
        const unsigned q = threadIdx.x;
        const unsigned from = shared_address(staging + b * kBufferBytes / 16) + q * stretch;
        const unsigned to = shared_address(inbox + b * kBufferBytes / 16) + rank * stretch;
        bulk_copy(remote(to, q), from, stretch, remote(shared_address(inbox_full + b), q));
      }
    }
    if (round >= kLag) receive(round - kLag);
  }
  for (unsigned k = rounds > kLag ? rounds - kLag : 0; k < rounds; ++k)
    receive(k);
  cluster.sync();  // no block leaves while others may still arrive on its barriers
  unsigned long long counted = 0;
  for (unsigned i = threadIdx.x; i < kCounterWords; i += kBlock)
    counted += (counters[i] & 0xFFFFu) + (counters[i] >> 16);
  add_block_sum(counted, totals);
  add_block_sum(sum, totals + 1);
}

__device__ unsigned padded8(unsigned rows) {
  return (rows + 7) / 8 * 8;
}

// push, sorted: the rows sorted by owner each round, then pushed to the owners.
__global__ void __launch_bounds__(kBlock, 1)
    exchange_sorted(const uint4* rows, unsigned rounds, unsigned long long* totals) {
  constexpr unsigned kBuffers = 4, kLag = 2, kOwners = 16;
  constexpr unsigned kCap = 640;  // rows a sender may send an owner a round (whole vectors)
  constexpr unsigned kInboxRows = kOwners * kCap;
  extern __shared__ __align__(16) unsigned shared[];
  __shared__ __align__(8) unsigned long long inbox_full[kBuffers], buffer_free[kBuffers];
  __shared__ unsigned cursor[kOwners * 32];  // (owner, lane): a count, then a place
  __shared__ unsigned owner_rows[kOwners];
  __shared__ unsigned header[kBuffers][kOwners];  // rows each sender sent this block
  __shared__ unsigned lost;
  unsigned* counters = shared;
  auto* staging = reinterpret_cast<unsigned short*>(shared + kCounterWords);
  auto* inbox = staging + kTile + 8 * kOwners;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned blocks = cluster.num_blocks(), rank = cluster.block_rank();
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned base = shared_address(counters);
  unsigned long long sum = 0;
  for (unsigned i = threadIdx.x; i < kCounterWords; i += kBlock)
    counters[i] = 0;
  if (threadIdx.x < kOwners * 32) cursor[threadIdx.x] = 0;
  if (threadIdx.x == 0) {
    lost = 0;
    for (unsigned b = 0; b < kBuffers; ++b) {
      barrier_init(shared_address(inbox_full + b), blocks);
      barrier_init(shared_address(buffer_free + b), blocks);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  TileLoads tiles{rows, rounds, {}};
  // Counts round k's inbox once every sender's vectors are in, then hands the buffer back.
  auto receive = [&](unsigned k) {
    const unsigned b = k % kBuffers;
    wait_phase<true>(shared_address(inbox_full + b), (k / kBuffers) & 1);
    unsigned vectors = 0;
    for (unsigned s = 0; s < blocks; ++s)
      vectors += padded8(header[b][s]) / 8;
    for (unsigned i = threadIdx.x; i < vectors; i += kBlock) {
      unsigned s = 0, first = 0;  // the sender of flattened vector i, and its first vector
      while (i >= first + padded8(header[b][s]) / 8)
        first += padded8(header[b][s++]) / 8;
      const unsigned v = i - first, valid = min(8u, header[b][s] - 8 * v);
      const uint4 w = *reinterpret_cast<const uint4*>(inbox + b * kInboxRows + s * kCap + 8 * v);
      const unsigned words[4] = {w.x, w.y, w.z, w.w};
      for (unsigned k8 = 0; k8 < valid; ++k8) {
        const unsigned local = words[k8 / 2] >> (16 * (k8 % 2)) & 0xFFFFu;
        count_place(base, local);
        sum += local;
      }
    }
    __syncthreads();  // every thread has read the buffer
    if (threadIdx.x < blocks)
      arrive_remote<true>(remote(shared_address(buffer_free + b), threadIdx.x));
  };
  tiles.load(0);
  cluster.sync();  // every block's barriers are set up
  for (unsigned round = 0; round < rounds; ++round) {
    const unsigned b = round % kBuffers;
    if (round >= kBuffers)
      wait_phase<true>(shared_address(buffer_free + b), (round / kBuffers - 1) & 1);
    const uint4 tile[2] = {tiles.next[0], tiles.next[1]};
    tiles.load(round + 1);
    const unsigned row[8] = {tile[0].x, tile[0].y, tile[0].z, tile[0].w,
                             tile[1].x, tile[1].y, tile[1].z, tile[1].w};
    const unsigned column = shared_address(cursor) + lane * 4;
    for (unsigned r : row)
      asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(column + (r % blocks) * 128) : "memory");
    __syncthreads();
    // Owner w's 32 counters are warp w's: their sum, then each counter's place.
    unsigned count = 0, inclusive = 0;
    if (warp < blocks) {
      count = cursor[warp * 32 + lane];
      inclusive = count;
      for (unsigned d = 1; d < 32; d *= 2) {
        const unsigned below = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
        if (lane >= d) inclusive += below;
      }
      if (lane == 31) owner_rows[warp] = inclusive;
    }
    __syncthreads();
    unsigned start[kOwners];  // each owner's first place (its stretch padded to whole vectors)
    unsigned placed = 0;
#pragma unroll
    for (unsigned o = 0; o < kOwners; ++o) {
      start[o] = placed;
      if (o < blocks) placed += padded8(owner_rows[o]);
    }
    if (warp < blocks) cursor[warp * 32 + lane] = start[warp] + inclusive - count;
    __syncthreads();
    unsigned places[8];
    for (int k = 0; k < 8; ++k)
      asm volatile("atom.shared.add.u32 %0, [%1], 1;"
                   : "=r"(places[k])
                   : "r"(column + (row[k] % blocks) * 128)
                   : "memory");
    for (int k = 0; k < 8; ++k)
      staging[places[k]] = (unsigned short)((row[k] >> 4) & 0xFFFFu);
    __syncthreads();
    if (threadIdx.x < kOwners * 32) cursor[threadIdx.x] = 0;  // for the next round's counts
    for (unsigned v = threadIdx.x; v < placed / 8; v += kBlock) {
      unsigned q = 0, first = 0;  // the vector's owner and the owner's first place
#pragma unroll
      for (unsigned o = 1; o < kOwners; ++o) {
        if (o < blocks && start[o] <= 8 * v) {
          q = o;
          first = start[o];
        }
      }
      const unsigned j = v - first / 8;  // the vector's place in its owner's stretch
      if (8 * j >= kCap) {
        atomicAdd(&lost, 1u);
        continue;
      }
      const uint4 vector = *reinterpret_cast<const uint4*>(staging + 8 * v);
      const unsigned to = shared_address(inbox + b * kInboxRows + rank * kCap + 8 * j);
      store_remote(remote(to, q), vector, remote(shared_address(inbox_full + b), q));
    }
    if (threadIdx.x < blocks) {  // this sender's rows for owner q: their count and bytes
      const unsigned q = threadIdx.x, sent = min(owner_rows[q], kCap);
      const unsigned bar = remote(shared_address(inbox_full + b), q);
      asm volatile(
          "mbarrier.arrive.expect_tx.relaxed.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(bar),
          "r"(padded8(sent) * 2 + 4)
          : "memory");
      asm volatile(
          "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(
              remote(shared_address(&header[b][rank]), q)),
          "r"(sent), "r"(bar)
          : "memory");
    }
    if (round >= kLag)
      receive(round - kLag);
    else
      __syncthreads();  // the counters are zero before the next round's counts
  }
  for (unsigned k = rounds > kLag ? rounds - kLag : 0; k < rounds; ++k)
    receive(k);
  cluster.sync();  // no block leaves while others may still send to it
  unsigned long long counted = 0;
  for (unsigned i = threadIdx.x; i < kCounterWords; i += kBlock)
    counted += (counters[i] & 0xFFFFu) + (counters[i] >> 16);
  if (lost) counted = 0;  // rows past kCap were dropped: the check fails
  add_block_sum(counted, totals);
  add_block_sum(sum, totals + 1);
}

// The sum of rows[0, n) (or of their 16-bit places) into *out.
__global__ void reference_sum(const unsigned* rows, long long n, bool places,
                              unsigned long long* out) {
  unsigned long long mine = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    mine += places ? (rows[i] >> 4) & 0xFFFFu : rows[i];
  for (int d = 16; d; d /= 2)
    mine += __shfl_xor_sync(0xFFFFFFFFu, mine, d);
  if (threadIdx.x % 32 == 0) atomicAdd(out, mine);
}

}  // namespace

namespace {

// Rows uniform in [0, 2^20), from a hash of their index.
__global__ void fill(unsigned* rows, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned long long z = (unsigned long long)i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    rows[i] = unsigned(z >> 44);
  }
}

template <Form kForm>
void run(const char* name, int cluster_size, const unsigned* rows, unsigned long long* totals) {
  constexpr bool kPush = kForm >= Form::push_bulk;
  const auto kernel = [] {
    if constexpr (kForm == Form::push_sorted)
      return &exchange_sorted;
    else if constexpr (kPush)
      return &exchange_push<kForm == Form::push_direct>;
    else
      return &exchange<kForm>;
  }();
  // Counters and three buffers of 4-byte rows; push, sorted: a tile's 16-bit rows and pads
  // sorted, and four inboxes of 16 x 640 16-bit rows.
  const std::size_t shared = kForm == Form::push_sorted
                                 ? kCounterWords * 4 + (kTile + 8 * 16) * 2 + 4 * 16 * 640 * 2
                                 : (kCounterWords + 3 * kTile) * sizeof(unsigned);
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), "attr");
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
        "shared memory");
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = unsigned(cluster_size);
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(cluster_size));
  config.blockDim = dim3(kBlock);
  config.dynamicSmemBytes = shared;
  config.attrs = &attribute;
  config.numAttrs = 1;
  int clusters = 0;
  check(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config), "clusters");
  if (clusters < 1) {
    std::printf("%-14s cluster %2d: cannot be placed\n", name, cluster_size);
    return;
  }
  const unsigned blocks = unsigned(clusters * cluster_size);
  const unsigned rounds = unsigned(kRows / kTile / blocks);
  const unsigned long long counted = (unsigned long long)rounds * blocks * kTile;
  unsigned long long expected[2] = {counted, 0};
  check(cudaMemset(totals, 0, 2 * sizeof *totals), "memset");
  reference_sum<<<1024, 256>>>(rows, (long long)counted, kPush, totals + 1);
  check(cudaMemcpy(&expected[1], totals + 1, sizeof *totals, cudaMemcpyDeviceToHost), "sum");
  config.gridDim = dim3(blocks);
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> times;
  bool checked = true;
  for (int i = 0; i < 11; ++i) {
    check(cudaMemset(totals, 0, 2 * sizeof *totals), "memset");
    check(cudaEventRecord(start), "record");
    check(cudaLaunchKernelEx(&config, kernel, reinterpret_cast<const uint4*>(rows), rounds, totals),
          name);
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), name);
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    unsigned long long got[2] = {};
    check(cudaMemcpy(got, totals, sizeof got, cudaMemcpyDeviceToHost), "copy");
    checked &= got[0] == expected[0] && got[1] == expected[1];
    if (i >= 2) times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  const double us = times[times.size() / 2] * 1e3;
  const double per_2_28 = us * double(kRows) / double(counted);  // scaled to 2^28 rows
  std::printf(
      "%-14s cluster %2d: %3u blocks, %4u rounds, %8.1f us for 2^28 rows, %7.1f GB/s of "
      "4-byte rows, %.2f us a round%s\n",
      name, cluster_size, blocks, rounds, per_2_28, 4.0 * kRows / per_2_28 / 1e3, us / rounds,
      checked ? "" : "  WRONG");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    const int c = std::atoi(argv[i]);
    if (c < 2 || c > 16 || (c & (c - 1))) {
      std::fprintf(stderr, "cluster_exchange_floor: a cluster is 2, 4, 8 or 16 blocks, got %s\n",
                   argv[i]);
      return 2;
    }
    sizes.push_back(c);
  }
  if (sizes.empty()) sizes = {16, 8};
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, 0), "device");
  std::printf("cluster_exchange_floor on %s: 2^28 rows, tiles of %u rows a block and round\n",
              props.name, kTile);
  unsigned* rows = nullptr;
  unsigned long long* totals = nullptr;
  check(cudaMalloc(&rows, kRows * sizeof(unsigned)), "rows");
  check(cudaMalloc(&totals, 2 * sizeof *totals), "totals");
  fill<<<1024, 256>>>(rows, kRows);
  check(cudaDeviceSynchronize(), "fill");
  for (int c : sizes) {
    run<Form::sync>("sync", c, rows, totals);
    run<Form::sync_late>("sync, late", c, rows, totals);
    run<Form::split>("split", c, rows, totals);
    run<Form::local>("local", c, rows, totals);
    run<Form::no_exchange>("no exchange", c, rows, totals);
    run<Form::push_bulk>("push, bulk", c, rows, totals);
    run<Form::push_direct>("push, direct", c, rows, totals);
    if (c == 16) run<Form::push_sorted>("push, sorted", c, rows, totals);  // a row's owner: r % 16
  }
  cudaFree(rows);
  cudaFree(totals);
  return 0;
}
