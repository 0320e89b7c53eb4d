// The barrier on the CPU: only `relaunch`. The thread pool's parallel_for returns when every
// task is done, so each call is one phase and its return is the barrier; groups are tasks.
// Spinning methods have no place here: a group that waits for another group that the pool has
// not started yet would wait forever.
#include <algorithm>
#include <chrono>
#include <vector>

#include "barrier/barrier_internal.hpp"
#include "runtime/cpu/cpu_device.hpp"

namespace parpat::detail {

namespace {

int relaunch_max_groups(const Device&, int) {
  return kUnlimitedGroups;
}

void relaunch_stencil(const Device& device, int groups, int group_size, std::int64_t steps,
                      StencilResult& result) {
  auto& cpu = backend_cast<CpuDevice>(device);
  std::size_t n = static_cast<std::size_t>(groups) * group_size;
  std::vector<std::uint32_t> a(n, 1u), b(n);
  cpu.timer_start();
  for (std::int64_t s = 0; s < steps; ++s) {
    cpu.parallel_for(groups, [&](std::int64_t g) {
      std::size_t begin = static_cast<std::size_t>(g) * group_size, end = begin + group_size;
      for (std::size_t i = begin; i < end; ++i)
        b[i] = a[i] + a[(i + 1) % n] + a[(i + 2) % n];
    });
    a.swap(b);
  }
  result.time_ms = cpu.timer_stop_ms();
  result.value = a[0];
  result.all_equal = std::all_of(a.begin(), a.end(), [&](auto v) { return v == a[0]; });
}

void relaunch_stress(const Device& device, int groups, int group_size, std::int64_t rounds,
                     StressResult& result) {
  auto& cpu = backend_cast<CpuDevice>(device);
  std::vector<std::uint32_t> slots(static_cast<std::size_t>(groups), 0u);
  std::vector<std::uint64_t> early(static_cast<std::size_t>(groups), 0u);
  cpu.timer_start();
  for (std::int64_t r = 1; r <= rounds; ++r) {
    auto round = static_cast<std::uint32_t>(r);
    cpu.parallel_for(groups, [&](std::int64_t g) { slots[g] = round; });
    cpu.parallel_for(groups, [&](std::int64_t g) {
      early[g] += (slots[(g + 1) % groups] != round) + (slots[(g + groups / 2) % groups] != round);
    });
  }
  result.time_ms = cpu.timer_stop_ms();
  result.early_releases = 0;
  for (auto e : early)
    result.early_releases += e;
}

double relaunch_barriers_ms(const Device& device, int groups, int group_size, int barriers,
                            int reps, bool& failed) {
  auto& cpu = backend_cast<CpuDevice>(device);
  failed = false;
  std::vector<double> times;
  for (int rep = 0; rep < reps; ++rep) {
    cpu.timer_start();
    for (int k = 0; k < barriers; ++k)
      cpu.parallel_for(groups, [](std::int64_t) {});
    times.push_back(cpu.timer_stop_ms());
  }
  return median_ms(times);
}

}  // namespace

std::vector<BarrierVariant> cpu_barrier_variants() {
  VariantInfo v = variant_info("barrier", Backend::cpu, "relaunch",
                               "one parallel_for per phase: its return is the barrier",
                               "groups are thread-pool tasks");
  v.is_default = true;
  return {{v, relaunch_max_groups, relaunch_stencil, relaunch_stress, relaunch_barriers_ms}};
}

}  // namespace parpat::detail
