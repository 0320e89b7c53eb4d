// parpat/barrier.hpp — the grid-wide barrier pattern: the classic stencil benchmark, the
// latency sweep and the early-release stress test, for every barrier method on a device.
//
// Methods (registry variants, identical names on every backend): `atomic-all`,
// `representative`, `flags`, `flip` (the default), `hierarchical` (CUDA, Hopper clusters),
// `cg` (CUDA cooperative groups) and `relaunch` (one kernel per phase; the only method on
// devices without independent forward progress of groups, such as PoCL and the CPU).
// For barriers inside users' own kernels see parpat/cuda/grid_barrier.cuh and
// parpat/opencl/grid_barrier.cl.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "parpat/device.hpp"

namespace parpat {

// The methods of `device`'s backend, in registry order.
std::vector<std::string> barrier_methods(const Device& device);

// The largest number of groups of `group_size` work-items that `method` can synchronise on
// `device` (all of them resident at once). Throws Error(unsupported) with the reason when the
// method cannot run there at all (a spin barrier on a device whose groups do not progress
// independently, a device without cooperative launch, a platform that failed validation).
int barrier_max_groups(const Device& device, const std::string& method, int group_size);

// For users' own OpenCL kernels built on parpat/opencl/grid_barrier.cl: the largest number of
// groups of `group_size` work-items, each using `local_bytes` of local memory, that can be
// resident at once on OpenCL `device`. It is an occupancy estimate (assuming at most 64 registers
// per work-item on NVIDIA, one group per compute unit elsewhere) validated once per device by
// the flip stress test at that count. Throws Error(unsupported) on devices whose groups do not
// progress independently (PoCL, CPU drivers: use one launch per phase there) or where the
// validation fails, Error(invalid_argument) for a device of another backend.
int opencl_grid_barrier_groups(const Device& device, int group_size, std::size_t local_bytes = 0);

// The text of parpat/opencl/grid_barrier.cl, to prepend to the source of users' own OpenCL
// programs. Throws Error(unsupported) in a build without OpenCL.
const char* opencl_grid_barrier_source();

// The classic stencil: `work_items` elements, all 1; each step t = a[i] + a[(i+1) mod N] +
// a[(i+2) mod N]; barrier; a[i] = t; barrier. Elements are uint32 and wrap, so after s steps
// every element must equal 3^s mod 2^32.
struct StencilOptions {
  std::string method;  // empty: the backend's default
  int work_items = 2048;
  int group_size = 64;
  std::int64_t steps = 500000;
};

struct StencilResult {
  std::string method;
  int work_items = 0, group_size = 0, groups = 0;
  std::int64_t steps = 0;
  bool all_equal = false;       // every element equal at the end (the classic success test)
  bool correct = false;         // and equal to 3^steps mod 2^32
  bool barrier_failed = false;  // a bounded spin timed out
  std::uint32_t value = 0;      // element 0 at the end
  double time_ms = 0;           // device time of the whole run
};

// Throws Error(invalid_argument) when work_items is not a positive multiple of group_size, the
// group is larger than the device allows, or the groups exceed barrier_max_groups().
StencilResult barrier_stencil(const Device& device, const StencilOptions& options);

// Each group writes its round number before the barrier and, after it, every work-item checks
// the slots of its neighbour group and of the group half-way round the grid: they must hold
// this round or the next. Anything else is an early release.
struct StressOptions {
  std::string method;
  int groups = 0;  // 0: two per compute unit (capped by barrier_max_groups)
  int group_size = 128;
  std::int64_t rounds = 100000;
};

struct StressResult {
  std::string method;
  int groups = 0, group_size = 0;
  std::int64_t rounds = 0;
  std::uint64_t early_releases = 0;  // must be 0
  bool barrier_failed = false;       // a bounded spin timed out (counts as a failure)
  double time_ms = 0;
  bool passed() const { return early_releases == 0 && !barrier_failed; }
};

StressResult barrier_stress(const Device& device, const StressOptions& options);

// Latency of one barrier: (T(K barriers) − T(0 barriers)) / K with `groups` groups of
// `group_size`, each time the median of `reps` runs.
struct LatencyResult {
  std::string method;
  int groups = 0, group_size = 0, barriers = 0;
  // Median device time of a launch that passes `barriers` barriers and of the same launch with
  // none; us_per_barrier is their difference per barrier (0 when noise makes it negative).
  double barriers_ms = 0, empty_ms = 0;
  double us_per_barrier = 0;
  bool barrier_failed = false;
};

LatencyResult barrier_latency(const Device& device, const std::string& method, int groups,
                              int group_size, int barriers = 2000, int reps = 20);

}  // namespace parpat
