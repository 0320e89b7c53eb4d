// histogram_floor: the ceiling that counter updates put on histograms with many bins on this GPU.
// A histogram of N values costs at least one counter update per value; this probe times those
// updates alone — no input is read — for every place the counters can live:
//   global u64      red.global.add.u64 on B 64-bit counters in device memory (L2 atomics),
//   shared u32      red.shared.add.u32 on a block's own 32-bit counters (no value returned: the
//                   striped histogram); B = 32768 words are the 65536 16-bit counters of a
//                   packed table,
//   shared atom     atom.shared.add.u32 whose returned word is used (the packed counters, which
//                   must see each carry),
//   cluster u32     atomicAdd on 32-bit counters spread over the distributed shared memory of a
//                   thread-block cluster of K blocks (B / K counters each, every update to a
//                   uniformly chosen block of the cluster: (K − 1) / K of them remote).
// Each thread of a resident grid (as many blocks as fit at once) makes its share of 2^30 updates
// to bins from a 32-bit LCG (one multiply-add and a shift per update; B is a power of two),
// unrolled 8 deep so that many updates are in flight. Each line gives the updates per second
// and the input rate of 4-byte values that it allows at best (GB/s). Every run's counters are
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

constexpr long long kUpdates = 1ll << 30;
constexpr int kBlock = 1024;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// This thread's updates and the first state of its LCG (bins are its top `bits` bits).
struct Stream {
  unsigned state;
  long long count;
  __device__ Stream() {
    const unsigned long long t = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
    const unsigned long long threads = gridDim.x * 1ull * blockDim.x;
    count = kUpdates / threads + (t < kUpdates % threads);
    state = unsigned(t * 0x9E3779B97F4A7C15ull >> 32) | 1u;
  }
  __device__ unsigned next(unsigned bits) {
    state = state * 1664525u + 1013904223u;
    return state >> (32 - bits);
  }
};

__global__ void global_u64(unsigned long long* counts, unsigned bits, unsigned long long*) {
  Stream s;
#pragma unroll 8
  for (long long k = 0; k < s.count; ++k)
    atomicAdd(counts + s.next(bits), 1ull);
}

template <bool kReturned>
__global__ void shared_u32(unsigned long long* counts, unsigned bits, unsigned long long* sink) {
  extern __shared__ unsigned hist[];
  const unsigned bins = 1u << bits;
  for (unsigned i = threadIdx.x; i < bins; i += blockDim.x)
    hist[i] = 0;
  __syncthreads();
  Stream s;
  const unsigned base = unsigned(__cvta_generic_to_shared(hist));
  unsigned seen = 0;
#pragma unroll 8
  for (long long k = 0; k < s.count; ++k) {
    const unsigned address = base + s.next(bits) * 4;
    if constexpr (kReturned) {
      unsigned old;
      asm volatile("atom.shared.add.u32 %0, [%1], 1;" : "=r"(old) : "r"(address) : "memory");
      seen |= old;
    } else {
      asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(address) : "memory");
    }
  }
  if (seen == ~0u) *sink = seen;  // keeps the returned words in use
  __syncthreads();
  for (unsigned i = threadIdx.x; i < bins; i += blockDim.x)
    if (hist[i]) atomicAdd(counts + i, (unsigned long long)hist[i]);
}

__global__ void cluster_u32(unsigned long long* counts, unsigned bits, unsigned long long*) {
  extern __shared__ unsigned hist[];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned own_bits = bits - (31 - __clz(cluster.num_blocks()));
  const unsigned own = 1u << own_bits;
  for (unsigned i = threadIdx.x; i < own; i += blockDim.x)
    hist[i] = 0;
  cluster.sync();
  Stream s;
#pragma unroll 8
  for (long long k = 0; k < s.count; ++k) {
    const unsigned bin = s.next(bits);
    atomicAdd(cluster.map_shared_rank(hist, bin >> own_bits) + (bin & (own - 1)), 1u);
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
  void (*kernel)(unsigned long long*, unsigned, unsigned long long*);
  unsigned bits;       // 2^bits bins
  int cluster;         // blocks per cluster (0: no cluster)
  std::size_t shared;  // bytes per block
};

// Times one probe on a resident grid, prints its line and returns it as JSON text.
std::string run(const Probe& p, int sms, unsigned long long* counts, unsigned long long* sum) {
  const unsigned bins = 1u << p.bits;
  if (p.shared > (48u << 10))
    check(
        cudaFuncSetAttribute(p.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.shared)),
        "shared memory attribute");
  if (p.cluster > 8)
    check(cudaFuncSetAttribute(p.kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
          "non-portable cluster attribute");
  cudaLaunchConfig_t config{};
  config.blockDim = kBlock;
  config.dynamicSmemBytes = p.shared;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = unsigned(p.cluster);
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = p.cluster ? 1 : 0;
  int resident = 0;
  if (p.cluster) {
    config.gridDim = unsigned(p.cluster);
    check(cudaOccupancyMaxActiveClusters(&resident, p.kernel, &config), "cluster occupancy");
    resident *= p.cluster;
  } else {
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, p.kernel, kBlock, p.shared),
          "occupancy");
    resident *= sms;
  }
  config.gridDim = unsigned(std::max(resident, 1));
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> ms;
  for (int rep = 0; rep < 11; ++rep) {
    check(cudaMemset(counts, 0, std::size_t(bins) * 8), "memset");
    check(cudaEventRecord(start), "record");
    check(cudaLaunchKernelEx(&config, p.kernel, counts, p.bits, sum), p.name);
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), p.name);
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    if (rep >= 2) ms.push_back(t);
  }
  check(cudaMemset(sum, 0, 8), "memset");
  total<<<256, 256>>>(counts, bins, sum);
  unsigned long long got = 0;
  check(cudaMemcpy(&got, sum, 8, cudaMemcpyDeviceToHost), "copy");
  const bool checked = got == (unsigned long long)kUpdates;
  std::sort(ms.begin(), ms.end());
  const double t = ms[ms.size() / 2];
  const double rate = double(kUpdates) / (t * 1e-3);
  std::printf(
      "%-12s %8u bins%s  %5u blocks  %9.1f µs for 2^30 updates  %7.1f G updates/s  ≤ %6.0f GB/s "
      "of 4-byte values  %s\n",
      p.name, bins, p.cluster ? (" cluster " + std::to_string(p.cluster)).c_str() : "          ",
      config.gridDim.x, t * 1e3, rate * 1e-9, rate * 4e-9, checked ? "checked" : "COUNT WRONG");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  char json[256];
  std::snprintf(json, sizeof json,
                "{\"counters\": \"%s\", \"bins\": %u, \"cluster\": %d, \"blocks\": %u, "
                "\"us\": %.1f, \"g_updates_per_s\": %.1f, \"checked\": %s}",
                p.name, bins, p.cluster, config.gridDim.x, t * 1e3, rate * 1e-9,
                checked ? "true" : "false");
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
      {"global u64", global_u64, 16, 0, 0},
      {"global u64", global_u64, 20, 0, 0},
      {"global u64", global_u64, 22, 0, 0},
      {"shared u32", shared_u32<false>, 12, 0, 4096 * 4},
      {"shared u32", shared_u32<false>, 15, 0, 32768 * 4},
      {"shared atom", shared_u32<true>, 12, 0, 4096 * 4},
      {"shared atom", shared_u32<true>, 15, 0, 32768 * 4},
      {"cluster u32", cluster_u32, 16, 2, 32768 * 4},
      {"cluster u32", cluster_u32, 16, 4, 16384 * 4},
      {"cluster u32", cluster_u32, 18, 8, 32768 * 4},
      {"cluster u32", cluster_u32, 19, 16, 32768 * 4},
  };
  std::string lines;
  for (const Probe& p : probes)
    lines += (lines.empty() ? "" : ",\n  ") + run(p, props.multiProcessorCount, counts, sum);
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
