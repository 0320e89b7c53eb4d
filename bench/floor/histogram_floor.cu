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
// And the device-memory traffic of sorting rows into buckets (kernels_bucketed.cuh), with none of
// its work: 2^28 4-byte values read and each one's 16-bit row written (read 4 B, write 2 B), then
// the rows read back (read 2 B); no design that moves each value's row through device memory
// can count faster than their sum allows. The same in chunks of 2^23 values, whose 16 MiB of rows
// the L2 keeps from the write to the read, bounds a design that sorts and counts chunk by chunk.
// A plain read of the values is the reference.
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
#include <functional>
#include <string>
#include <type_traits>
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

// The traffic probes: grid-stride over 16-byte vectors, four in flight per thread, streaming
// loads and stores as the bucket kernels make them. Each warp adds what it read to `sum` (the
// rows' 16-bit fields, or the values' low 16 bits) so that the loads are kept and checked.
constexpr long long kTrafficValues = 1ll << 28;

__device__ unsigned low_fields(const uint4& v) {
  return (v.x & 0xFFFFu) + (v.y & 0xFFFFu) + (v.z & 0xFFFFu) + (v.w & 0xFFFFu);
}
__device__ unsigned both_fields(const uint4& v) {
  return low_fields(v) + (v.x >> 16) + (v.y >> 16) + (v.z >> 16) + (v.w >> 16);
}

// One atomic a warp: a thread's sum fits 32 bits (2^28 fields of 257 over the grid's threads).
__device__ void add_warp_sum(unsigned mine, unsigned long long* sum) {
  mine = __reduce_add_sync(0xFFFFFFFFu, mine);
  if (threadIdx.x % 32 == 0) atomicAdd(sum, (unsigned long long)mine);
}

// Grid-stride over `vectors` 16-byte vectors at `in`, four loads in flight per thread (streaming
// loads, or plain ones where the L2 is to keep what it read): each vector goes to use(index, v).
template <bool kStream, class Use>
__device__ void over_vectors(const uint4* in, long long vectors, Use use) {
  const long long threads = (long long)gridDim.x * blockDim.x;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  auto round = [&](auto in_flight) {
    constexpr int n = decltype(in_flight)::value;
    uint4 v[n];
#pragma unroll
    for (int k = 0; k < n; ++k)
      v[k] = kStream ? __ldcs(in + i + k * threads) : in[i + k * threads];
#pragma unroll
    for (int k = 0; k < n; ++k)
      use(i + k * threads, v[k]);
  };
  for (; i + 3 * threads < vectors; i += 4 * threads)
    round(std::integral_constant<int, 4>{});
  for (; i < vectors; i += threads)
    round(std::integral_constant<int, 1>{});
}

// Reads the 4-byte values (16-byte vectors), nothing written.
__global__ void read_values(const uint4* values, uint2*, long long n, unsigned long long* sum) {
  unsigned mine = 0;
  over_vectors<true>(values, n / 4, [&](long long, const uint4& v) { mine += low_fields(v); });
  add_warp_sum(mine, sum);
}

// Reads n values and writes each one's low 16 bits (8 bytes of rows per 16-byte vector):
// streaming stores, or plain ones for rows that the L2 keeps until they are read back (kKeep).
// Returns the thread's sum of what it read.
template <bool kKeep>
__device__ unsigned write_rows_of(const uint4* values, uint2* rows, long long n) {
  unsigned mine = 0;
  over_vectors<true>(values, n / 4, [&](long long j, const uint4& v) {
    const uint2 packed = make_uint2((v.x & 0xFFFFu) | v.y << 16, (v.z & 0xFFFFu) | v.w << 16);
    if constexpr (kKeep) {
      rows[j] = packed;
    } else {
      __stcs(rows + j, packed);
    }
    mine += low_fields(v);
  });
  return mine;
}

// Reads n rows back (16-byte vectors of eight); returns the thread's sum of their fields.
template <bool kKeep>
__device__ unsigned read_rows_of(const uint4* rows, long long n) {
  unsigned mine = 0;
  over_vectors<!kKeep>(rows, n / 8, [&](long long, const uint4& v) { mine += both_fields(v); });
  return mine;
}

template <bool kKeep>
__global__ void write_rows(const uint4* values, uint2* rows, long long n, unsigned long long* sum) {
  add_warp_sum(write_rows_of<kKeep>(values, rows, n), sum);
}
template <bool kKeep>
__global__ void read_rows(const uint4* rows, uint2*, long long n, unsigned long long* sum) {
  add_warp_sum(read_rows_of<kKeep>(rows, n), sum);
}

// One resident grid that writes the rows of chunk c (kChunk values) into half c mod 2 of `ring`
// while it reads back those of chunk c − 1, a grid barrier between steps: the traffic of sorting
// and counting chunk by chunk in one kernel, with the rows kept in the L2.
constexpr long long kChunk = 1ll << 23;
__global__ void rows_in_turn(const uint4* values, uint2* ring, long long n,
                             unsigned long long* sum) {
  cg::grid_group grid = cg::this_grid();
  unsigned mine = 0;
  const long long chunks = n / kChunk;
  for (long long c = 0; c <= chunks; ++c) {
    if (c < chunks)
      mine += write_rows_of<true>(values + c * kChunk / 4, ring + c % 2 * kChunk / 4, kChunk);
    if (c > 0)
      mine += read_rows_of<true>(reinterpret_cast<const uint4*>(ring + (c - 1) % 2 * kChunk / 4),
                                 kChunk);
    grid.sync();
  }
  add_warp_sum(mine, sum);
}

// The partition probes: the sort step of kernels_bucketed.cuh with none of the rule's work.
// Each block takes tiles of kPartitionTile 4-byte rows (uniform in [0, 2^20)), places them in
// shared memory sorted by bucket (row >> 14, 64 buckets) and writes the tile's 16-bit offsets
// out, as the library's sort does. Two ways of taking places:
//   columns   a count and a place by one shared atomic each per value, a counter per bucket
//             and lane (the library's way);
//   warp      a warp's values of one bucket found with match.any, one atomic per bucket and warp
//             for the count and one for the places, each value's place its rank among them.
// The next tile's rows load while a tile is placed.
// Any design that moves each row to its bucket's counters must partition at least this fast;
// the sum of the fields written is checked against the rows'.
constexpr int kPartitionLoads = 4;
constexpr unsigned kPartitionTile = kBlock * kPartitionLoads * 4;
constexpr unsigned kPartitionBuckets = 64, kPartitionShift = 14, kPartitionColumns = 32;
constexpr unsigned kPartitionCounters = kPartitionBuckets * kPartitionColumns;
constexpr unsigned kPartitionPer = kPartitionCounters / kBlock;  // counters a thread scans

// Exclusive prefix sums of a[0, kPartitionCounters) in place, kPartitionPer a thread.
__device__ void partition_scan(unsigned* a, unsigned* warp_sums) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned mine[kPartitionPer], sum = 0;
  for (unsigned k = 0; k < kPartitionPer; ++k)
    sum += mine[k] = a[threadIdx.x * kPartitionPer + k];
  unsigned inclusive = sum;
  for (unsigned d = 1; d < 32; d *= 2) {
    const unsigned below = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
    if (lane >= d) inclusive += below;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    unsigned w = warp_sums[lane];
    for (unsigned d = 1; d < 32; d *= 2) {
      const unsigned below = __shfl_up_sync(0xFFFFFFFFu, w, d);
      if (lane >= d) w += below;
    }
    warp_sums[lane] = w;
  }
  __syncthreads();
  unsigned running = inclusive - sum + (warp ? warp_sums[warp - 1] : 0u);
  for (unsigned k = 0; k < kPartitionPer; ++k) {
    a[threadIdx.x * kPartitionPer + k] = running;
    running += mine[k];
  }
  __syncthreads();
}

template <bool kWarp>
__global__ void __launch_bounds__(kBlock)
    partition_rows(const uint4* rows_in, uint2* out, long long n, unsigned long long* sum) {
  __shared__ __align__(16) unsigned short staging[kPartitionTile];
  __shared__ unsigned cursor[kPartitionCounters];
  __shared__ unsigned warp_sums[32];
  constexpr int kRows = kPartitionLoads * 4;
  const unsigned column = kWarp ? 0 : threadIdx.x % kPartitionColumns;
  const unsigned lane = threadIdx.x % 32, below = (1u << lane) - 1;
  const long long tiles = n / kPartitionTile;
  unsigned mine = 0;
  uint4 next[kPartitionLoads];  // the next tile's rows load while this one is placed
  auto load = [&](long long tile) {
#pragma unroll
    for (int u = 0; u < kPartitionLoads; ++u)
      next[u] = tile < tiles
                    ? __ldcs(rows_in + tile * (kPartitionTile / 4) + u * kBlock + threadIdx.x)
                    : make_uint4(0, 0, 0, 0);
  };
  load(blockIdx.x);
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    unsigned rows[kRows], peers[kWarp ? kRows : 1];
#pragma unroll
    for (int u = 0; u < kPartitionLoads; ++u) {
      const uint4 v = next[u];
      rows[4 * u] = v.x, rows[4 * u + 1] = v.y, rows[4 * u + 2] = v.z, rows[4 * u + 3] = v.w;
    }
    load(tile + gridDim.x);
    for (unsigned i = threadIdx.x; i < kPartitionCounters; i += blockDim.x)
      cursor[i] = 0;
    __syncthreads();
    auto counter = [&](unsigned row) {
      return &cursor[(row >> kPartitionShift) * kPartitionColumns + column];
    };
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      if constexpr (kWarp) {
        peers[k] = __match_any_sync(0xFFFFFFFFu, rows[k] >> kPartitionShift);
        if ((peers[k] & below) == 0) atomicAdd(counter(rows[k]), __popc(peers[k]));
      } else {
        atomicAdd(counter(rows[k]), 1u);
      }
    }
    __syncthreads();
    partition_scan(cursor, warp_sums);
    unsigned places[kRows];
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      if constexpr (kWarp) {
        const unsigned first = __ffs(peers[k]) - 1;
        unsigned base = 0;
        if (lane == first) base = atomicAdd(counter(rows[k]), __popc(peers[k]));
        places[k] = __shfl_sync(0xFFFFFFFFu, base, first) + __popc(peers[k] & below);
      } else {
        places[k] = atomicAdd(counter(rows[k]), 1u);
      }
    }
#pragma unroll
    for (int k = 0; k < kRows; ++k)
      staging[places[k]] = (unsigned short)(rows[k] & ((1u << kPartitionShift) - 1));
    __syncthreads();
    const uint4* in = reinterpret_cast<const uint4*>(staging);
    uint4* to = reinterpret_cast<uint4*>(out) + tile * (kPartitionTile / 8);
    for (unsigned i = threadIdx.x; i < kPartitionTile / 8; i += blockDim.x) {
      const uint4 v = in[i];
      __stcs(to + i, v);
      mine += both_fields(v);
    }
    __syncthreads();  // staging and cursor are written again
  }
  add_warp_sum(mine, sum);
}

// Rows uniform in [0, 2^20) from a hash of the index; `sum` gets their low 14 bits' sum.
__global__ void fill_rows(unsigned* rows, long long n, unsigned long long* sum) {
  unsigned mine = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (i + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    rows[i] = unsigned(h >> 44);
    mine += rows[i] & ((1u << kPartitionShift) - 1);
  }
  add_warp_sum(mine, sum);
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

// Times the launches that `enqueue` makes (median of 9 after 2 warm-ups), checks the sum of what
// they read against `expected` (every value is 0x01010101: each 16-bit field is 257), prints the
// line and returns the time in µs. `bytes_per_value`: the device-memory bytes it moves per value.
double time_traffic(const char* name, double bytes_per_value, unsigned long long expected,
                    const std::function<void()>& enqueue, unsigned long long* sum,
                    std::string& json) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> ms;
  bool checked = true;
  for (int rep = 0; rep < 11; ++rep) {
    check(cudaMemset(sum, 0, 8), "memset");
    check(cudaEventRecord(start), "record");
    enqueue();
    check(cudaGetLastError(), name);
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), name);
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    if (rep >= 2) ms.push_back(t);
    unsigned long long got = 0;
    check(cudaMemcpy(&got, sum, 8, cudaMemcpyDeviceToHost), "copy");
    checked &= got == expected;
  }
  std::sort(ms.begin(), ms.end());
  const double us = ms[ms.size() / 2] * 1e3;
  const double gbs = kTrafficValues * bytes_per_value / (us * 1e3);
  std::printf("traffic      %-40s %9.1f µs for 2^28 values  %6.0f GB/s  %s\n", name, us, gbs,
              checked ? "checked" : "SUM WRONG");
  char line[256];
  std::snprintf(line, sizeof line,
                "{\"step\": \"%s\", \"bytes_per_value\": %.0f, \"us\": %.1f, \"gb_per_s\": %.1f, "
                "\"checked\": %s}",
                name, bytes_per_value, us, gbs, checked ? "true" : "false");
  json += (json.empty() ? "" : ",\n  ") + std::string(line);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return us;
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
  // The traffic of rows sorted through device memory: all rows written, then all read back; and
  // in chunks of kChunk values whose 16 MiB of rows the L2 keeps between the write and the read.
  const long long n = kTrafficValues;
  const unsigned long long fields = 257ull * n;
  const int grid = 2 * props.multiProcessorCount;
  uint4 *values = nullptr, *rows = nullptr;
  check(cudaMalloc(&values, n * 4), "malloc");
  check(cudaMalloc(&rows, n * 2), "malloc");
  check(cudaMemset(values, 1, n * 4), "memset");
  auto* row_pairs = reinterpret_cast<uint2*>(rows);
  std::string traffic;
  const double read = time_traffic(
      "read values (4 B)", 4, fields,
      [&] { read_values<<<grid, kBlock>>>(values, nullptr, n, sum); }, sum, traffic);
  const double sort = time_traffic(
      "read values, write rows (4 B + 2 B)", 6, fields,
      [&] { write_rows<false><<<grid, kBlock>>>(values, row_pairs, n, sum); }, sum, traffic);
  const double count = time_traffic(
      "read rows (2 B)", 2, fields,
      [&] { read_rows<false><<<grid, kBlock>>>(rows, nullptr, n, sum); }, sum, traffic);
  const double chunked = time_traffic(
      "both, chunks of 2^23 in the L2, 2 launches each", 4, 2 * fields,
      [&] {
        for (long long c = 0; c < n; c += kChunk) {
          write_rows<true><<<grid, kBlock>>>(values + c / 4, row_pairs, kChunk, sum);
          read_rows<true><<<grid, kBlock>>>(rows, nullptr, kChunk, sum);
        }
      },
      sum, traffic);
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rows_in_turn, kBlock, 0),
        "occupancy");
  const int resident = std::min(grid, per_sm * props.multiProcessorCount);
  const double in_turn = time_traffic(
      "both, chunks of 2^23 in the L2, one kernel", 4, 2 * fields,
      [&] {
        long long count = n;
        void* args[] = {&values, &row_pairs, &count, &sum};
        check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(rows_in_turn), resident,
                                          kBlock, args),
              "cooperative launch");
      },
      sum, traffic);
  // The partition of 2^28 uniform rows into 64 buckets, then the same with the rows' read back.
  check(cudaMemset(sum, 0, 8), "memset");
  fill_rows<<<grid, kBlock>>>(reinterpret_cast<unsigned*>(values), n, sum);
  unsigned long long low_bits = 0;
  check(cudaMemcpy(&low_bits, sum, 8, cudaMemcpyDeviceToHost), "copy");
  double partition = 1e30;
  for (const bool warp : {false, true}) {
    auto kernel = warp ? partition_rows<true> : partition_rows<false>;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0), "occupancy");
    const int blocks = per_sm * props.multiProcessorCount;
    partition = std::min(
        partition, time_traffic(
                       warp ? "partition into 64 buckets, warp places"
                            : "partition into 64 buckets, column atomics",
                       6, low_bits, [&] { kernel<<<blocks, kBlock>>>(values, row_pairs, n, sum); },
                       sum, traffic));
  }
  const double through_memory = n * 4.0 / ((sort + count) * 1e3);
  const double partitioned = n * 4.0 / ((partition + count) * 1e3);
  const double through_l2 = n * 4.0 / (std::min(chunked, in_turn) * 1e3);
  std::printf(
      "rows through device memory: %.1f µs for 2^28 values, ≤ %.0f GB/s of 4-byte values; "
      "kept in the L2: ≤ %.0f GB/s (a plain read: %.0f GB/s)\n",
      sort + count, through_memory, through_l2, n * 4.0 / (read * 1e3));
  std::printf("rows partitioned, then read back: ≤ %.0f GB/s of 4-byte values\n", partitioned);
  if (argc == 3 && std::string(argv[1]) == "--json") {
    FILE* out = std::fopen(argv[2], "w");
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", argv[2]);
      return 1;
    }
    std::fprintf(
        out,
        "{\"device\": \"%s\", \"updates\": %lld, \"probes\": [\n  %s],\n \"traffic_values\": "
        "%lld, \"traffic\": [\n  %s],\n \"rows_through_memory_gb_per_s\": %.1f, "
        "\"rows_kept_in_l2_gb_per_s\": %.1f, \"rows_partitioned_gb_per_s\": %.1f}\n",
        props.name, kUpdates, lines.c_str(), kTrafficValues, traffic.c_str(), through_memory,
        through_l2, partitioned);
    std::fclose(out);
  }
  cudaFree(values);
  cudaFree(rows);
  cudaFree(counts);
  cudaFree(sum);
  return 0;
}
