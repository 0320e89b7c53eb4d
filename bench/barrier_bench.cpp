// `parpat bench barrier`: every barrier method the device can run, beside cooperative groups'
// grid.sync (`cg`, CUDA) measured in the same run. Two kinds of rows: the latency of one barrier,
// (T(K) − T(0)) / K, at 1–16 groups per compute unit × groups of 128 and 256 (up to the
// occupancy limit), and the classic stencil (2048 work-items; --sizes sets the step count) at
// group sizes 1024, 64 and 32, verified against 3^steps. Methods refused on the device (spin
// barriers on PoCL, say) are named on stderr and skipped.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "bench.hpp"
#include "parpat/barrier.hpp"
#include "parpat/error.hpp"

namespace parpat::bench {

namespace {

BenchRow make_row(const Device& device, const std::string& method, const std::string& op,
                  const std::string& shape) {
  BenchRow row;
  row.pattern = "barrier";
  row.backend = backend_name(device.backend());
  row.device = device.info().name;
  row.variant = method;
  row.dtype = "-";
  row.op = op;
  row.shape = shape;
  return row;
}

}  // namespace

std::vector<BenchRow> bench_barrier(const Device& device, const BenchOptions& options,
                                    const Peaks& peaks) {
  std::vector<std::string> methods;
  for (const auto& m : barrier_methods(device)) {
    if (!options.variants.empty() &&
        std::find(options.variants.begin(), options.variants.end(), m) == options.variants.end())
      continue;
    try {
      barrier_max_groups(device, m, 128);
      methods.push_back(m);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unsupported) throw;
      std::cerr << "  barrier " << m << " skipped: " << e.what() << "\n";
    }
  }
  bool have_cg = false;
  for (const auto& m : barrier_methods(device))
    have_cg = have_cg || m == "cg";
  bool gpu = device.backend() != Backend::cpu && device.info().independent_groups;
  int barriers = gpu ? (options.quick ? 500 : 2000) : 50;
  int units = std::max(1, device.info().compute_units);
  std::vector<int> per_unit =
      options.quick ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 4, 8, 16};
  std::vector<BenchRow> rows;

  for (int group : {128, 256}) {
    if (device.backend() != Backend::cpu && group > device.info().max_group_size) continue;
    for (int per : per_unit) {
      int groups = per * units;
      double cg_ms = 0;
      if (have_cg && groups <= barrier_max_groups(device, "cg", group))
        cg_ms =
            barrier_latency(device, "cg", groups, group, barriers, options.reps).us_per_barrier *
            1e-3;
      for (const auto& m : methods) {
        if (groups > barrier_max_groups(device, m, group)) continue;
        LatencyResult r = barrier_latency(device, m, groups, group, barriers, options.reps);
        BenchRow row =
            make_row(device, m, "latency", fmt::format("{}×{} groups of {}", per, units, group));
        row.time_ms = r.us_per_barrier * 1e-3;
        row.baseline = "cg";
        row.baseline_ms = m == "cg" ? 0 : cg_ms;
        row.verified = !r.barrier_failed;
        if (r.barrier_failed) row.note = "spin timed out";
        rows.push_back(row);
        if (options.on_row) options.on_row(row);
      }
    }
  }

  std::int64_t steps = !options.sizes.empty() ? options.sizes.front()
                       : gpu                  ? (options.quick ? 50000 : 500000)
                                              : 200;
  for (int group : {1024, 64, 32}) {
    if (device.backend() != Backend::cpu && group > device.info().max_group_size) continue;
    StencilOptions so;
    so.group_size = group;
    so.steps = steps;
    double cg_ms = 0;
    if (have_cg) {
      so.method = "cg";
      cg_ms = barrier_stencil(device, so).time_ms;
    }
    for (const auto& m : methods) {
      so.method = m;
      StencilResult r = barrier_stencil(device, so);
      BenchRow row = make_row(device, m, "stencil",
                              fmt::format("2048 items, groups of {}, {} steps", group, steps));
      row.time_ms = r.time_ms;
      row.baseline = "cg";
      row.baseline_ms = m == "cg" ? 0 : cg_ms;
      row.verified = r.correct;
      if (!r.correct) row.note = r.barrier_failed ? "spin timed out" : "wrong stencil result";
      rows.push_back(row);
      if (options.on_row) options.on_row(row);
    }
  }
  (void)peaks;
  return rows;
}

BarrierFloor measure_barrier_floor(const Device& device) {
#ifdef PARPAT_HAVE_CUDA
  if (device.backend() == Backend::cuda) return measure_barrier_floor_cuda(device);
#endif
  return {};
}

}  // namespace parpat::bench
