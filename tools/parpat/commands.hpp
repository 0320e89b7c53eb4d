// The parpat command line: one file per command, each adding its subcommand to the app.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "bench.hpp"
#include "parpat/device.hpp"
#include "parpat/measure.hpp"
#include "parpat/reduce.hpp"
#include "parpat/stream.hpp"

namespace parpat::cli {

// --backend, --device, --variant, --json, --verbose: shared by the pattern commands.
struct CommonOptions {
  std::string backend;
  int device = -1;
  std::string variant;
  bool json = false;
  bool verbose = false;
  std::string raw_dtype;  // --dtype of the streamed commands: raw input read as this dtype

  void add_to(CLI::App& app, bool with_variant = true);
  void add_raw_dtype_to(CLI::App& app);
  // The device asked for, or the best one present.
  Device open_device() const;
  // The input, raw bytes read as --dtype when it is given.
  Source open_source(const std::string& file) const;
};

// --progress / --no-progress of the streamed commands.
struct StreamFlags {
  std::optional<bool> progress;  // unset: when stderr is a terminal

  void add_to(CLI::App& app);
  StreamOptions options() const;
};

// The input and the device of a streamed command, opened at once.
struct OpenedInput {
  Source source;
  Device device;
  double startup_ms;  // opening the device (its driver's start-up)
};
OpenedInput open_input(const CommonOptions& common, const std::string& file);
// Milliseconds since the process started (as near as static initialisation gets).
double process_ms();
// Milliseconds since `start`.
double ms_since(std::chrono::steady_clock::time_point start);
// --edges FILE (.npy or FILE.npz[:NAME]): a 1-D array of bin edges of any real dtype whose values
// float64 holds exactly (floats, integers of magnitude up to 2^53), as float64.
std::vector<double> read_edges(const std::string& path);
// wall_ms, startup_ms, read_GBps, transfer_GBps, chunks and passes.
void add_stream_json(nlohmann::json& j, const StreamStats& stats, double startup_ms);

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
void add_histogramdd_command(CLI::App& app);  // histogramdd and histogram2d
void add_pairwise_command(CLI::App& app);
void add_barrier_command(CLI::App& app);
void add_bench_command(CLI::App& app);

}  // namespace parpat::cli
