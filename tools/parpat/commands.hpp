// The parpat command line: one file per command, each adding its subcommand to the app.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "bench.hpp"
#include "parpat/device.hpp"
#include "parpat/measure.hpp"
#include "parpat/reduce.hpp"

namespace parpat::cli {

// --backend, --device, --variant, --json, --verbose: shared by the pattern commands.
struct CommonOptions {
  std::string backend;
  int device = -1;
  std::string variant;
  bool json = false;
  bool verbose = false;

  void add_to(CLI::App& app, bool with_variant = true);
  // The device asked for, or the best one present.
  Device open_device() const;
};

// A scalar as JSON: numbers as numbers, non-finite floats as "nan", "inf", "-inf".
nlohmann::json to_json(const Scalar& s);
nlohmann::json device_json(const Device& d);
// "empty launch 2.1 µs (in a graph 0.9 µs)": the launch floor of measure_peaks.
std::string launch_floor(const Peaks& p);

// "release fence … µs, L2 round trip … µs" (the barrier floor probe; CUDA only).
std::string barrier_floor(const bench::BarrierFloor& p);

void add_info_command(CLI::App& app);
void add_list_command(CLI::App& app);
void add_reduce_command(CLI::App& app);
void add_histogram_command(CLI::App& app);
void add_pairwise_command(CLI::App& app);
void add_barrier_command(CLI::App& app);
void add_bench_command(CLI::App& app);

}  // namespace parpat::cli
