// histogram_floor: the floor under histograms with many bins on this GPU. A histogram of N values
// costs at least one counter update per value; this probe times those updates alone — no input
// is read, each thread hashes its own indices to uniformly spread bins — for every place the
// counters can live:
//   global u64      red.global.add.u64 on B 64-bit counters in device memory (L2 atomics),
//   shared u32      red.shared.add.u32 on a block's own 32-bit counters (the privatized
//                   histogram; B ≤ 32768 fits one block beside a second block per SM),
//   cluster u32     atomicAdd on 32-bit counters spread over the distributed shared memory of a
//                   thread-block cluster of K blocks (B / K counters each, every update to a
//                   uniformly chosen block of the cluster: (K − 1) / K of them remote).
// Each line gives the updates per second and what that rate allows at best: the time for 2^28
// values, and the input rate of 4-byte values that it allows (GB/s). Every run's counters are
// summed on the device and checked against the number of updates.
//
// Timing: cudaEvents around each launch, the median of 9 after 2 warm-ups.
// Build: cmake --build BUILD --target histogram_floor. Run: BUILD/bench/histogram_floor
// [--json FILE] (FILE: the lines as JSON, which bench/report/make_benchmarks.py shows beside the
// histogram tables as histogram-floor.json).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace cg = cooperative_groups;

namespace {

constexpr long long kUpdates = 1ll << 28;
constexpr int kBlock = 1024;
constexpr int kPerThread = 64;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__device__ unsigned spread(unsigned long long i) {
  unsigned long long x = i * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  return unsigned(x >> 32);
}

__global__ void global_u64(unsigned long long* counts, unsigned bins) {
  const unsigned long long first = (blockIdx.x * 1ull * blockDim.x + threadIdx.x) * kPerThread;
  for (int k = 0; k < kPerThread; ++k)
    atomicAdd(counts + spread(first + k) % bins, 1ull);
}

__global__ void shared_u32(unsigned long long* counts, unsigned bins) {
  extern __shared__ unsigned hist[];
  for (unsigned i = threadIdx.x; i < bins; i += blockDim.x)
    hist[i] = 0;
  __syncthreads();
  const unsigned long long first = (blockIdx.x * 1ull * blockDim.x + threadIdx.x) * kPerThread;
  for (int k = 0; k < kPerThread; ++k)
    atomicAdd(hist + spread(first + k) % bins, 1u);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < bins; i += blockDim.x)
    if (hist[i]) atomicAdd(counts + i, (unsigned long long)hist[i]);
}

__global__ void cluster_u32(unsigned long long* counts, unsigned bins) {
  extern __shared__ unsigned hist[];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned blocks = cluster.num_blocks();
  const unsigned own = bins / blocks;
  for (unsigned i = threadIdx.x; i < own; i += blockDim.x)
    hist[i] = 0;
  cluster.sync();
  const unsigned long long first = (blockIdx.x * 1ull * blockDim.x + threadIdx.x) * kPerThread;
  for (int k = 0; k < kPerThread; ++k) {
    const unsigned bin = spread(first + k) % bins;
    atomicAdd(cluster.map_shared_rank(hist, bin / own) + bin % own, 1u);
  }
  cluster.sync();
  const unsigned base = cluster.block_rank() * own;
  for (unsigned i = threadIdx.x; i < own; i += blockDim.x)
    if (hist[i]) atomicAdd(counts + base + i, (unsigned long long)hist[i]);
}

__global__ void total(const unsigned long long* counts, unsigned bins, unsigned long long* sum) {
  unsigned long long s = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < bins; i += gridDim.x * blockDim.x)
    s += counts[i];
  atomicAdd(sum, s);
}

struct Probe {
  const char* name;
  void (*kernel)(unsigned long long*, unsigned);
  unsigned bins;
  int cluster;         // blocks per cluster (0: no cluster)
  std::size_t shared;  // bytes per block
};

// Times one probe, prints its line and returns it as JSON text.
std::string run(const Probe& p, unsigned long long* counts, unsigned long long* sum) {
  const unsigned grid = unsigned(kUpdates / (kBlock * kPerThread));
  if (p.shared > (48u << 10))
    check(
        cudaFuncSetAttribute(p.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.shared)),
        "shared memory attribute");
  if (p.cluster > 8)
    check(cudaFuncSetAttribute(p.kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
          "non-portable cluster attribute");
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = kBlock;
  config.dynamicSmemBytes = p.shared;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = unsigned(p.cluster);
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = p.cluster ? 1 : 0;
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> ms;
  for (int rep = 0; rep < 11; ++rep) {
    check(cudaMemset(counts, 0, std::size_t(p.bins) * 8), "memset");
    check(cudaEventRecord(start), "record");
    check(cudaLaunchKernelEx(&config, p.kernel, counts, p.bins), p.name);
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), p.name);
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    if (rep >= 2) ms.push_back(t);
  }
  check(cudaMemset(sum, 0, 8), "memset");
  total<<<256, 256>>>(counts, p.bins, sum);
  unsigned long long got = 0;
  check(cudaMemcpy(&got, sum, 8, cudaMemcpyDeviceToHost), "copy");
  std::sort(ms.begin(), ms.end());
  const double t = ms[ms.size() / 2];
  const double rate = double(kUpdates) / (t * 1e-3);
  std::printf(
      "%-12s %8u bins%s  %9.1f µs for 2^28 updates  %7.1f G updates/s  ≤ %6.0f GB/s of "
      "4-byte values  %s\n",
      p.name, p.bins, p.cluster ? (" cluster " + std::to_string(p.cluster)).c_str() : "          ",
      t * 1e3, rate * 1e-9, rate * 4e-9,
      got == (unsigned long long)kUpdates ? "checked" : "COUNT WRONG");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  char json[256];
  std::snprintf(json, sizeof json,
                "{\"counters\": \"%s\", \"bins\": %u, \"cluster\": %d, \"us\": %.1f, "
                "\"g_updates_per_s\": %.1f, \"checked\": %s}",
                p.name, p.bins, p.cluster, t * 1e3, rate * 1e-9,
                got == (unsigned long long)kUpdates ? "true" : "false");
  return json;
}

}  // namespace

int main(int argc, char** argv) {
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, 0), "device");
  std::printf("%s, %d SMs\n", props.name, props.multiProcessorCount);
  unsigned long long *counts = nullptr, *sum = nullptr;
  check(cudaMalloc(&counts, (1u << 22) * 8), "malloc");
  check(cudaMalloc(&sum, 8), "malloc");
  const std::vector<Probe> probes = {
      {"global u64", global_u64, 65536, 0, 0},
      {"global u64", global_u64, 1u << 20, 0, 0},
      {"global u64", global_u64, 1u << 22, 0, 0},
      {"shared u32", shared_u32, 4096, 0, 4096 * 4},
      {"shared u32", shared_u32, 32768, 0, 32768 * 4},
      {"cluster u32", cluster_u32, 65536, 2, 32768 * 4},
      {"cluster u32", cluster_u32, 65536, 4, 16384 * 4},
      {"cluster u32", cluster_u32, 1u << 18, 8, 32768 * 4},
      {"cluster u32", cluster_u32, 1u << 19, 16, 32768 * 4},
  };
  std::string lines;
  for (const Probe& p : probes)
    lines += (lines.empty() ? "" : ",\n  ") + run(p, counts, sum);
  if (argc == 3 && std::string(argv[1]) == "--json") {
    FILE* out = std::fopen(argv[2], "w");
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", argv[2]);
      return 1;
    }
    std::fprintf(out, "{\"device\": \"%s\", \"updates\": %lld, \"probes\": [\n  %s]}\n", props.name,
                 kUpdates, lines.c_str());
    std::fclose(out);
  }
  cudaFree(counts);
  cudaFree(sum);
  return 0;
}
