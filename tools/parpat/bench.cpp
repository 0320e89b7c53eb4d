// parpat bench [PATTERN...] [--quick] [--sizes N...] [--variant V...] [--timing auto|launch|graph]
// [--json OUT] [--markdown]; parpat bench io [--io-mib N] [--io-dir DIR]: the CLI end to end on
// files (bench_io.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "bench.hpp"
#include "commands.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/registry.hpp"

namespace parpat::cli {

// bench_io.cpp: `parpat bench io`, which times whole parpat processes rather than patterns.
void run_bench_io(const CommonOptions& common, std::int64_t mib, std::string dir,
                  const std::string& json_out, bool numpy);

namespace {

// Every pattern's bench driver, bench::bench_<pattern>, in the order of runtime/patterns.def.
using Driver = std::vector<bench::BenchRow> (*)(const Device&, const bench::BenchOptions&,
                                                const Peaks&);
const std::vector<std::pair<std::string, Driver>>& drivers() {
  static const std::vector<std::pair<std::string, Driver>> all = {
#define PARPAT_PATTERN(name) {#name, &bench::bench_##name},
#include "runtime/patterns.def"
#undef PARPAT_PATTERN
  };
  return all;
}

Driver find_driver(const std::string& pattern) {
  std::string known;
  for (const auto& [name, driver] : drivers()) {
    if (name == pattern) return driver;
    known += (known.empty() ? "" : ", ") + name;
  }
  throw_invalid("unknown pattern '" + pattern + "' (expected one of " + known + ")");
}

// Everything the command line asked for, checked before any measurement, so that a mistake
// costs one line on stderr and no time.
void check_request(const Device& device, const std::vector<std::string>& patterns,
                   const bench::BenchOptions& b) {
  if (b.reps < 20) throw_invalid("--reps must be at least 20 (median of 20 runs)");
  for (const auto& p : patterns)
    find_driver(p);
  // An element takes up to 8 bytes; the input must fit the device's memory.
  const std::uint64_t memory = device.info().global_memory;
  const std::int64_t most =
      memory > 0 ? static_cast<std::int64_t>(std::min<std::uint64_t>(memory / 8, 1ull << 40))
                 : std::int64_t{1} << 40;
  for (auto n : b.sizes)
    if (n <= 0 || n > most)
      throw_invalid("--sizes " + std::to_string(n) + ": sizes run from 1 to " +
                    std::to_string(most) + " elements on " + device.label());
  for (const auto& name : b.dtypes)
    parse_dtype(name);
  for (auto bins : b.bins)
    if (bins <= 0 || bins > kMaxHistogramBins)
      throw_invalid("--bins " + std::to_string(bins) + ": bin counts run from 1 to " +
                    std::to_string(kMaxHistogramBins));
  // A list of variants may name those of other backends (one list for several machines, or a
  // backend this build lacks), but at least one of them must run here.
  if (b.variants.empty()) return;
  std::string names;
  for (const auto& name : b.variants) {
    names += (names.empty() ? "" : " ") + name;
    for (const auto& v : list_variants())
      if (v.name == name && v.backend == backend_name(device.backend()) &&
          std::find(patterns.begin(), patterns.end(), v.pattern) != patterns.end())
        return;
  }
  throw_invalid("--variant " + names + ": none of these runs on " +
                std::string(backend_name(device.backend())) +
                " for the patterns timed (see `parpat list`)");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "time every variant against the vendor baseline");
  struct Opts {
    std::vector<std::string> patterns;
    bench::BenchOptions bench;
    std::string json_out;
    bool markdown = false;
    std::string backend;
    int device = -1;
    bool verbose = false;
    std::int64_t io_mib = 1024;
    std::string io_dir;
    bool io_no_numpy = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("patterns", o->patterns,
                  "patterns to time (default: all), or io alone: the CLI end to end on files "
                  "beside numpy");
  cmd->add_flag("--quick", o->bench.quick, "a short sweep: a few sizes, float32 only");
  cmd->add_option("--sizes", o->bench.sizes, "element counts to time");
  cmd->add_option("--variant", o->bench.variants, "only these variants");
  cmd->add_option("--dtype", o->bench.dtypes, "only these element types");
  cmd->add_option("--axis", o->bench.axes,
                  "reduce: only these axes (all: the 1-D sizes; rows, cols: the square matrix)")
      ->check(CLI::IsMember({"all", "rows", "cols"}));
  cmd->add_option("--op", o->bench.ops, "reduce: only these ops");
  cmd->add_option("--bins", o->bench.bins, "histogram bin counts to time");
  cmd->add_option("--reps", o->bench.reps, "timed runs per case (median; at least 20)");
  cmd->add_option("--timing", o->bench.timing,
                  "auto: cases whose single launch is short are timed as graph replays; launch: "
                  "one launch at a time; graph: always graph replays (CUDA)")
      ->check(CLI::IsMember({"auto", "launch", "graph"}));
  cmd->add_option("--graph-launches", o->bench.graph_launches,
                  "launches captured per graph when timing by graph replays")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--graph-below-us", o->bench.graph_below_us,
                  "auto timing: a single launch shorter than this (µs) switches to graph replays")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--json", o->json_out, "write all rows as JSON to this file");
  cmd->add_flag("--markdown", o->markdown, "print markdown tables");
  cmd->add_option("--backend", o->backend, "cpu, cuda or opencl (default: the fastest present)");
  cmd->add_option("--device", o->device, "device index within the backend")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--verbose", o->verbose, "print OpenCL / NVRTC build logs");
  std::vector<CLI::Option*> io_options = {
      cmd->add_option("--io-mib", o->io_mib,
                      "io: size of the float32 .npy file, MiB (default 1024)"),
      cmd->add_option("--io-dir", o->io_dir, "io: folder for the files (default $TMPDIR or /tmp)"),
      cmd->add_flag("--io-no-numpy", o->io_no_numpy,
                    "io: leave numpy out (its histogram of a large file takes minutes)")};
  cmd->callback([o, cmd, io_options] {
    CommonOptions common;
    common.backend = o->backend;
    common.device = o->device;
    common.verbose = o->verbose;
    const bool io = std::find(o->patterns.begin(), o->patterns.end(), "io") != o->patterns.end();
    if (io) {
      if (o->patterns.size() > 1) throw_invalid("io is timed alone: `parpat bench io`");
      // The pattern sweeps' options mean nothing to it: refused rather than ignored.
      const std::vector<std::string> shared = {"--backend",  "--device",      "--json",
                                               "--markdown", "--verbose",     "--io-mib",
                                               "--io-dir",   "--io-no-numpy", "patterns"};
      for (const CLI::Option* opt : cmd->get_options()) {
        if (opt->count() == 0) continue;
        bool allowed = false;
        for (const auto& name : shared)
          allowed = allowed || opt->check_name(name);
        if (!allowed) throw_invalid(opt->get_name() + " does not apply to `parpat bench io`");
      }
      run_bench_io(common, o->io_mib, o->io_dir, o->json_out, !o->io_no_numpy);
      return;
    }
    for (const CLI::Option* opt : io_options)
      if (opt->count() > 0) throw_invalid(opt->get_name() + " goes with `parpat bench io`");
    Device device = common.open_device();
    std::vector<std::string> patterns = o->patterns;
    if (patterns.empty())
      for (const auto& [name, driver] : drivers())
        patterns.push_back(name);
    check_request(device, patterns, o->bench);
    if (!o->json_out.empty() && !std::ofstream(o->json_out))
      throw_invalid("cannot write " + o->json_out);
    std::cerr << "parpat bench on " << device.label() << "\n";
    Peaks peaks = measure_peaks(device);
    std::cerr << fmt::format("  measured peaks: read {:.1f} GB/s, FP32 FMA {:.1f} GFLOPS, {}\n",
                             peaks.read_gbps, peaks.fma_gflops, launch_floor(peaks));
    // The JSON is written again after every row, so a run cut off midway keeps what it measured;
    // the last write, after every pattern, holds the baselines timed at the end of a sweep too.
    auto write_json = [&](const std::vector<bench::BenchRow>& rows) {
      if (o->json_out.empty()) return;
      nlohmann::json j = {
          {"device", device.info().name},   {"backend", backend_name(device.backend())},
          {"read_gbps", peaks.read_gbps},   {"fma_gflops", peaks.fma_gflops},
          {"launch_us", peaks.launch_us},   {"graph_launch_us", peaks.graph_launch_us},
          {"rows", nlohmann::json::array()}};
      for (auto& r : rows)
        j["rows"].push_back(bench::to_json(r));
      std::ofstream json_file(o->json_out);
      if (!(json_file << j.dump(1) << "\n" << std::flush))
        throw_invalid("cannot write " + o->json_out);
    };
    std::vector<bench::BenchRow> rows, measured;
    bench::BenchOptions options = o->bench;
    options.on_row = [&](const bench::BenchRow& r) {
      measured.push_back(r);
      write_json(measured);
    };
    for (const auto& p : patterns) {
      std::vector<bench::BenchRow> r = find_driver(p)(device, options, peaks);
      rows.insert(rows.end(), r.begin(), r.end());
      measured = rows;
    }
    std::size_t verified = 0;
    for (auto& r : rows)
      verified += r.verified;
    write_json(rows);
    std::cout << fmt::format(
        "parpat bench on {} — read peak {:.1f} GB/s, FP32 FMA {:.1f} GFLOPS, {}\n\n",
        device.label(), peaks.read_gbps, peaks.fma_gflops, launch_floor(peaks));
    // Pairwise rows are rates of arithmetic, not of bytes: they get their own table.
    std::vector<bench::BenchRow> pairwise_rows, other_rows;
    for (auto& r : rows)
      (r.pattern == "pairwise" ? pairwise_rows : other_rows).push_back(r);
    if (!other_rows.empty()) std::cout << bench::markdown_table(other_rows);
    if (!pairwise_rows.empty()) {
      if (!other_rows.empty()) std::cout << "\n";
      std::cout << bench::pairwise_markdown_table(pairwise_rows);
    }
    std::cout << fmt::format("\n{} of {} results verified against the CPU reference\n", verified,
                             rows.size());
    if (verified != rows.size())
      throw Error(ErrorKind::backend, "some results failed verification");
  });
}

}  // namespace parpat::cli
