#include "runtime/tuning.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "parpat/error.hpp"

namespace parpat::detail {

namespace {

// How far an entry reaches, from the widest to the narrowest: every device of its backend, a
// vendor (DeviceInfo::vendor contains `match`), an architecture (DeviceInfo::architecture equals
// `match`, e.g. "sm_90"), a device (its name contains `match`, e.g. "H200"). For each key the
// narrowest entry that matches the device wins, the first of equals.
enum class Scope { any, vendor, architecture, device };

struct Entry {
  Backend backend;
  Scope scope;
  const char* match;
  const char* key;
  int value;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      // Hopper: 2048 resident threads per SM; 4 blocks of 512 keep 128 KiB of loads in flight.
      {Backend::cuda, Scope::device, "H100", "reduce.fast.block", 512},
      {Backend::cuda, Scope::device, "H100", "reduce.fast.blocks_per_cu", 4},
      {Backend::cuda, Scope::device, "H200", "reduce.fast.block", 512},
      {Backend::cuda, Scope::device, "H200", "reduce.fast.blocks_per_cu", 4},
      {Backend::cuda, Scope::any, "", "reduce.fast.block", 256},
      {Backend::cuda, Scope::any, "", "reduce.fast.blocks_per_cu", 8},
      // Small inputs are latency-bound: one block up to 64 KiB, then small blocks spread over the
      // SMs the data covers. Measured: bench/tuning/measurements.json, reduce-fast-small.
      {Backend::cuda, Scope::any, "", "reduce.fast.single_block_bytes", 65536},
      {Backend::cuda, Scope::any, "", "reduce.fast.single_block_items", 8},
      {Backend::cuda, Scope::any, "", "reduce.fast.small_block", 256},
      {Backend::cuda, Scope::any, "", "reduce.fast.small_items", 4},
      // sm_90: up to 1 MiB runs as one cluster of 16 blocks; every launch overlaps the kernel
      // before it. Measured: bench/tuning/measurements.json, reduce-fast-cluster.
      {Backend::cuda, Scope::any, "", "reduce.fast.cluster_bytes", 0},
      {Backend::cuda, Scope::architecture, "sm_90", "reduce.fast.cluster_bytes", 1 << 20},
      {Backend::cuda, Scope::any, "", "reduce.fast.cluster_size", 16},
      {Backend::cuda, Scope::any, "", "reduce.fast.overlap_launch", 1},
      // Started early by the overlap, the small forms prefetch their first loads into L2. Measured:
      // bench/tuning/measurements.json, reduce-fast-prefetch.
      {Backend::cuda, Scope::any, "", "reduce.fast.prefetch", 1},
      // Axis rows: one block of 256 per row (0), or n resident blocks per SM striding over rows.
      // Measured: bench/tuning/measurements.json, reduce-fast-rows.
      {Backend::cuda, Scope::any, "", "reduce.fast.rows_blocks_per_cu", 0},
      {Backend::cuda, Scope::any, "", "reduce.tree.block", 256},
      {Backend::cuda, Scope::any, "", "reduce.serial.items", 64},
      {Backend::cuda, Scope::any, "", "reduce.serial.block", 256},
      {Backend::cuda, Scope::any, "", "reduce.gridstride.block", 256},
      {Backend::cuda, Scope::any, "", "reduce.gridstride.blocks_per_cu", 8},
      {Backend::cuda, Scope::any, "", "reduce.atomic.block", 256},
      {Backend::cuda, Scope::any, "", "reduce.atomic.blocks_per_cu", 8},
      // NVIDIA's OpenCL names the device as CUDA does ("NVIDIA H100 80GB HBM3").
      {Backend::opencl, Scope::device, "H100", "reduce.fast.block", 512},
      {Backend::opencl, Scope::device, "H100", "reduce.fast.blocks_per_cu", 4},
      // Arg ops take 84 registers on NVIDIA OpenCL: one group of 512 per compute unit. Measured:
      // bench/tuning/measurements.json, reduce-opencl-arg-grid.
      {Backend::opencl, Scope::device, "H100", "reduce.fast.arg_blocks_per_cu", 1},
      {Backend::opencl, Scope::device, "H200", "reduce.fast.block", 512},
      {Backend::opencl, Scope::device, "H200", "reduce.fast.blocks_per_cu", 4},
      {Backend::opencl, Scope::device, "H200", "reduce.fast.arg_blocks_per_cu", 1},
      {Backend::opencl, Scope::any, "", "reduce.fast.block", 256},
      {Backend::opencl, Scope::any, "", "reduce.fast.blocks_per_cu", 8},
      // Small inputs: one group up to 32 KiB, then about 2 vectors per work-item over as many
      // groups as that takes (at most the tuned grid).
      {Backend::opencl, Scope::any, "", "reduce.fast.single_block_bytes", 32768},
      {Backend::opencl, Scope::any, "", "reduce.fast.small_items", 2},
      // Axis rows: groups of 256, 8 per compute unit (2048 threads per SM on NVIDIA).
      {Backend::opencl, Scope::any, "", "reduce.fast.rows_block", 256},
      {Backend::opencl, Scope::any, "", "reduce.fast.rows_blocks_per_cu", 8},
      // Axis rows: up to 128 groups per compute unit, a slice per row. Measured:
      // bench/tuning/measurements.json, reduce-opencl-rows-grid.
      {Backend::opencl, Scope::any, "", "reduce.fast.rows_grid_per_cu", 128},
      // Axis cols: 128 work-items of 16-byte strips, 8 groups per compute unit (1024 threads
      // per SM on NVIDIA, 8 loads each in flight).
      {Backend::opencl, Scope::any, "", "reduce.fast.cols_block", 128},
      {Backend::opencl, Scope::any, "", "reduce.fast.cols_blocks_per_cu", 8},
      {Backend::opencl, Scope::any, "", "reduce.tree.block", 256},
      {Backend::opencl, Scope::any, "", "reduce.serial.items", 64},
      {Backend::opencl, Scope::any, "", "reduce.serial.block", 256},
      {Backend::opencl, Scope::any, "", "reduce.gridstride.block", 256},
      {Backend::opencl, Scope::any, "", "reduce.gridstride.blocks_per_cu", 8},
      {Backend::opencl, Scope::any, "", "reduce.atomic.block", 256},
      {Backend::opencl, Scope::any, "", "reduce.atomic.blocks_per_cu", 8},
      // CPU parallel: chunks of 4096 to 65536 elements, at least 16 where the input allows.
      // Measured: bench/tuning/measurements.json, reduce-cpu-chunks.
      {Backend::cpu, Scope::any, "", "reduce.parallel.chunk", 1 << 16},
      {Backend::cpu, Scope::any, "", "reduce.parallel.min_chunk", 4096},
      {Backend::cpu, Scope::any, "", "reduce.parallel.tasks", 16},
      // The CPU pool: one thread per hardware thread, idle threads poll 100 µs before they sleep.
      // Measured: bench/tuning/measurements.json, cpu-pool.
      {Backend::cpu, Scope::any, "", "cpu.pool.threads", 0},
      {Backend::cpu, Scope::any, "", "cpu.pool.spin_us", 100},
      // Streams: chunks of 16 MiB on GPUs (the device memory a stream's input takes; page-locking
      // costs about 0.5 ms per MiB at start-up, and 16 MiB copies already run at the bus's speed)
      // and 64 MiB windows on the CPU; four chunks in flight within 512 MiB of host staging; files
      // read by 8 threads on a GPU. Measured: bench/tuning/measurements.json, stream-chunks.
      {Backend::cpu, Scope::any, "", "stream.chunk_kib", 65536},
      {Backend::cpu, Scope::any, "", "stream.staging_mib", 512},
      {Backend::cpu, Scope::any, "", "stream.read_threads", 2},
      {Backend::cuda, Scope::any, "", "stream.chunk_kib", 16384},
      {Backend::cuda, Scope::any, "", "stream.staging_mib", 512},
      {Backend::cuda, Scope::any, "", "stream.read_threads", 8},
      {Backend::opencl, Scope::any, "", "stream.chunk_kib", 16384},
      {Backend::opencl, Scope::any, "", "stream.staging_mib", 512},
      {Backend::opencl, Scope::any, "", "stream.read_threads", 8},
      // Histogram: classic variants in blocks of 256; CUDA `fast` in blocks of 1024 with a
      // lane-striped shared histogram of up to 64 KiB (fewer threads where a kernel's registers
      // allow fewer), 16-bit packed counters when 32-bit ones would need more than one pass, at
      // most 4 passes over slot ranges before it switches to global atomics.
      {Backend::cuda, Scope::any, "", "histogram.block", 256},
      {Backend::cuda, Scope::any, "", "histogram.fast.block", 1024},
      {Backend::cuda, Scope::any, "", "histogram.fast.striped_kib", 64},
      {Backend::cuda, Scope::any, "", "histogram.fast.max_passes", 4},
      // The per-vector warp vote for skewed data, below 16 lane-striped columns. Measured:
      // bench/tuning/measurements.json, histogram-cuda-vote.
      {Backend::cuda, Scope::any, "", "histogram.fast.vote_below_columns", 16},
      {Backend::opencl, Scope::any, "", "histogram.block", 256},
      // OpenCL fast: groups of 1024, 8 per compute unit, 8 vectors in flight, runs only when
      // counting globally. Measured: bench/tuning/measurements.json, histogram-opencl-fast.
      {Backend::opencl, Scope::any, "", "histogram.fast.block", 1024},
      {Backend::opencl, Scope::any, "", "histogram.fast.groups_per_cu", 8},
      {Backend::opencl, Scope::any, "", "histogram.fast.vectors", 8},
      {Backend::opencl, Scope::any, "", "histogram.fast.striped_kib", 96},
      {Backend::opencl, Scope::any, "", "histogram.fast.max_columns", 32},
      {Backend::opencl, Scope::any, "", "histogram.fast.runs_below_columns", 0},
      {Backend::opencl, Scope::any, "", "histogram.fast.max_passes", 4},
      // OpenCL global counting on the resident grid (2 per compute unit); float64 edges; packed
      // fields. Measured: bench/tuning/measurements.json, histogram-opencl-global-packed.
      {Backend::opencl, Scope::any, "", "histogram.opencl.global_groups_per_cu", 2},
      {Backend::opencl, Scope::any, "", "histogram.opencl.float_edges", 1},
      {Backend::opencl, Scope::any, "", "histogram.groups_per_cu", 8},
      {Backend::cpu, Scope::any, "", "histogram.parallel.private_mib", 256},
      // Pairwise `fast` (measured on H100): the product in blocks of 256 with 16 x per thread
      // (90.6 % of the FMA peak; 8 x: 88 %), the gaussian in blocks of 1024 with 8 x; NVIDIA's
      // OpenCL takes the gaussian's exp2 as PTX (native_exp2 was 1.11× slower).
      {Backend::cuda, Scope::device, "H100", "pairwise.fast.block", 256},
      {Backend::cuda, Scope::device, "H200", "pairwise.fast.block", 256},
      {Backend::cuda, Scope::any, "", "pairwise.fast.block", 256},
      {Backend::cuda, Scope::any, "", "pairwise.fast.gaussian_block", 1024},
      {Backend::cuda, Scope::any, "", "pairwise.fast.product_items", 16},
      {Backend::cuda, Scope::any, "", "pairwise.fast.gaussian_items", 8},
      {Backend::cuda, Scope::any, "", "pairwise.simple.block", 256},
      {Backend::opencl, Scope::any, "", "pairwise.fast.block", 256},
      {Backend::opencl, Scope::any, "", "pairwise.fast.product_items", 16},
      {Backend::opencl, Scope::any, "", "pairwise.fast.gaussian_items", 8},
      {Backend::opencl, Scope::any, "", "pairwise.opencl.ptx_exp2", 1},
      // B split into slices when X cannot fill the device; NVIDIA OpenCL sums the slices in the
      // same launch. Measured: bench/tuning/measurements.json, pairwise-split.
      {Backend::cuda, Scope::any, "", "pairwise.fast.split_threads_per_cu", 1024},
      {Backend::cuda, Scope::any, "", "pairwise.fast.split_items", 4},
      {Backend::cuda, Scope::any, "", "pairwise.fast.combine_in_kernel", 0},
      {Backend::opencl, Scope::any, "", "pairwise.fast.split_threads_per_cu", 256},
      {Backend::opencl, Scope::any, "", "pairwise.fast.split_items", 4},
      {Backend::opencl, Scope::any, "", "pairwise.fast.combine_in_kernel", 1},
      // The product shortcut A[x]·ΣB in one launch for B of at most 16384 values. Measured:
      // bench/tuning/measurements.json, pairwise-shortcut.
      {Backend::cuda, Scope::any, "", "pairwise.shortcut.group_sum_max_y", 16384},
      {Backend::opencl, Scope::any, "", "pairwise.shortcut.group_sum_max_y", 16384},
      // NVIDIA's OpenCL, the fast histogram: inline PTX as in the CUDA kernel, local atomics on
      // 32-bit shared addresses and the float32 floor without the conversion unit (0: portable
      // OpenCL C).
      {Backend::opencl, Scope::any, "", "histogram.opencl.ptx", 1},
      {Backend::opencl, Scope::any, "", "pairwise.simple.block", 256},
      {Backend::cpu, Scope::any, "", "pairwise.parallel.block", 256},
      {Backend::cpu, Scope::any, "", "pairwise.parallel.tile", 4096},
      // Barrier flip and the global level of hierarchical: arrivals, polls, tables and delays per
      // grid size. Measured: bench/tuning/measurements.json, barrier-flip.
      {Backend::cuda, Scope::any, "", "barrier.flip.warp_arrivals_block_max", 32},
      {Backend::cuda, Scope::any, "", "barrier.flip.one_level_max", 1100},
      {Backend::cuda, Scope::device, "H200", "barrier.flip.one_level_max", 600},
      {Backend::cuda, Scope::any, "", "barrier.flip.subword_blocks", 0},
      {Backend::cuda, Scope::any, "", "barrier.flip.red_arrivals_max", 160},
      {Backend::cuda, Scope::any, "", "barrier.flip.poll", 1},
      {Backend::cuda, Scope::any, "", "barrier.flip.wait", 0},
      {Backend::cuda, Scope::any, "", "barrier.flip.poll_check_every", 1024},
      {Backend::cuda, Scope::any, "", "barrier.flip.poll_sleep_ns", 32},
      {Backend::cuda, Scope::any, "", "barrier.flip.poll_sleep_from", 1000},
      {Backend::cuda, Scope::any, "", "barrier.flip.release_lines", 4},
      {Backend::cuda, Scope::any, "", "barrier.flip.release_lines_from", 1500},
      {Backend::cuda, Scope::any, "", "barrier.flip.poll_delay_from", 1000},
      {Backend::cuda, Scope::any, "", "barrier.flip.poll_delay_cycles", 900},
      {Backend::cuda, Scope::device, "H200", "barrier.flip.poll_delay_from", 200},
      {Backend::cuda, Scope::device, "H200", "barrier.flip.poll_delay_cycles", 200},
      {Backend::cuda, Scope::any, "", "barrier.flip.table_from", 100},
      {Backend::cuda, Scope::any, "", "barrier.flip.table_max", 2200},
      {Backend::cuda, Scope::any, "", "barrier.flip.table_rows_from", 500},
      {Backend::cuda, Scope::any, "", "barrier.flip.arrivals_per_row", 132},
      {Backend::cuda, Scope::any, "", "barrier.flip.table_rows_max", 8},
      {Backend::cuda, Scope::any, "", "barrier.flip.table_columns", 4},
      {Backend::cuda, Scope::any, "", "barrier.flip.arrivals_per_column", 132},
      {Backend::cuda, Scope::any, "", "barrier.flip.table_columns_max", 8},
      {Backend::cuda, Scope::any, "", "barrier.flip.table_stride_lines", 128},
      {Backend::cuda, Scope::any, "", "barrier.flip.table_poll_delay", 200},
      {Backend::cuda, Scope::device, "H200", "barrier.flip.table_rows_from", 200},
      {Backend::cuda, Scope::device, "H200", "barrier.flip.arrivals_per_row", 264},
      {Backend::cuda, Scope::device, "H200", "barrier.flip.arrivals_per_column", 1 << 20},
      {Backend::cuda, Scope::device, "H200", "barrier.flip.table_poll_delay", 300},
      // Barrier `hierarchical`: the largest cluster (a power of two up to 16; above 8 is
      // non-portable), and release: 0 = one poller per cluster and a second cluster barrier,
      // 1 = every block polls the flip word, no second cluster barrier.
      {Backend::cuda, Scope::any, "", "barrier.hierarchical.cluster", 8},
      {Backend::cuda, Scope::any, "", "barrier.hierarchical.release", 0},
  };
  return entries;
}

// What PARPAT_TUNING may set each key to: the values the code that reads the key handles, so an
// override can make a kernel slower but never wrong, and a mistyped key or value is refused
// instead of silently ignored.
enum class Allowed { range, power_of_two, multiple_of_32, listed };

struct Limit {
  const char* key;
  int min;
  int max;
  Allowed allowed = Allowed::range;
  std::vector<int> listed = {};  // Allowed::listed: the values themselves, in order
};

constexpr int kLarge = 1 << 30;

const std::vector<Limit>& limits() {
  static const std::vector<Limit> entries = {
      {"reduce.fast.block", 32, 1024, Allowed::power_of_two},
      {"reduce.fast.blocks_per_cu", 1, 256},
      {"reduce.fast.arg_blocks_per_cu", 1, 256},
      {"reduce.fast.single_block_bytes", 0, kLarge},
      {"reduce.fast.single_block_items", 1, 8},
      {"reduce.fast.small_block", 32, 1024, Allowed::multiple_of_32},
      {"reduce.fast.small_items", 1, 8},
      {"reduce.fast.cluster_bytes", 0, kLarge},
      {"reduce.fast.cluster_size", 1, 16},
      {"reduce.fast.overlap_launch", 0, 1},
      {"reduce.fast.prefetch", 0, 1},
      {"reduce.fast.rows_block", 32, 1024, Allowed::power_of_two},
      {"reduce.fast.rows_blocks_per_cu", 0, 256},
      {"reduce.fast.rows_grid_per_cu", 1, 1024},
      {"reduce.fast.cols_block", 32, 1024, Allowed::power_of_two},
      {"reduce.fast.cols_blocks_per_cu", 1, 256},
      {"reduce.tree.block", 32, 1024, Allowed::power_of_two},
      {"reduce.serial.block", 32, 1024, Allowed::power_of_two},
      {"reduce.serial.items", 2, 1 << 20},
      {"reduce.gridstride.block", 32, 1024, Allowed::power_of_two},
      {"reduce.gridstride.blocks_per_cu", 1, 256},
      {"reduce.atomic.block", 32, 1024, Allowed::power_of_two},
      {"reduce.atomic.blocks_per_cu", 1, 256},
      {"reduce.parallel.chunk", 1, kLarge},
      {"reduce.parallel.min_chunk", 1, kLarge},
      {"reduce.parallel.tasks", 1, 4096},
      {"cpu.pool.threads", 0, 1024},
      {"cpu.pool.spin_us", 0, 10000000},
      {"stream.chunk_kib", 1, 1 << 22},
      {"stream.staging_mib", 1, 1 << 16},
      {"stream.read_threads", 1, 64},
      {"histogram.block", 32, 1024, Allowed::multiple_of_32},
      {"histogram.groups_per_cu", 1, 256},
      {"histogram.fast.block", 32, 1024, Allowed::multiple_of_32},
      {"histogram.fast.groups_per_cu", 1, 256},
      {"histogram.fast.vectors", 1, 8},
      {"histogram.fast.striped_kib", 1, 1024},
      {"histogram.fast.max_columns", 1, 32},
      {"histogram.fast.max_passes", 0, kLarge},
      {"histogram.fast.packed", 0, 1},
      {"histogram.fast.runs_below_columns", 0, 64},
      {"histogram.fast.vote_below_columns", 0, 64},
      {"histogram.opencl.global_groups_per_cu", 1, 256},
      {"histogram.opencl.float_edges", 0, 1},
      {"histogram.opencl.packed", 0, 1},
      {"histogram.opencl.field_bits", 0, 16, Allowed::listed, {0, 4, 5, 8, 16}},
      {"histogram.opencl.hot_entries", 0, 4096},
      {"histogram.opencl.ptx", 0, 1},
      {"histogram.parallel.private_mib", 1, 1 << 20},
      {"histogram.parallel.section_values", 1, std::numeric_limits<int>::max()},
      {"pairwise.fast.block", 1, 1024},
      {"pairwise.fast.gaussian_block", 1, 1024},
      {"pairwise.simple.block", 1, 1024},
      {"pairwise.fast.product_items", 4, 16, Allowed::power_of_two},
      {"pairwise.fast.gaussian_items", 4, 16, Allowed::power_of_two},
      {"pairwise.fast.split_threads_per_cu", 32, 1 << 16},
      {"pairwise.fast.split_items", 0, 16, Allowed::listed, {0, 4, 8, 16}},
      {"pairwise.fast.combine_in_kernel", 0, 1},
      {"pairwise.shortcut.group_sum_max_y", 0, kLarge},
      {"pairwise.opencl.ptx_exp2", 0, 1},
      {"pairwise.parallel.block", 1, 1 << 24},
      {"pairwise.parallel.tile", 1, 1 << 24},
      {"barrier.flip.warp_arrivals_block_max", 0, 1024},
      {"barrier.flip.one_level_max", 0, kLarge},
      {"barrier.flip.subword_blocks", 0, kLarge},
      {"barrier.flip.red_arrivals_max", 0, kLarge},
      {"barrier.flip.poll", 0, 1},
      {"barrier.flip.wait", 0, 1},
      {"barrier.flip.poll_check_every", 4, 1 << 20},
      {"barrier.flip.poll_sleep_ns", 0, 1000000},
      {"barrier.flip.poll_sleep_from", 0, kLarge},
      {"barrier.flip.release_lines", 0, 32},
      {"barrier.flip.release_lines_from", 0, kLarge},
      {"barrier.flip.poll_delay_from", 0, kLarge},
      {"barrier.flip.poll_delay_cycles", 0, 100000},
      {"barrier.flip.table_from", 0, kLarge},
      {"barrier.flip.table_max", 0, kLarge},
      {"barrier.flip.table_rows_from", 0, kLarge},
      {"barrier.flip.arrivals_per_row", 1, kLarge},
      {"barrier.flip.table_rows_max", 1, 16},
      {"barrier.flip.table_columns", 1, 16},
      {"barrier.flip.arrivals_per_column", 1, kLarge},
      {"barrier.flip.table_columns_max", 1, 16},
      {"barrier.flip.table_stride_lines", 1, 1024},
      {"barrier.flip.table_poll_delay", 0, 100000},
      {"barrier.hierarchical.cluster", 1, 16, Allowed::power_of_two},
      {"barrier.hierarchical.release", 0, 1},
  };
  return entries;
}

const Limit* find_limit(std::string_view key) {
  for (const auto& l : limits())
    if (key == l.key) return &l;
  return nullptr;
}

bool allowed(const Limit& l, int value) {
  if (value < l.min || value > l.max) return false;
  switch (l.allowed) {
    case Allowed::range:
      return true;
    case Allowed::power_of_two:
      return (value & (value - 1)) == 0;
    case Allowed::multiple_of_32:
      return value % 32 == 0;
    case Allowed::listed:
      return std::find(l.listed.begin(), l.listed.end(), value) != l.listed.end();
  }
  return false;
}

// "a power of two from 32 to 1024", "0, 4, 5, 8 or 16".
std::string describe(const Limit& l) {
  if (l.allowed == Allowed::listed) {
    std::string s;
    for (std::size_t i = 0; i < l.listed.size(); ++i)
      s += (i == 0 ? "" : i + 1 == l.listed.size() ? " or " : ", ") + std::to_string(l.listed[i]);
    return s;
  }
  const char* what = l.allowed == Allowed::power_of_two     ? "a power of two"
                     : l.allowed == Allowed::multiple_of_32 ? "a multiple of 32"
                                                            : "an integer";
  return std::string(what) + " from " + std::to_string(l.min) + " to " + std::to_string(l.max);
}

[[noreturn]] void refuse(const std::string& why) {
  throw_invalid("PARPAT_TUNING: " + why);
}

struct Override {
  std::string key;
  int value;
};

// PARPAT_TUNING ("key=value,key=value"; empty items are skipped), every item checked against
// limits(): a malformed item, an unknown key or a value the key does not take throws.
std::vector<Override> overrides(const char* env) {
  std::vector<Override> found;
  if (!env) return found;
  std::string_view all = env;
  while (!all.empty()) {
    std::size_t comma = all.find(',');
    std::string item(all.substr(0, comma));
    all = comma == std::string_view::npos ? std::string_view() : all.substr(comma + 1);
    if (item.empty()) continue;
    std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      refuse("'" + item + "' is not key=value (keys and their values: src/runtime/tuning.cpp)");
    std::string key = item.substr(0, eq);
    const Limit* limit = find_limit(key);
    if (!limit) refuse("unknown key '" + key + "' (keys and their values: src/runtime/tuning.cpp)");
    const char* text = item.c_str() + eq + 1;
    char* rest = nullptr;
    errno = 0;
    long long parsed = std::strtoll(text, &rest, 10);
    const bool number =
        rest != text && *rest == '\0' && errno != ERANGE && parsed >= INT_MIN && parsed <= INT_MAX;
    if (!number || !allowed(*limit, static_cast<int>(parsed)))
      refuse("'" + item + "': " + key + " takes " + describe(*limit));
    found.push_back({key, static_cast<int>(parsed)});
  }
  return found;
}

bool matches(const Entry& e, const DeviceInfo& device) {
  switch (e.scope) {
    case Scope::any:
      return true;
    case Scope::vendor:
      return device.vendor.find(e.match) != std::string::npos;
    case Scope::architecture:
      return device.architecture == e.match;
    case Scope::device:
      return device.name.find(e.match) != std::string::npos;
  }
  return false;
}

// PARPAT_TUNING parsed once per value it takes (tests change it at run time): the parsed items
// are kept with the text they came from and re-read only when the variable changes.
std::shared_ptr<const std::vector<Override>> current_overrides() {
  static std::mutex mutex;
  static std::string parsed_text;
  static bool parsed_set = false;
  static auto parsed = std::make_shared<const std::vector<Override>>();
  const char* env = std::getenv("PARPAT_TUNING");
  std::lock_guard<std::mutex> lock(mutex);
  if (parsed_set == (env != nullptr) && (!env || parsed_text == env)) return parsed;
  parsed = std::make_shared<const std::vector<Override>>(overrides(env));
  parsed_set = env != nullptr;
  parsed_text = env ? env : "";
  return parsed;
}

}  // namespace

void check_tuning_overrides() {
  current_overrides();
}

void check_tuning_table() {
  for (const auto& e : table()) {
    const Limit* limit = find_limit(e.key);
    if (!limit || !allowed(*limit, e.value))
      throw Error(ErrorKind::invalid_argument,
                  std::string("tuning table: ") + e.key + "=" + std::to_string(e.value) +
                      (limit ? " is not " + describe(*limit) : " has no limits"));
  }
}

int tuning(const DeviceInfo& device, const std::string& key, int fallback) {
  if (!find_limit(key))
    throw std::logic_error("tuning key '" + key + "' is not declared in limits()");
  std::shared_ptr<const std::vector<Override>> set = current_overrides();
  for (auto it = set->rbegin(); it != set->rend(); ++it)
    if (it->key == key) return it->value;
  const Entry* best = nullptr;
  for (const auto& e : table()) {
    if (e.backend != device.backend || key != e.key || !matches(e, device)) continue;
    if (!best || e.scope > best->scope) best = &e;
  }
  return best ? best->value : fallback;
}

}  // namespace parpat::detail
