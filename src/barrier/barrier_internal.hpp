// What the barrier dispatch and its backends share: the per-backend method table. The dispatch
// (barrier.cpp) validates every request (sizes, the safe group count) before a backend sees it,
// so backend code only runs launches that cannot hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "parpat/barrier.hpp"
#include "parpat/registry.hpp"
#include "runtime/variant_tables.hpp"

namespace parpat::detail {

// A method's largest group count when it has no residency limit (one launch per phase).
inline constexpr int kUnlimitedGroups = 1 << 30;

struct BarrierVariant {
  VariantInfo info;
  // The largest group count the method can synchronise with groups of `group_size`; throws
  // Error(unsupported) with the reason when the method cannot run on the device at all.
  int (*max_groups)(const Device& device, int group_size);
  // Run with `groups` already checked against max_groups(). They fill every field of the
  // result except the method name and the request echo, which the dispatch sets.
  void (*stencil)(const Device& device, int groups, int group_size, std::int64_t steps,
                  StencilResult& result);
  void (*stress)(const Device& device, int groups, int group_size, std::int64_t rounds,
                 StressResult& result);
  // Median device time (ms) of `reps` runs of a kernel doing `barriers` barriers (0 allowed);
  // sets `failed` when a spin timed out.
  double (*barriers_ms)(const Device& device, int groups, int group_size, int barriers, int reps,
                        bool& failed);
};

std::vector<BarrierVariant> cpu_barrier_variants();
std::vector<BarrierVariant> cuda_barrier_variants();
std::vector<BarrierVariant> opencl_barrier_variants();

// opencl_grid_barrier_groups() of the OpenCL backend.
int opencl_user_barrier_groups(const Device& device, int group_size, std::size_t local_bytes);

// The variant `name` of `backend` (empty: the default), or Error(invalid_argument) naming the
// ones that exist.
const BarrierVariant& find_barrier_variant(Backend backend, const std::string& name);

// 3^steps mod 2^32: every element of the stencil after `steps` steps.
std::uint32_t stencil_expected(std::int64_t steps);

// Median of a non-empty list of times.
double median_ms(std::vector<double> times);

}  // namespace parpat::detail
