// parpat info [--measure] [--backend B] [--json]: every device of every backend built in (or of
// one backend). --measure adds each device's peaks and floors, its pinned host → device copy rate,
// and once for the machine the rate of reading a page-cached file by 1 and by N threads.
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "bench.hpp"
#include "commands.hpp"
#include "parpat/error.hpp"
#include "parpat/measure.hpp"

namespace parpat::cli {

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "list every device: backend, name, limits");
  struct Opts {
    bool measure = false;
    bool json = false;
    std::string backend;
  };
  auto opts = std::make_shared<Opts>();
  cmd->add_flag(
      "--measure", opts->measure,
      "also measure read bandwidth, FP32 FMA rate, launch floor, host → device copies and "
      "page-cached file reads");
  cmd->add_flag("--json", opts->json, "print one JSON object");
  cmd->add_option("--backend", opts->backend,
                  "only the devices of this backend (cpu, cuda, opencl)");
  cmd->callback([opts] {
    std::optional<Backend> only;
    if (!opts->backend.empty()) only = parse_backend(opts->backend);
    nlohmann::json out = nlohmann::json::array();
    std::optional<HostRates> host;  // the page-cache rates are the machine's: printed once
    for (Backend b : {Backend::cuda, Backend::opencl, Backend::cpu}) {
      if (only && b != *only) continue;
      if (!backend_built(b) && !opts->json) {
        std::cout << backend_name(b) << ": not built in\n";
        continue;
      }
    }
    auto devices = list_devices();
    for (const auto& d : devices) {
      if (only && d.backend != *only) continue;
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
        host = measure_host_rates(device);
        if (host->h2d_pinned_gbps > 0) {
          j["h2d_pinned_gbps"] = host->h2d_pinned_gbps;
          line += fmt::format("\n    host → device copy from staging memory {:.1f} GB/s",
                              host->h2d_pinned_gbps);
        }
      }
      out.push_back(j);
      if (!opts->json) std::cout << line << "\n";
    }
    if (host && !opts->json) {
      if (host->page_cache_read_gbps_1 > 0)
        std::cout << fmt::format(
            "host: page-cached file read {:.1f} GB/s by 1 thread, {:.1f} GB/s by {} threads\n",
            host->page_cache_read_gbps_1, host->page_cache_read_gbps_n, host->threads);
      else
        std::cout << "host: page-cached file read not measured (no temporary file could be "
                     "written in $TMPDIR or /tmp)\n";
    }
    if (opts->json) {
      nlohmann::json doc = {{"devices", out}};
      if (host)
        doc["host"] = {{"page_cache_read_gbps_1", host->page_cache_read_gbps_1},
                       {"page_cache_read_gbps_n", host->page_cache_read_gbps_n},
                       {"threads", host->threads}};
      std::cout << doc.dump() << "\n";
    }
  });
}

}  // namespace parpat::cli
