// cluster_exchange_floor: what sharing a histogram's rows out over a thread-block cluster costs
// a round on this GPU, with none of the sorting. The design tried in tuning record
// histogram-cuda-cluster-rows counted 2^20 rows in clusters of 16 blocks (block q counting the rows
// r with r mod 16 = q), each round a tile of 8192 rows a block sorted by owner and read by the
// owners through distributed shared memory; it ran at 2.1x the bucket sort's time. This probe
// keeps that round's skeleton and drops its work, so that what is left bounds any such design:
// 2^28 4-byte rows uniform in [0, 2^20); blocks of 1024 threads, one an SM (the design's shared
// memory: 128 KiB of 16-bit packed counters and the staging buffers); each round a block loads a
// tile of 8192 rows (8 a thread, the next tile's loads in flight) and writes them to its staging
// buffer as if sorted already (owner q's stretch is the tile's q-th share), then reads its own
// stretch of every block's buffer with 16-byte distributed-shared loads and adds each row to its
// counters (one red.shared a row, the row's 16-bit field of word (r >> 4) / 2). Forms:
//   sync         one cluster barrier a round, two staging buffers (the tried kernel's rounds);
//   split        the barrier split: arrive after writing, then the previous round's stretches
//                read and counted, then wait; three staging buffers;
//   no exchange  each block counts its own tile: no barrier, no distributed reads.
// Every run's counters are summed and checked against the rows counted.
//
// Timing: cudaEvents around each launch, the median of 9 after 2 warm-ups.
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

enum class Form { sync, split, no_exchange };

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cluster_exchange_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__device__ void count_row(unsigned base, unsigned r) {
  const unsigned local = (r >> 4) & 0xFFFFu;
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(base + local / 2 * 4),
               "r"(1u << (16 * (local & 1)))
               : "memory");
}

__device__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
}
__device__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}

template <Form kForm>
__global__ void __launch_bounds__(kBlock, 1)
    exchange(const uint4* rows, unsigned rounds, unsigned long long* total) {
  extern __shared__ __align__(16) unsigned shared[];
  unsigned* counters = shared;
  unsigned* staging = shared + kCounterWords;  // three buffers of kTile rows
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned owners = cluster.num_blocks(), rank = cluster.block_rank();
  const unsigned share = kTile / owners;  // rows of one owner's stretch
  const unsigned base = unsigned(__cvta_generic_to_shared(counters));
  for (unsigned i = threadIdx.x; i < kCounterWords; i += blockDim.x)
    counters[i] = 0;
  __syncthreads();
  auto load = [&](unsigned round, int u) {
    const long long tile = (long long)round * gridDim.x + blockIdx.x;
    return __ldcs(rows + tile * (kTile / 4) + u * kBlock + threadIdx.x);
  };
  // Reads and counts this block's stretch of every block's buffer b: share / 4 vectors of each.
  auto receive = [&](unsigned b) {
    const unsigned vectors = share / 4;
    for (unsigned i = threadIdx.x; i < kTile / 4; i += blockDim.x) {
      const unsigned q = i / vectors, v = i % vectors;
      const unsigned* from = cluster.map_shared_rank(staging + b * kTile, q) + rank * share;
      const uint4 w = reinterpret_cast<const uint4*>(from)[v];
      count_row(base, w.x);
      count_row(base, w.y);
      count_row(base, w.z);
      count_row(base, w.w);
    }
  };
  uint4 next[2] = {load(0, 0), load(0, 1)};
  if constexpr (kForm != Form::no_exchange) cluster.sync();  // every block has started
  for (unsigned round = 0; round < rounds; ++round) {
    const uint4 tile[2] = {next[0], next[1]};
    if (round + 1 < rounds) {
      next[0] = load(round + 1, 0);
      next[1] = load(round + 1, 1);
    }
    if constexpr (kForm == Form::no_exchange) {
      for (const uint4& w : tile) {
        count_row(base, w.x);
        count_row(base, w.y);
        count_row(base, w.z);
        count_row(base, w.w);
      }
      continue;
    }
    const unsigned b = kForm == Form::sync ? round % 2 : round % 3;
    uint4* mine = reinterpret_cast<uint4*>(staging + b * kTile);
    mine[threadIdx.x] = tile[0];
    mine[kBlock + threadIdx.x] = tile[1];
    if constexpr (kForm == Form::sync) {
      cluster.sync();
      receive(b);
    } else {
      cluster_arrive();
      if (round > 0) receive((round + 2) % 3);  // the previous round's buffer
      cluster_wait();
    }
  }
  if constexpr (kForm == Form::split) {
    if (rounds > 0) receive((rounds - 1) % 3);
  }
  if constexpr (kForm != Form::no_exchange) cluster.sync();  // no block leaves while read
  __syncthreads();
  unsigned long long mine = 0;
  for (unsigned i = threadIdx.x; i < kCounterWords; i += blockDim.x)
    mine += (counters[i] & 0xFFFFu) + (counters[i] >> 16);
  atomicAdd(total, mine);
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

struct Probe {
  const char* name;
  Form form;
};

template <Form kForm>
void run(const Probe& probe, int cluster_size, const uint4* rows, unsigned long long* total) {
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
    std::printf("%-12s cluster %2d: cannot be placed\n", probe.name, cluster_size);
    return;
  }
  const unsigned blocks = unsigned(clusters * cluster_size);
  const unsigned rounds = unsigned(kRows / kTile / blocks);
  const unsigned long long counted = (unsigned long long)rounds * blocks * kTile;
  config.gridDim = dim3(blocks);
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> times;
  bool checked = true;
  for (int i = 0; i < 11; ++i) {
    check(cudaMemset(total, 0, sizeof *total), "memset");
    check(cudaEventRecord(start), "record");
    check(cudaLaunchKernelEx(&config, kernel, rows, rounds, total), probe.name);
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), probe.name);
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    unsigned long long sum = 0;
    check(cudaMemcpy(&sum, total, sizeof sum, cudaMemcpyDeviceToHost), "copy");
    checked &= sum == counted;
    if (i >= 2) times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  const double us = times[times.size() / 2] * 1e3;
  const double per_2_28 = us * double(kRows) / double(counted);  // scaled to 2^28 rows
  std::printf(
      "%-12s cluster %2d: %3u blocks, %4u rounds, %8.1f us for 2^28 rows, %7.1f GB/s of "
      "4-byte rows, %.2f us a round%s\n",
      probe.name, cluster_size, blocks, rounds, per_2_28, 4.0 * kRows / per_2_28 / 1e3, us / rounds,
      checked ? "" : "  COUNTS WRONG");
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
  unsigned long long* total = nullptr;
  check(cudaMalloc(&rows, kRows * sizeof(unsigned)), "rows");
  check(cudaMalloc(&total, sizeof *total), "total");
  fill<<<1024, 256>>>(rows, kRows);
  check(cudaDeviceSynchronize(), "fill");
  const auto* vectors = reinterpret_cast<const uint4*>(rows);
  for (int c : sizes) {
    run<Form::sync>({"sync", Form::sync}, c, vectors, total);
    run<Form::split>({"split", Form::split}, c, vectors, total);
    run<Form::no_exchange>({"no exchange", Form::no_exchange}, c, vectors, total);
  }
  cudaFree(rows);
  cudaFree(total);
  return 0;
}
