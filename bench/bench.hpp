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
  std::string timing;  // how time_ms and baseline_ms were taken: "launch" or "graph×K"
};

struct BenchOptions {
  bool quick = false;
  std::vector<std::int64_t> sizes;    // element counts; empty: the pattern's default sweep
  std::vector<std::string> variants;  // empty: every variant of the backend
  std::vector<std::string> dtypes;    // empty: the pattern's default dtypes
  std::vector<std::string> axes;      // reduce: "all", "rows", "cols"; empty: the default cases
  std::vector<std::string> ops;       // reduce: op names; empty: the default ops
  std::vector<std::int64_t> bins;     // histogram bin counts; empty: the default sweep
  int reps = 20;
  // How a case is timed: "launch" (each run alone between device events), "graph" (runs
  // captured `graph_launches` at a time into one graph, replay time / graph_launches, where the
  // backend has graphs) or "auto" (graph when the case's first single launch is shorter than
  // `graph_below_us`). Every measurement of a case, baseline included, uses the same method.
  std::string timing = "auto";
  int graph_launches = 100;
  double graph_below_us = 20;
  // Called with each row as soon as it is measured (a baseline timed after the sweep, numpy's,
  // not yet beside it), so that `parpat bench --json` keeps the rows of a run cut off midway.
  std::function<void(const BenchRow&)> on_row;
};

nlohmann::json to_json(const BenchRow& r);
// A markdown table of rows; `title` becomes a heading line above it.
std::string markdown_table(const std::vector<BenchRow>& rows);

// Median device time of `run(rep)` over `reps` timed runs after `warmup` untimed ones.
double median_time_ms(const Device& device, const std::function<void(int)>& run, int reps,
                      int warmup = 3);

// Median device time of one `run(rep)` when `launches` runs (rep = warmup, warmup + 1, ...) are
// captured into one graph and the graph is replayed `reps` times: replay time / launches, which
// leaves out the launch gaps that dominate short kernels. Runs `warmup` untimed eager runs
// first (module loading, cached attributes). Returns 0 when the backend has no graphs.
double median_graph_time_ms(const Device& device, const std::function<void(int)>& run, int reps,
                            int launches, int warmup = 3);

// Times every measurement of one case (each variant and the baseline) by one method, which in
// "auto" mode the case's first measurement picks, so the comparison within a case stays fair.
class CaseTimer {
 public:
  CaseTimer(const Device& device, const BenchOptions& options)
      : device_(device), options_(options) {}
  double time_ms(const std::function<void(int)>& run);
  // "launch" or "graph×K"; empty before the first measurement.
  std::string method() const;

 private:
  enum class Method { undecided, launch, graph };
  const Device& device_;
  const BenchOptions& options_;
  Method method_ = Method::undecided;
};

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
// each requested case (0 for a case of a dtype numpy lacks: bfloat16), or an empty vector when
// python3 or numpy is missing.
std::vector<double> numpy_times(const std::string& pattern,
                                const std::vector<nlohmann::json>& cases);

// What every grid barrier pays on CUDA (zeros elsewhere): one release fence at device scope
// (fence.acq_rel.gpu, as before any arrival that publishes the block's writes) and one round trip
// of a relaxed load to the L2 cache (as every poll of a barrier word), µs each, one thread timing
// a thousand of either back to back.
struct BarrierFloor {
  double release_fence_us = 0;
  double l2_round_trip_us = 0;
};
BarrierFloor measure_barrier_floor(const Device& device);
#ifdef PARPAT_HAVE_CUDA
BarrierFloor measure_barrier_floor_cuda(const Device& device);
#endif

}  // namespace parpat::bench
