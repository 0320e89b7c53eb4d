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
//   no exchange  each block counts its own tile straight from registers.
// Every run is checked: as many rows counted as the rounds cover, and the sum of the rows read
// equal to the sum of the input's first rows (so a stale or misplaced read is caught).
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

namespace cg = cooperative_groups;

namespace {

constexpr int kBlock = 1024;
constexpr unsigned kTile = kBlock * 8;     // rows a block and round
constexpr unsigned kCounterWords = 32768;  // 65536 16-bit counters
constexpr long long kRows = 1ll << 28;

enum class Form { sync, sync_late, split, local, no_exchange };

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cluster_exchange_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Adds the vector's rows to the packed counters and to the thread's sum of the rows read.
__device__ void count_rows(unsigned base, const uint4& w, unsigned long long& sum) {
  for (unsigned r : {w.x, w.y, w.z, w.w}) {
    const unsigned local = (r >> 4) & 0xFFFFu;
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(base + local / 2 * 4),
                 "r"(1u << (16 * (local & 1)))
                 : "memory");
    sum += r;
  }
}

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
  auto load = [&](unsigned round, int u) {
    const long long tile = (long long)round * gridDim.x + blockIdx.x;
    return __ldcs(rows + tile * (kTile / 4) + u * kBlock + threadIdx.x);
  };
  uint4 next[2];
  auto load_next = [&](unsigned round) {
    if (round < rounds) {
      next[0] = load(round, 0);
      next[1] = load(round, 1);
    }
  };
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
  load_next(0);
  if constexpr (kCluster) cluster.sync();  // every block has started
  for (unsigned round = 0; round < rounds; ++round) {
    const uint4 tile[2] = {next[0], next[1]};
    if constexpr (kForm != Form::sync_late && kForm != Form::split) load_next(round + 1);
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
      load_next(round + 1);
      if (round > 0) receive((round + 2) % 3);  // the previous round's buffer
      cluster_wait();
    } else {
      cluster.sync();
      if constexpr (kForm == Form::sync_late) load_next(round + 1);
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

// The sum of rows[0, n) into *out.
__global__ void reference_sum(const unsigned* rows, long long n, unsigned long long* out) {
  unsigned long long mine = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    mine += rows[i];
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
  const auto kernel = &exchange<kForm>;
  const std::size_t shared = (kCounterWords + 3 * kTile) * sizeof(unsigned);
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
    std::printf("%-12s cluster %2d: cannot be placed\n", name, cluster_size);
    return;
  }
  const unsigned blocks = unsigned(clusters * cluster_size);
  const unsigned rounds = unsigned(kRows / kTile / blocks);
  const unsigned long long counted = (unsigned long long)rounds * blocks * kTile;
  unsigned long long expected[2] = {counted, 0};
  check(cudaMemset(totals, 0, 2 * sizeof *totals), "memset");
  reference_sum<<<1024, 256>>>(rows, (long long)counted, totals + 1);
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
      "%-12s cluster %2d: %3u blocks, %4u rounds, %8.1f us for 2^28 rows, %7.1f GB/s of "
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
  }
  cudaFree(rows);
  cudaFree(totals);
  return 0;
}
