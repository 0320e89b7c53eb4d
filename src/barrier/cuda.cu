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
//
// `flip` is the barrier of the public header parpat/cuda/grid_barrier.cuh (GridSync), which
// users' kernels get: one arrival per block (or, for blocks of one warp, one per warp and no
// __syncthreads at all), relaxed polls with one acquire fence after the flip, the clock read only
// every thousand polls; from about a hundred to 2200 arrivals a table of words in lines of their
// own, above it sub-words, poll delays, sleeps and release lines. Its layout per grid comes from
// the tuning policy (plan_grid_barrier below, flip_layout in barrier/cuda/plan.cuh), so that
// PARPAT_TUNING sweeps it without a rebuild. `hierarchical` first meets in the thread-block
// cluster's hardware barrier, then one block per cluster arrives at the flip word and polls it,
// and a second cluster barrier releases the cluster; a grid of one cluster (up to 8 blocks by
// default) needs nothing but the cluster barrier. `cg` is cooperative groups' grid.sync and
// `relaunch` a kernel boundary per phase.
#include <cooperative_groups.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "barrier/barrier_internal.hpp"
#include "barrier/cuda/check_kernels.cuh"
#include "barrier/cuda/plan.cuh"
#include "parpat/array.hpp"
#include "parpat/cuda/grid_barrier.cuh"
#include "runtime/backends.hpp"
#include "runtime/cuda/cuda_device.hpp"
#include "runtime/tuning.hpp"

namespace parpat::detail {

namespace {

template <Method M>
int spin_max_groups(const Device& device, int group_size) {
  require_cooperative(device);
  auto& cuda = backend_cast<CudaDevice>(device);
  if (M == Method::hierarchical && cuda.props().major < 9)
    throw Error(ErrorKind::unsupported,
                device.label() + " has no thread-block clusters (they need sm_90 or later)");
  bool clustered = M == Method::hierarchical;
  int groups = kUnlimitedGroups;
  for_each_barrier<M>([&](auto tag) {
    using B = typename decltype(tag)::Barrier;
    using H = typename decltype(tag)::Handle;
    groups = std::min(groups, occupancy_groups(cuda, stencil_kernel<B, H>, group_size, clustered));
    groups = std::min(groups, occupancy_groups(cuda, stress_kernel<B, H>, group_size, clustered));
    groups = std::min(groups, occupancy_groups(cuda, latency_kernel<B, H>, group_size, clustered));
  });
  return groups;
}

template <Method M>
void spin_stencil(const Device& device, int groups, int group_size, std::int64_t steps,
                  StencilResult& result) {
  auto& cuda = backend_cast<CudaDevice>(device);
  unsigned int n = static_cast<unsigned int>(groups) * group_size;
  Workspace ws(device, groups, group_size, M == Method::hierarchical);
  std::vector<unsigned int> host(n, 1u);
  Buffer a(device, n * sizeof(unsigned int));
  a.upload(host.data(), a.bytes());
  ws.clear(cuda);
  with_barrier<M>(ws, [&](auto tag, auto handle) {
    using B = typename decltype(tag)::Barrier;
    cuda.timer_start();
    launch_resident(cuda, M == Method::hierarchical, groups, group_size,
                    stencil_kernel<B, decltype(handle)>, handle,
                    static_cast<unsigned int*>(a.handle()), n, static_cast<long long>(steps));
    result.time_ms = cuda.timer_stop_ms();
  });
  result.barrier_failed = ws.failed();
  a.download(host.data(), a.bytes());
  result.value = host[0];
  result.all_equal = std::all_of(host.begin(), host.end(), [&](auto v) { return v == host[0]; });
}

template <Method M>
void spin_stress(const Device& device, int groups, int group_size, std::int64_t rounds,
                 StressResult& result) {
  auto& cuda = backend_cast<CudaDevice>(device);
  Workspace ws(device, groups, group_size, M == Method::hierarchical);
  Buffer slots(device, groups * sizeof(unsigned int)), early(device, sizeof(unsigned long long));
  PARPAT_CUDA(cudaMemsetAsync(slots.handle(), 0, slots.bytes(), cuda.stream()));
  PARPAT_CUDA(cudaMemsetAsync(early.handle(), 0, early.bytes(), cuda.stream()));
  ws.clear(cuda);
  with_barrier<M>(ws, [&](auto tag, auto handle) {
    using B = typename decltype(tag)::Barrier;
    cuda.timer_start();
    launch_resident(
        cuda, M == Method::hierarchical, groups, group_size, stress_kernel<B, decltype(handle)>,
        handle, static_cast<unsigned int*>(slots.handle()),
        static_cast<unsigned long long*>(early.handle()), static_cast<long long>(rounds));
    result.time_ms = cuda.timer_stop_ms();
  });
  result.barrier_failed = ws.failed();
  unsigned long long count = 0;
  early.download(&count, sizeof count);
  result.early_releases = count;
}

template <Method M>
double spin_barriers_ms(const Device& device, int groups, int group_size, int barriers, int reps,
                        bool& failed) {
  auto& cuda = backend_cast<CudaDevice>(device);
  Workspace ws(device, groups, group_size, M == Method::hierarchical);
  std::vector<double> times;
  with_barrier<M>(ws, [&](auto tag, auto handle) {
    using B = typename decltype(tag)::Barrier;
    for (int rep = 0; rep < reps + 2; ++rep) {
      ws.clear(cuda);
      cuda.timer_start();
      launch_resident(cuda, M == Method::hierarchical, groups, group_size,
                      latency_kernel<B, decltype(handle)>, handle, barriers);
      double ms = cuda.timer_stop_ms();
      if (rep >= 2) times.push_back(ms);
    }
  });
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
  VariantInfo v = variant_info("barrier", Backend::cuda, name, idea, params);
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
          info("flip",
               "the public grid barrier (parpat/cuda/grid_barrier.cuh): generation flip, one "
               "arrival per block (per warp for blocks <= 32), relaxed polls; from 100 to 2200 "
               "arrivals the arrivals and polls spread over a table of words, above it runs of "
               "~sqrt(n) meet in sub-words first and the waiters poll copies of the generation",
               "cooperative launch", true)),
      spin_variant<Method::hierarchical>(
          info("hierarchical",
               "cluster barrier in hardware, one flip arrival and one poller per cluster, a "
               "second cluster barrier releases the cluster",
               "cluster<=8 (tuned), sm_90")),
      spin_variant<Method::cg>(
          info("cg", "cooperative groups grid.sync (baseline)", "cooperative launch")),
      {info("relaunch", "one kernel launch per phase (baseline)", ""), relaunch_max_groups,
       relaunch_stencil, relaunch_stress, relaunch_barriers_ms},
  };
}

}  // namespace parpat::detail

namespace parpat::cuda {

GridBarrierLayout plan_grid_barrier(int device, int blocks, int block_threads,
                                    GridArrivals arrivals) {
  if (blocks < 1 || block_threads < 1)
    throw Error(ErrorKind::invalid_argument,
                "a grid barrier needs at least one block of at least one thread", "cuda",
                "plan_grid_barrier");
  return parpat::detail::flip_layout(parpat::detail::tuned<parpat::detail::BarrierFlipPolicy>(
                                         parpat::detail::cuda_device_info(device)),
                                     blocks, block_threads, arrivals);
}

}  // namespace parpat::cuda
