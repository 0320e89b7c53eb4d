// parpat info [--measure] [--json]: every device of every backend built in.
#include <fmt/format.h>

#include <iostream>

#include "bench.hpp"
#include "commands.hpp"
#include "parpat/measure.hpp"

namespace parpat::cli {

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "list every device: backend, name, limits");
  struct Opts {
    bool measure = false;
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  cmd->add_flag("--measure", opts->measure, "also measure read bandwidth and FP32 FMA rate");
  cmd->add_flag("--json", opts->json, "print one JSON object");
  cmd->callback([opts] {
    nlohmann::json out = nlohmann::json::array();
    for (Backend b : {Backend::cuda, Backend::opencl, Backend::cpu}) {
      if (!backend_built(b) && !opts->json) {
        std::cout << backend_name(b) << ": not built in\n";
        continue;
      }
    }
    auto devices = list_devices();
    for (const auto& d : devices) {
      nlohmann::json j = {{"backend", backend_name(d.backend)},
                          {"index", d.index},
                          {"name", d.name},
                          {"vendor", d.vendor},
                          {"version", d.version},
                          {"architecture", d.architecture},
                          {"compute_units", d.compute_units},
                          {"global_memory", d.global_memory},
                          {"local_memory", d.local_memory},
                          {"l2_cache", d.l2_cache},
                          {"max_group_size", d.max_group_size},
                          {"fp64", d.fp64},
                          {"independent_groups", d.independent_groups}};
      std::string line = fmt::format(
          "{}:{}  {}  [{}]\n    {} compute units, {:.1f} GiB memory, {} KiB local memory, "
          "{} MiB L2, groups up to {}{}\n    {}",
          backend_name(d.backend), d.index, d.name, d.vendor, d.compute_units,
          d.global_memory / 1073741824.0, d.local_memory / 1024, d.l2_cache >> 20, d.max_group_size,
          d.independent_groups ? "" : ", groups run one after another", d.version);
      if (opts->measure) {
        Device device = Device::open(d.backend, d.index);
        Peaks p = measure_peaks(device);
        bench::BarrierFloor floor = bench::measure_barrier_floor(device);
        j["read_gbps"] = p.read_gbps;
        j["fma_gflops"] = p.fma_gflops;
        j["launch_us"] = p.launch_us;
        j["graph_launch_us"] = p.graph_launch_us;
        j["release_fence_us"] = floor.release_fence_us;
        j["l2_round_trip_us"] = floor.l2_round_trip_us;
        line += fmt::format("\n    measured: read {:.1f} GB/s, FP32 FMA {:.1f} GFLOPS, {}",
                            p.read_gbps, p.fma_gflops, launch_floor(p));
        if (floor.release_fence_us > 0) line += fmt::format(", {}", barrier_floor(floor));
      }
      out.push_back(j);
      if (!opts->json) std::cout << line << "\n";
    }
    if (opts->json) std::cout << nlohmann::json{{"devices", out}}.dump() << "\n";
  });
}

}  // namespace parpat::cli
