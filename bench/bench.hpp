// The benchmark harness behind `parpat bench`: DESIGN.md §7's method (device time, warm-up,
// median of at least 20 runs, inputs rotated over at least 4× L2), one row per measured case,
// with the vendor baseline measured in the same process on the same inputs.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parpat/array.hpp"
#include "parpat/measure.hpp"

namespace parpat::bench {

struct BenchOptions {
  bool quick = false;
  std::vector<std::int64_t> sizes;    // element counts; empty: the pattern's default sweep
  std::vector<std::string> variants;  // empty: every variant of the backend
  std::vector<std::string> dtypes;    // empty: the pattern's default dtypes
  std::vector<std::int64_t> bins;     // histogram bin counts; empty: the default sweep
  int reps = 20;
};

struct BenchRow {
  std::string pattern, backend, device, variant;
  std::string dtype, op, shape;  // the case: "float32", "sum", "2^28" or "16384x16384 rows"
  double time_ms = 0;            // median device time
  double bytes = 0;              // bytes the pattern must move, once
  double gbps = 0;
  double pct_peak = 0;     // of measured read bandwidth (or FMA rate)
  std::string baseline;    // "cub", "numpy", ...
  double baseline_ms = 0;  // 0: no baseline for this case
  bool verified = false;   // result equal to the CPU reference within the contract
  std::string note;
};

nlohmann::json to_json(const BenchRow& r);
// A markdown table of rows; `title` becomes a heading line above it.
std::string markdown_table(const std::vector<BenchRow>& rows);

// Median device time of `run(rep)` over `reps` timed runs after `warmup` untimed ones.
double median_time_ms(const Device& device, const std::function<void(int)>& run, int reps,
                      int warmup = 3);

// Input copies to rotate through so the data of consecutive runs is not served from L2.
int rotation_count(const DeviceInfo& info, std::size_t bytes_per_input);

// Fills `n` elements of `dtype` with reproducible pseudo-random values of one sign (floats in
// [0, 1), integers in [0, 100)); `seed` picks the stream.
std::vector<unsigned char> random_data(DType dtype, std::int64_t n, std::uint64_t seed);

std::vector<BenchRow> bench_reduce(const Device& device, const BenchOptions& options,
                                   const Peaks& peaks);
// Barrier latency per method at 1–16 groups per compute unit × groups of 128 and 256, and the
// classic stencil, with cooperative groups' grid.sync as the baseline where CUDA has it.
std::vector<BenchRow> bench_barrier(const Device& device, const BenchOptions& options,
                                    const Peaks& peaks);

// Pairwise rows: `gbps` holds GFLOPS (product, 2 flops per pair) or billions of pairs per second
// (gaussian), `pct_peak` the % of the measured FP32 FMA rate (product), `bytes` the pairs X·Y.
std::vector<BenchRow> bench_pairwise(const Device& device, const BenchOptions& options,
                                     const Peaks& peaks);
std::string pairwise_markdown_table(const std::vector<BenchRow>& rows);

std::vector<BenchRow> bench_histogram(const Device& device, const BenchOptions& options,
                                      const Peaks& peaks);

// Runs bench/numpy_baseline.py (python3 with numpy) and returns its median milliseconds for
// each requested case, or an empty vector when python3 or numpy is missing.
std::vector<double> numpy_times(const std::string& pattern,
                                const std::vector<nlohmann::json>& cases);

}  // namespace parpat::bench
