// Grid barriers on CUDA. Each method is a small device-side policy with a sync() that every
// thread of the grid calls; three kernels (the classic stencil, the early-release stress test
// and an empty loop of barriers for latency) are templates over the policy. Every spin goes
// through bounded_spin (parpat/cuda/grid_barrier.cuh): past its bound it sets the error word
// and the kernel stops, so no method can hang. All spinning methods are launched cooperatively
// (cudaLaunchKernelEx with the cooperative attribute), so the driver guarantees that every
// block is resident, and the grid is first checked against the occupancy of the very kernel.
//
// The classic methods keep their idea and lose their races:
// - atomic-all and representative used to reset the counter to 0 once everyone had arrived.
//   A fast block that leaves and arrives at the next barrier before the reset loses its
//   increment (everybody then waits forever), and a block that reads the counter after the
//   reset never sees the full count. Here the counter only grows: barrier k waits for
//   k · participants arrivals (wrap-around compared as a signed difference). Knowing its
//   target, a waiter arrives with a reduction that returns nothing (red.release) and starts
//   polling at once.
// - flags (Xiao & Feng) published and read its flags with plain stores and loads and no
//   fences, so data written before the barrier was not guaranteed to be visible after it, and
//   implementations that cleared the flags for reuse raced with the next barrier. Here the
//   flags hold the barrier number (monotonic, never cleared) and are written with release
//   stores and read with acquire loads.
// `flip` is the one-word barrier of the public header; `hierarchical` first meets in the
// thread-block cluster's hardware barrier (barrier.cluster arrive.release / wait.acquire) and
// then sends one arrival per cluster to the flip word. `cg` is cooperative groups' grid.sync
// and `relaunch` a kernel boundary per phase.
#include <cooperative_groups.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "barrier/barrier_internal.hpp"
#include "parpat/array.hpp"
#include "parpat/cuda/grid_barrier.cuh"
#include "runtime/cuda/cuda_device.hpp"
#include "runtime/tuning.hpp"

namespace parpat::detail {

namespace {

namespace cg = cooperative_groups;
namespace gb = parpat::cuda::detail;
using parpat::cuda::GridBarrierState;

constexpr long long kTimeoutCycles = parpat::cuda::GridBarrier::kDefaultTimeoutCycles;

__device__ inline void store_release(unsigned int* p, unsigned int v) {
  ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device>(*p).store(
      v, ::cuda::memory_order_release);
}

// An arrival that needs no answer: the waiter knows its target, so no round trip for a return
// value delays its first poll.
__device__ inline void red_add_release(unsigned int* p, unsigned int v) {
  asm volatile("red.release.gpu.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ inline void store_relaxed(unsigned int* p, unsigned int v) {
  ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device>(*p).store(
      v, ::cuda::memory_order_relaxed);
}

// Whether a monotonic counter has reached `target`, across wrap-around of 32 bits.
__device__ inline bool reached(unsigned int value, unsigned int target) {
  return static_cast<int>(value - target) >= 0;
}

// The workspace: word 0 the arrival word or counter, word 1 the error word, then the flags
// method's `in` and `out` arrays (one word per block each).
struct Words {
  unsigned int* base;
  __device__ GridBarrierState* state() const { return reinterpret_cast<GridBarrierState*>(base); }
  __device__ unsigned int* counter() const { return base; }
  __device__ unsigned int* error() const { return base + 1; }
  __device__ unsigned int* in() const { return base + 2; }
  __device__ unsigned int* out() const { return base + 2 + gridDim.x; }
};

std::size_t workspace_words(int groups) {
  return 2 + 2 * static_cast<std::size_t>(groups);
}

// Every thread is a participant: one release increment each, then an acquire spin.
struct AtomicAllBarrier {
  Words words;
  unsigned int epoch = 0;
  __device__ bool sync() {
    unsigned int participants = gridDim.x * blockDim.x;
    unsigned int target = ++epoch * participants;
    unsigned int* counter = words.counter();
    red_add_release(counter, 1u);
    return gb::bounded_spin([&] { return reached(gb::load_acquire(counter), target); },
                            words.error(), kTimeoutCycles);
  }
};

// One thread per block arrives; the block's other threads wait at __syncthreads.
struct RepresentativeBarrier {
  Words words;
  unsigned int epoch = 0;
  __device__ bool sync() {
    __syncthreads();
    ++epoch;
    bool ok = true;
    if (threadIdx.x == 0) {
      unsigned int target = epoch * gridDim.x;
      unsigned int* counter = words.counter();
      red_add_release(counter, 1u);
      ok = gb::bounded_spin([&] { return reached(gb::load_acquire(counter), target); },
                            words.error(), kTimeoutCycles);
    }
    return __syncthreads_and(ok) != 0;
  }
};

// Xiao & Feng: block b raises in[b]; block 0's threads wait for every in[], meet, and raise
// every out[]; block b waits for out[b]. No atomics, no contended word.
struct FlagsBarrier {
  Words words;
  unsigned int epoch = 0;
  __device__ bool sync() {
    __syncthreads();
    ++epoch;
    bool ok = true;
    if (blockIdx.x == 0) {
      for (unsigned int b = threadIdx.x + 1; ok && b < gridDim.x; b += blockDim.x) {
        unsigned int* flag = words.in() + b;
        ok = gb::bounded_spin([&] { return reached(gb::load_acquire(flag), epoch); }, words.error(),
                              kTimeoutCycles);
      }
      ok = __syncthreads_and(ok) != 0;
      for (unsigned int b = threadIdx.x + 1; ok && b < gridDim.x; b += blockDim.x)
        store_release(words.out() + b, epoch);
      return ok;
    }
    if (threadIdx.x == 0) {
      store_release(words.in() + blockIdx.x, epoch);
      unsigned int* flag = words.out() + blockIdx.x;
      ok = gb::bounded_spin([&] { return reached(gb::load_acquire(flag), epoch); }, words.error(),
                            kTimeoutCycles);
    }
    return __syncthreads_and(ok) != 0;
  }
};

struct FlipBarrier {
  Words words;
  __device__ bool sync() { return parpat::cuda::GridBarrier(words.state(), kTimeoutCycles).sync(); }
};

struct CgBarrier {
  Words words;
  __device__ bool sync() {
    cg::this_grid().sync();
    return true;
  }
};

// The cluster's blocks meet in hardware; block rank 0 of each cluster then arrives at the flip
// word for the whole cluster, and the cluster meets again to hear the outcome. The outcome
// travels through distributed shared memory of rank 0 so that all blocks of a cluster leave
// with the same answer (a block that stopped early would leave the others in the hardware
// barrier, which has no bound). Rank 0 keeps the word's generation bit in a register (read once,
// at the first barrier, before its first arrival, when the bit cannot flip yet), so its arrival
// is a fire-and-forget reduction and its poll starts at once instead of after the round trip
// of an atomic's return value: the last arriver, which sets the pace, saves that round trip.
struct HierarchicalBarrier {
  static constexpr unsigned int kUnknownGeneration = 1u;  // a real generation is 0 or bit 31
  Words words;
  unsigned int generation = kUnknownGeneration;
  __device__ bool sync() {
    __shared__ unsigned int outcome;
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
      unsigned int* word = &words.state()->arrive;
      if (generation == kUnknownGeneration) generation = gb::load_relaxed(word) & 0x80000000u;
      unsigned int clusters = gridDim.x / cluster.num_blocks();
      red_add_release(word, blockIdx.x == 0 ? 0x80000000u - (clusters - 1u) : 1u);
      generation ^= 0x80000000u;
      unsigned int expected = generation;
      outcome = gb::bounded_spin([&] { return (gb::load_acquire(word) & 0x80000000u) == expected; },
                                 words.error(), kTimeoutCycles)
                    ? 1u
                    : 0u;
    }
    cluster.sync();
    return *cluster.map_shared_rank(&outcome, 0) != 0;
  }
};

template <class Barrier>
__global__ void stencil_kernel(Words words, unsigned int* a, unsigned int n, long long steps) {
  Barrier barrier{words};
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int right = i + 1 < n ? i + 1 : i + 1 - n;
  unsigned int right2 = i + 2 < n ? i + 2 : i + 2 - n;
  for (long long s = 0; s < steps; ++s) {
    unsigned int t = a[i] + a[right] + a[right2];
    if (!barrier.sync()) return;
    a[i] = t;
    if (!barrier.sync()) return;
  }
}

// The last thread of each block publishes the round (not thread 0, which arrives for the block
// in most methods, so the barrier must also publish its block's other threads' writes); after
// the barrier every thread checks the block after it and the block half-way round, which must
// hold this round or the next.
template <class Barrier>
__global__ void stress_kernel(Words words, unsigned int* slots, unsigned long long* early,
                              long long rounds) {
  Barrier barrier{words};
  unsigned int next = (blockIdx.x + 1) % gridDim.x;
  unsigned int far = (blockIdx.x + gridDim.x / 2) % gridDim.x;
  unsigned long long seen = 0;
  for (long long r = 1; r <= rounds; ++r) {
    unsigned int round = static_cast<unsigned int>(r);
    if (threadIdx.x == blockDim.x - 1) store_relaxed(slots + blockIdx.x, round);
    if (!barrier.sync()) break;
    seen += (gb::load_relaxed(slots + next) - round > 1u) ? 1 : 0;
    seen += (gb::load_relaxed(slots + far) - round > 1u) ? 1 : 0;
  }
  if (seen) atomicAdd(early, seen);
}

template <class Barrier>
__global__ void latency_kernel(Words words, int barriers) {
  Barrier barrier{words};
  for (int k = 0; k < barriers; ++k)
    if (!barrier.sync()) return;
}

__global__ void stencil_step(const unsigned int* a, unsigned int* b, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int right = i + 1 < n ? i + 1 : i + 1 - n;
  unsigned int right2 = i + 2 < n ? i + 2 : i + 2 - n;
  b[i] = a[i] + a[right] + a[right2];
}

__global__ void stress_publish(unsigned int* slots, unsigned int round) {
  if (threadIdx.x == 0) slots[blockIdx.x] = round;
}

__global__ void stress_check(const unsigned int* slots, unsigned int round,
                             unsigned long long* early) {
  unsigned int next = (blockIdx.x + 1) % gridDim.x;
  unsigned int far = (blockIdx.x + gridDim.x / 2) % gridDim.x;
  unsigned long long seen = (slots[next] != round ? 1 : 0) + (slots[far] != round ? 1 : 0);
  if (seen) atomicAdd(early, seen);
}

__global__ void empty_kernel() {}

// ---------------------------------------------------------------------------------------------
// Host side.

// The cluster size for `groups` blocks: the largest power of two up to the tuned maximum that
// divides the grid.
int cluster_size(const DeviceInfo& info, int groups) {
  int size = std::max(1, tuning(info, "barrier.hierarchical.cluster", 8));
  while (size > 1 && groups % size != 0)
    size /= 2;
  return size;
}

// Whether cooperative and cluster launch combine on this driver: -1 unknown, 0 no, 1 yes.
std::atomic<int> cooperative_clusters{-1};

cudaLaunchConfig_t launch_config(CudaDevice& cuda, int groups, int group_size, int cluster,
                                 bool cooperative, cudaLaunchAttribute* attrs) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(groups);
  config.blockDim = dim3(group_size);
  config.stream = cuda.stream();
  config.attrs = attrs;
  config.numAttrs = 0;
  if (cooperative) {
    attrs[config.numAttrs].id = cudaLaunchAttributeCooperative;
    attrs[config.numAttrs].val.cooperative = 1;
    ++config.numAttrs;
  }
  if (cluster > 0) {
    attrs[config.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attrs[config.numAttrs].val.clusterDim.x = cluster;
    attrs[config.numAttrs].val.clusterDim.y = 1;
    attrs[config.numAttrs].val.clusterDim.z = 1;
    ++config.numAttrs;
  }
  return config;
}

// The largest co-resident grid of `kernel` with `group_size` threads (clustered when
// `clustered`), from the occupancy of that kernel.
template <class... Params>
int occupancy_groups(CudaDevice& cuda, void (*kernel)(Params...), int group_size, bool clustered) {
  cuda.activate();
  int per_sm = 0;
  PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, group_size, 0));
  int groups = per_sm * cuda.info().compute_units;
  if (!clustered) return groups;
  // The launch picks its cluster size from the grid, so the bound must hold for every size it
  // may pick.
  int largest_cluster = std::max(1, tuning(cuda.info(), "barrier.hierarchical.cluster", 8));
  for (int cluster = 1; cluster <= largest_cluster; cluster *= 2) {
    cudaLaunchAttribute attrs[2];
    cudaLaunchConfig_t config =
        launch_config(cuda, groups - groups % cluster, group_size, cluster, false, attrs);
    int clusters = 0;
    PARPAT_CUDA(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    groups = std::min(groups, clusters * cluster);
  }
  return groups;
}

// Launches a spinning kernel so that every block is resident: cooperatively, and for the
// hierarchical method with cluster dimensions too. Where the driver refuses cooperative and
// cluster launch together, the cluster launch alone is used: the grid was already checked
// against cudaOccupancyMaxActiveClusters, so all clusters fit at once on an otherwise idle
// device.
template <class... Params, class... Args>
void launch_resident(CudaDevice& cuda, bool clustered, int groups, int group_size,
                     void (*kernel)(Params...), Args... args) {
  cuda.activate();
  int cluster = clustered ? cluster_size(cuda.info(), groups) : 0;
  cudaLaunchAttribute attrs[2];
  bool cooperative = !clustered || cooperative_clusters.load() != 0;
  cudaLaunchConfig_t config = launch_config(cuda, groups, group_size, cluster, cooperative, attrs);
  cudaError_t status = cudaLaunchKernelEx(&config, kernel, args...);
  if (clustered && cooperative) {
    if (status == cudaSuccess) {
      cooperative_clusters.store(1);
    } else if (status != cudaErrorCooperativeLaunchTooLarge) {
      cudaGetLastError();
      cooperative_clusters.store(0);
      config = launch_config(cuda, groups, group_size, cluster, false, attrs);
      status = cudaLaunchKernelEx(&config, kernel, args...);
    }
  }
  PARPAT_CUDA(status);
  check_launch("barrier kernel");
}

enum class Method { atomic_all, representative, flags, flip, hierarchical, cg };

template <Method M>
struct PolicyOf;
template <>
struct PolicyOf<Method::atomic_all> {
  using type = AtomicAllBarrier;
};
template <>
struct PolicyOf<Method::representative> {
  using type = RepresentativeBarrier;
};
template <>
struct PolicyOf<Method::flags> {
  using type = FlagsBarrier;
};
template <>
struct PolicyOf<Method::flip> {
  using type = FlipBarrier;
};
template <>
struct PolicyOf<Method::hierarchical> {
  using type = HierarchicalBarrier;
};
template <>
struct PolicyOf<Method::cg> {
  using type = CgBarrier;
};

void require_cooperative(const Device& device) {
  if (!device.info().cooperative_launch)
    throw Error(ErrorKind::unsupported,
                device.label() +
                    " has no cooperative launch, so a grid barrier cannot be guaranteed there "
                    "(use the relaunch method)",
                "cuda", "cudaDevAttrCooperativeLaunch");
}

template <Method M>
int spin_max_groups(const Device& device, int group_size) {
  require_cooperative(device);
  using P = typename PolicyOf<M>::type;
  auto& cuda = backend_cast<CudaDevice>(device);
  if (M == Method::hierarchical && cuda.props().major < 9)
    throw Error(ErrorKind::unsupported,
                device.label() + " has no thread-block clusters (they need sm_90 or later)");
  bool clustered = M == Method::hierarchical;
  int groups = occupancy_groups(cuda, stencil_kernel<P>, group_size, clustered);
  groups = std::min(groups, occupancy_groups(cuda, stress_kernel<P>, group_size, clustered));
  groups = std::min(groups, occupancy_groups(cuda, latency_kernel<P>, group_size, clustered));
  return groups;
}

// A zeroed workspace for `groups` blocks.
struct Workspace {
  Buffer buffer;
  Workspace(const Device& device, int groups)
      : buffer(device, workspace_words(groups) * sizeof(unsigned int)) {}
  Words words() const { return Words{static_cast<unsigned int*>(buffer.handle())}; }
  void clear(CudaDevice& cuda) const {
    PARPAT_CUDA(cudaMemsetAsync(buffer.handle(), 0, buffer.bytes(), cuda.stream()));
  }
  bool failed() const {
    unsigned int error = 0;
    buffer.download(&error, sizeof error, sizeof(unsigned int));
    return error != 0;
  }
};

template <Method M>
void spin_stencil(const Device& device, int groups, int group_size, std::int64_t steps,
                  StencilResult& result) {
  using P = typename PolicyOf<M>::type;
  auto& cuda = backend_cast<CudaDevice>(device);
  unsigned int n = static_cast<unsigned int>(groups) * group_size;
  Workspace ws(device, groups);
  std::vector<unsigned int> host(n, 1u);
  Buffer a(device, n * sizeof(unsigned int));
  a.upload(host.data(), a.bytes());
  ws.clear(cuda);
  cuda.timer_start();
  launch_resident(cuda, M == Method::hierarchical, groups, group_size, stencil_kernel<P>,
                  ws.words(), static_cast<unsigned int*>(a.handle()), n,
                  static_cast<long long>(steps));
  result.time_ms = cuda.timer_stop_ms();
  result.barrier_failed = ws.failed();
  a.download(host.data(), a.bytes());
  result.value = host[0];
  result.all_equal = std::all_of(host.begin(), host.end(), [&](auto v) { return v == host[0]; });
}

template <Method M>
void spin_stress(const Device& device, int groups, int group_size, std::int64_t rounds,
                 StressResult& result) {
  using P = typename PolicyOf<M>::type;
  auto& cuda = backend_cast<CudaDevice>(device);
  Workspace ws(device, groups);
  Buffer slots(device, groups * sizeof(unsigned int)), early(device, sizeof(unsigned long long));
  PARPAT_CUDA(cudaMemsetAsync(slots.handle(), 0, slots.bytes(), cuda.stream()));
  PARPAT_CUDA(cudaMemsetAsync(early.handle(), 0, early.bytes(), cuda.stream()));
  ws.clear(cuda);
  cuda.timer_start();
  launch_resident(cuda, M == Method::hierarchical, groups, group_size, stress_kernel<P>, ws.words(),
                  static_cast<unsigned int*>(slots.handle()),
                  static_cast<unsigned long long*>(early.handle()), static_cast<long long>(rounds));
  result.time_ms = cuda.timer_stop_ms();
  result.barrier_failed = ws.failed();
  unsigned long long count = 0;
  early.download(&count, sizeof count);
  result.early_releases = count;
}

template <Method M>
double spin_barriers_ms(const Device& device, int groups, int group_size, int barriers, int reps,
                        bool& failed) {
  using P = typename PolicyOf<M>::type;
  auto& cuda = backend_cast<CudaDevice>(device);
  Workspace ws(device, groups);
  std::vector<double> times;
  for (int rep = 0; rep < reps + 2; ++rep) {
    ws.clear(cuda);
    cuda.timer_start();
    launch_resident(cuda, M == Method::hierarchical, groups, group_size, latency_kernel<P>,
                    ws.words(), barriers);
    double ms = cuda.timer_stop_ms();
    if (rep >= 2) times.push_back(ms);
  }
  failed = ws.failed();
  return median_ms(times);
}

int relaunch_max_groups(const Device&, int) {
  return kUnlimitedGroups;
}

void relaunch_stencil(const Device& device, int groups, int group_size, std::int64_t steps,
                      StencilResult& result) {
  auto& cuda = backend_cast<CudaDevice>(device);
  unsigned int n = static_cast<unsigned int>(groups) * group_size;
  std::vector<unsigned int> host(n, 1u);
  Buffer a(device, n * sizeof(unsigned int)), b(device, n * sizeof(unsigned int));
  a.upload(host.data(), a.bytes());
  auto* from = static_cast<unsigned int*>(a.handle());
  auto* to = static_cast<unsigned int*>(b.handle());
  cuda.timer_start();
  for (std::int64_t s = 0; s < steps; ++s) {
    stencil_step<<<groups, group_size, 0, cuda.stream()>>>(from, to, n);
    std::swap(from, to);
  }
  check_launch("stencil_step");
  result.time_ms = cuda.timer_stop_ms();
  cuda.download(from, 0, host.data(), n * sizeof(unsigned int));
  result.value = host[0];
  result.all_equal = std::all_of(host.begin(), host.end(), [&](auto v) { return v == host[0]; });
}

void relaunch_stress(const Device& device, int groups, int group_size, std::int64_t rounds,
                     StressResult& result) {
  auto& cuda = backend_cast<CudaDevice>(device);
  Buffer slots(device, groups * sizeof(unsigned int)), early(device, sizeof(unsigned long long));
  auto* s = static_cast<unsigned int*>(slots.handle());
  auto* e = static_cast<unsigned long long*>(early.handle());
  PARPAT_CUDA(cudaMemsetAsync(e, 0, early.bytes(), cuda.stream()));
  cuda.timer_start();
  for (std::int64_t r = 1; r <= rounds; ++r) {
    stress_publish<<<groups, group_size, 0, cuda.stream()>>>(s, static_cast<unsigned int>(r));
    stress_check<<<groups, group_size, 0, cuda.stream()>>>(s, static_cast<unsigned int>(r), e);
  }
  check_launch("stress_check");
  result.time_ms = cuda.timer_stop_ms();
  unsigned long long count = 0;
  early.download(&count, sizeof count);
  result.early_releases = count;
}

double relaunch_barriers_ms(const Device& device, int groups, int group_size, int barriers,
                            int reps, bool& failed) {
  auto& cuda = backend_cast<CudaDevice>(device);
  failed = false;
  std::vector<double> times;
  for (int rep = 0; rep < reps + 2; ++rep) {
    cuda.timer_start();
    for (int k = 0; k < barriers; ++k)
      empty_kernel<<<groups, group_size, 0, cuda.stream()>>>();
    check_launch("empty_kernel");
    double ms = cuda.timer_stop_ms();
    if (rep >= 2) times.push_back(ms);
  }
  return median_ms(times);
}

VariantInfo info(const char* name, const char* idea, const char* params, bool is_default = false) {
  VariantInfo v;
  v.pattern = "barrier";
  v.backend = "cuda";
  v.name = name;
  v.idea = idea;
  v.params = params;
  v.is_default = is_default;
  return v;
}

template <Method M>
BarrierVariant spin_variant(VariantInfo v) {
  return {std::move(v), spin_max_groups<M>, spin_stencil<M>, spin_stress<M>, spin_barriers_ms<M>};
}

}  // namespace

std::vector<BarrierVariant> cuda_barrier_variants() {
  return {
      spin_variant<Method::atomic_all>(
          info("atomic-all", "every thread adds 1 to one counter, waits for k·threads",
               "cooperative launch")),
      spin_variant<Method::representative>(
          info("representative", "one thread per block adds 1, the block waits at __syncthreads",
               "cooperative launch")),
      spin_variant<Method::flags>(
          info("flags", "Xiao & Feng: per-block in/out flags, block 0 gathers and releases",
               "cooperative launch")),
      spin_variant<Method::flip>(
          info("flip", "one word, one release atomic per block, bit-31 generation flip",
               "cooperative launch", true)),
      spin_variant<Method::hierarchical>(
          info("hierarchical", "cluster barrier in hardware, then one flip arrival per cluster",
               "cluster<=8, sm_90")),
      spin_variant<Method::cg>(
          info("cg", "cooperative groups grid.sync (baseline)", "cooperative launch")),
      {info("relaunch", "one kernel launch per phase (baseline)", ""), relaunch_max_groups,
       relaunch_stencil, relaunch_stress, relaunch_barriers_ms},
  };
}

}  // namespace parpat::detail
