#include "runtime/tuning.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "parpat/error.hpp"

namespace parpat::detail {

namespace {

struct Entry {
  Backend backend;
  const char* device_pattern;  // substring of the device name; "" matches any device
  const char* key;
  int value;
};

// Specific devices first: the first match wins.
const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      // Hopper: 2048 resident threads per SM; 4 blocks of 512 keep 128 KiB of loads in flight.
      {Backend::cuda, "H100", "reduce.fast.block", 512},
      {Backend::cuda, "H100", "reduce.fast.blocks_per_cu", 4},
      {Backend::cuda, "H200", "reduce.fast.block", 512},
      {Backend::cuda, "H200", "reduce.fast.blocks_per_cu", 4},
      {Backend::cuda, "", "reduce.fast.block", 256},
      {Backend::cuda, "", "reduce.fast.blocks_per_cu", 8},
      // Small inputs are latency-bound: one block without a ticket up to 64 KiB (a thread per 8
      // 16-byte loads), then blocks of 256 threads with about 4 loads each, as many as the data
      // covers, until the bandwidth-bound grid fills the device. Measured on H100 in graph
      // replays: 2^10 float32 1.49 µs with 8 loads per thread against 1.79 with 2; 2^20 float32
      // sum 5.31 µs with 4 against 5.64 with 2.
      {Backend::cuda, "", "reduce.fast.single_block_bytes", 65536},
      {Backend::cuda, "", "reduce.fast.single_block_items", 8},
      {Backend::cuda, "", "reduce.fast.small_block", 256},
      {Backend::cuda, "", "reduce.fast.small_items", 4},
      // sm_90: up to 1 MiB runs as one cluster of 16 blocks that meet at the cluster barrier, and
      // every `fast` launch overlaps the kernel before it (programmatic dependent launch).
      // Measured on H200 in graph replays, float32 sum: 2^16 2.41 µs in a cluster against 2.79
      // with the ticket, 2^18 2.87 against 3.54; 2^20 in a cluster 6.45 against 4.30.
      {Backend::cuda, "", "reduce.fast.cluster_bytes", 1 << 20},
      {Backend::cuda, "", "reduce.fast.cluster_size", 16},
      {Backend::cuda, "", "reduce.fast.overlap_launch", 1},
      // Started early by the overlap, the small forms prefetch their first loads into L2: on
      // H200 2^20 float32 sum 3.93 µs against 4.30 without, 2^18 2.76 against 2.90.
      {Backend::cuda, "", "reduce.fast.prefetch", 1},
      // Axis rows (rows longer than 2048): 0 = one block of 256 per row; n = n resident blocks
      // per SM striding over the rows. H100, 16384 × 16384 float32 (µs, CUB segmented 345):
      // 0: 345.0, 1: 442.2, 2: 361.1-361.9, 3: 348.0, 4: 356.4, 8: 352.3.
      {Backend::cuda, "", "reduce.fast.rows_blocks_per_cu", 0},
      {Backend::cuda, "", "reduce.tree.block", 256},
      {Backend::cuda, "", "reduce.serial.items", 64},
      {Backend::cuda, "", "reduce.serial.block", 256},
      {Backend::cuda, "", "reduce.gridstride.block", 256},
      {Backend::cuda, "", "reduce.gridstride.blocks_per_cu", 8},
      {Backend::cuda, "", "reduce.atomic.block", 256},
      {Backend::cuda, "", "reduce.atomic.blocks_per_cu", 8},
      // NVIDIA's OpenCL names the device as CUDA does ("NVIDIA H100 80GB HBM3").
      {Backend::opencl, "H100", "reduce.fast.block", 512},
      {Backend::opencl, "H100", "reduce.fast.blocks_per_cu", 4},
      // Arg ops' fast_all takes 84 registers (40–64 for the other ops), so one group of 512 is
      // all a compute unit holds: four per compute unit ran in four waves (float32 argmax at
      // 2^24 on an H100: 41.3 µs, one per compute unit 32.5).
      {Backend::opencl, "H100", "reduce.fast.arg_blocks_per_cu", 1},
      {Backend::opencl, "H200", "reduce.fast.block", 512},
      {Backend::opencl, "H200", "reduce.fast.blocks_per_cu", 4},
      {Backend::opencl, "H200", "reduce.fast.arg_blocks_per_cu", 1},
      {Backend::opencl, "", "reduce.fast.block", 256},
      {Backend::opencl, "", "reduce.fast.blocks_per_cu", 8},
      // Small inputs: one group up to 32 KiB, then about 2 vectors per work-item over as many
      // groups as that takes (at most the tuned grid).
      {Backend::opencl, "", "reduce.fast.single_block_bytes", 32768},
      {Backend::opencl, "", "reduce.fast.small_items", 2},
      // Axis rows: groups of 256, 8 per compute unit (2048 threads per SM on NVIDIA).
      {Backend::opencl, "", "reduce.fast.rows_block", 256},
      {Backend::opencl, "", "reduce.fast.rows_blocks_per_cu", 8},
      // ... and up to 128 groups per compute unit, a slice per row: 16384 × 16384 float32, µs,
      // with at most 8 / 16 / 32 / 128 per compute unit: H100 362.4–363.4 / 349.6 / 349.3 /
      // 347.0–349.6 (CUDA 345.1), H200 266.4–267.8 / 242.4 / — / 239.3 (CUDA 232.7).
      {Backend::opencl, "", "reduce.fast.rows_grid_per_cu", 128},
      // Axis cols: 128 work-items of 16-byte strips, 8 groups per compute unit (1024 threads
      // per SM on NVIDIA, 8 loads each in flight).
      {Backend::opencl, "", "reduce.fast.cols_block", 128},
      {Backend::opencl, "", "reduce.fast.cols_blocks_per_cu", 8},
      {Backend::opencl, "", "reduce.tree.block", 256},
      {Backend::opencl, "", "reduce.serial.items", 64},
      {Backend::opencl, "", "reduce.serial.block", 256},
      {Backend::opencl, "", "reduce.gridstride.block", 256},
      {Backend::opencl, "", "reduce.gridstride.blocks_per_cu", 8},
      {Backend::opencl, "", "reduce.atomic.block", 256},
      {Backend::opencl, "", "reduce.atomic.blocks_per_cu", 8},
      // CPU `parallel`: chunks of 4096 to 65536 elements, at least 16 of them where the input
      // allows. Measured on a 16-core Xeon (float32 sum, µs): 2^16 in one chunk 21.1, in 16 of
      // 4096 6.5; 2^24 in chunks of 4096 418, of 65536 307.
      {Backend::cpu, "", "reduce.parallel.chunk", 1 << 16},
      {Backend::cpu, "", "reduce.parallel.min_chunk", 4096},
      {Backend::cpu, "", "reduce.parallel.tasks", 16},
      // The CPU pool: one thread per hardware thread (threads 0), idle threads polling 100 µs
      // for the next call before they sleep.
      {Backend::cpu, "", "cpu.pool.threads", 0},
      {Backend::cpu, "", "cpu.pool.spin_us", 100},
      // Histogram: classic variants in blocks of 256; CUDA `fast` in blocks of 1024 with a
      // lane-striped shared histogram of up to 64 KiB (fewer threads where a kernel's registers
      // allow fewer), 16-bit packed counters when 32-bit ones would need more than one pass, at
      // most 4 passes over slot ranges before it switches to global atomics.
      {Backend::cuda, "", "histogram.block", 256},
      {Backend::cuda, "", "histogram.fast.block", 1024},
      {Backend::cuda, "", "histogram.fast.striped_kib", 64},
      {Backend::cuda, "", "histogram.fast.max_passes", 4},
      // The per-vector warp vote that sends skewed data through register runs, in shared memory
      // with fewer than vote_below_columns lane-striped columns (packed counters and global
      // counting always vote). Measured on H200 (1 GiB, µs): without the vote uint8 267 → 251 and
      // float32/256 399 → 378 (16 columns), float32/1024 400 → 382 (4 columns, where skewed data
      // would share counters, so it keeps the vote); a grid of 2 or 4 times the resident blocks
      // was 1–4 % slower.
      {Backend::cuda, "", "histogram.fast.vote_below_columns", 16},
      {Backend::opencl, "", "histogram.block", 256},
      // OpenCL `fast`: groups of 1024, 8 per compute unit, 8 vectors of 16 bytes in flight per
      // work-item; up to 96 KiB (capped by the device's local memory, 48 KiB per group on
      // NVIDIA) of lane-striped counters in up to 32 columns; register runs for skewed data only
      // when counting into global memory (runs_below_columns=0: a per-work-item run test splits
      // warps where CUDA takes a warp vote); at most 4 slot ranges counted side by side before
      // global counting. Measured on H200 (1 GiB inputs, µs): runs off and 8 groups per compute
      // unit took uint8 uniform from 442 to 255 and normal from 535 to 255, float32/256 uniform
      // from 465 to 348; 8 vectors float32 all-equal from 317 to 269; float32 at 65536 bins
      // (6 ranges in 48 KiB) 4035 in ranges against 2955 counted globally (all-equal 1377
      // against 435).
      {Backend::opencl, "", "histogram.fast.block", 1024},
      {Backend::opencl, "", "histogram.fast.groups_per_cu", 8},
      {Backend::opencl, "", "histogram.fast.vectors", 8},
      {Backend::opencl, "", "histogram.fast.striped_kib", 96},
      {Backend::opencl, "", "histogram.fast.max_columns", 32},
      {Backend::opencl, "", "histogram.fast.runs_below_columns", 0},
      {Backend::opencl, "", "histogram.fast.max_passes", 4},
      // OpenCL `fast` counting globally: the resident grid only, 2 groups per compute unit (one
      // final add per work-item's run, all on one slot for all-equal data; H200, float32 at 2^20
      // bins, µs: all-equal 440 with 8, 332 with 4, 290 with 2). float_edges: settle a float32
      // value near an edge against the float64 edges where the device has cl_khr_fp64 (0: the
      // threshold table; 2^20 bins 3694 → 2699 µs). histogram.opencl.packed (packed counters
      // in slot ranges) has no row here: it defaults in code to 1 where groups run side by side
      // and 0 on CPU drivers, where ranges re-read the input. Packed fields are the widest of
      // 16, 8 and 5 bits that needs the fewest ranges (histogram.opencl.field_bits forces one
      // width, 4 included), with a table of 256 hot rows for the narrow ones
      // (histogram.opencl.hot_entries). Measured on H100 (float32, 2^28 values, µs): 65536 bins
      // in one range of 5-bit fields 2817 → 878 (three 16-bit ranges before), normal data
      // 2827 → 868, all-equal 434 → 383; 24576 bins (8-bit) 1624 → 644.
      {Backend::opencl, "", "histogram.opencl.global_groups_per_cu", 2},
      {Backend::opencl, "", "histogram.opencl.float_edges", 1},
      {Backend::opencl, "", "histogram.groups_per_cu", 8},
      {Backend::cpu, "", "histogram.parallel.private_mib", 256},
      // Pairwise `fast` (measured on H100): the product in blocks of 256 with 16 x per thread
      // (90.6 % of the FMA peak; 8 x: 88 %), the gaussian in blocks of 1024 with 8 x; NVIDIA's
      // OpenCL takes the gaussian's exp2 as PTX (native_exp2 was 1.11× slower).
      {Backend::cuda, "H100", "pairwise.fast.block", 256},
      {Backend::cuda, "H200", "pairwise.fast.block", 256},
      {Backend::cuda, "", "pairwise.fast.block", 256},
      {Backend::cuda, "", "pairwise.fast.gaussian_block", 1024},
      {Backend::cuda, "", "pairwise.fast.product_items", 16},
      {Backend::cuda, "", "pairwise.fast.gaussian_items", 8},
      {Backend::cuda, "", "pairwise.simple.block", 256},
      {Backend::opencl, "", "pairwise.fast.block", 256},
      {Backend::opencl, "", "pairwise.fast.product_items", 16},
      {Backend::opencl, "", "pairwise.fast.gaussian_items", 8},
      {Backend::opencl, "", "pairwise.opencl.ptx_exp2", 1},
      // Pairwise `fast` with B split into slices (X too small to fill the device): slices for
      // about split_threads_per_cu threads per compute unit, with split_items x per thread (0:
      // the unsplit count); combine_in_kernel 1 = the last block of each column adds the
      // slices' rows in the same launch, 0 = a second kernel. Measured on H100 (2^14 × 2^12,
      // µs, blocks of 64): NVIDIA OpenCL's second launch costs more than the in-launch sum
      // (product 17.6–19.0 with two kernels, 10.9–12.2 in one; gaussian 28.4–29.1 and
      // 25.1–26.6), CUDA's less (one launch: gaussian 25.1–25.3 against 24.1–24.3); 4 x per
      // thread keep the last block's sum short (with 16, its 512 loads per thread made the
      // product 41.6) and let blocks of 1024 fill the device (gaussian 38.1 → 22.9).
      {Backend::cuda, "", "pairwise.fast.split_threads_per_cu", 1024},
      {Backend::cuda, "", "pairwise.fast.split_items", 4},
      {Backend::cuda, "", "pairwise.fast.combine_in_kernel", 0},
      {Backend::opencl, "", "pairwise.fast.split_threads_per_cu", 256},
      {Backend::opencl, "", "pairwise.fast.split_items", 4},
      {Backend::opencl, "", "pairwise.fast.combine_in_kernel", 1},
      // The product shortcut A[x]·ΣB in one launch (every block sums B itself) for B of at most
      // group_sum_max_y values; longer B is summed once by the library's reduce, then scaled.
      // H100, µs (2^14 × 2^12 / 2^20 × 2^14): CUDA 6.14 / 9.09 → 4.19–4.35 / 6.75–6.98, NVIDIA
      // OpenCL 20.9 / 24.5 → 6.75–7.42 / 10.6–11.0.
      {Backend::cuda, "", "pairwise.shortcut.group_sum_max_y", 16384},
      {Backend::opencl, "", "pairwise.shortcut.group_sum_max_y", 16384},
      // NVIDIA's OpenCL, the fast histogram: inline PTX as in the CUDA kernel, local atomics on
      // 32-bit shared addresses and the float32 floor without the conversion unit (0: portable
      // OpenCL C).
      {Backend::opencl, "", "histogram.opencl.ptx", 1},
      {Backend::opencl, "", "pairwise.simple.block", 256},
      {Backend::cpu, "", "pairwise.parallel.block", 256},
      {Backend::cpu, "", "pairwise.parallel.tile", 4096},
      // Barrier `flip` (and the global level of `hierarchical`), CUDA. Arrivals: one per block,
      // or one per warp (no __syncthreads in sync()) for blocks of at most
      // warp_arrivals_block_max threads (0: never). One flip word up to one_level_max arrivals,
      // above it sub-words of subword_blocks arrivals (0: about √n) first. Up to
      // red_arrivals_max arrivals they are fire-and-forget reds and polls start at once; above
      // it atoms returning the old value (polls start after it returns, so fewer polls compete
      // with the arrivals for the L2 line, and the last arriver does not poll; 0: always atoms,
      // a huge value: always reds; hierarchical counts clusters). poll: 1 = relaxed loads and one
      // acquire fence after the flip, 0 = an acquire load per poll (cooperative groups' way). wait
      // (block arrivals): 0 = thread 0 polls and the block waits at __syncthreads, 1 = every
      // warp polls for itself. poll_check_every: polls between reads of the clock and the error
      // word (a power of two >= 4). poll_sleep_ns: __nanosleep between polls (0: none), from
      // poll_sleep_from arrivals on. On H100, blocks of 128 / 256 at 8 per SM (1056 arrivals):
      // one level took 1.89 / 2.00 µs per barrier against 2.17 / 2.24 with sub-words (at 16 per
      // SM, 2112 arrivals, sub-words and release lines 2.59 against 2.94 for one level), and
      // 32 ns sleeps 1.85 / 1.88 against 1.89 / 2.00; at 1 per SM sleeps cost 0.98 against 0.88.
      // On H200, whose release fence costs 0.135 µs against H100's 0.338, the second level's
      // fence pays sooner: at 8 per SM sub-words took 1.73 / 1.84 µs against one level's 1.87 /
      // 2.02 (both with the sleeps).
      // release_lines (from release_lines_from arrivals on): the last arriver copies the new
      // generation into that many words (up to 32; 0: none), each in a line of its own, and
      // waiter u polls copy u mod k, so that no poll queues behind the arrivals' atomics
      // (arrivals are then atoms). The copy costs an atom's answer and a fence: on H100, blocks
      // of 128, 4 lines took 16 per SM (2112 arrivals) from 3.54 to 2.61 µs per barrier (cg
      // 4.32) but 8 per SM from 2.21 to 2.55 and 1 per SM from 0.92 to 1.50.
      // poll_delay_cycles (from poll_delay_from arrivals on, without release lines): each waiter
      // lets that many clock cycles pass between its arrival, then always a red, and its first
      // poll, so that a thousand waiters do not crowd the line while the arrivals queue there.
      // On H100, blocks of 128 / 256 at 8 per SM: 1.66 / 1.69 µs per barrier with 800-1000
      // cycles against 1.86 / 1.89 (700: 1.75 / 1.82); at 1-4 per SM no delay saved more than
      // 0.02 µs (4 per SM: 600 cycles 1.28 against 1.30; 1 per SM: 100 cycles 0.89 against 0.88).
      // On H200 (blocks of 128, 2 / 4 / 8 per SM) 200 cycles from 200 arrivals took 0.88 / 1.13 /
      // 1.74 µs against 1.00 / 1.09 / 1.75 without a delay and 1.00 / 1.09 / 1.81 with 900 from
      // 1000; at 1 per SM it cost 0.87 against 0.84.
      // table (from table_from to table_max arrivals; it replaces sub-words, release lines,
      // atoms, sleeps and poll_delay there): the arrivals and the polls spread over a table of
      // rows × columns words, table_stride_lines lines apart. Arrival u adds, after one release
      // fence, to every word of row u mod rows (a lane per word) and polls, from
      // table_poll_delay cycles after its arrival, every row of column (u / rows) mod columns (a
      // lane per row; always relaxed loads and one acquire fence). One row below
      // table_rows_from arrivals, above it arrivals / arrivals_per_row rows (at least 2, at most
      // table_rows_max); arrivals / arrivals_per_column columns, at least table_columns and at
      // most table_columns_max. On H100 (one-off kernels of the same form, µs per barrier,
      // blocks of 128 at 1 / 2 / 4 / 8 / 16 per SM; cg 1.12 / 1.29 / 1.62 / 2.30 / 4.33): one
      // word 0.90 / 1.17 / 1.71 / 2.84 / 5.36, 1 × 4 words 0.89 / 1.04 / 1.29 / 1.92 / 3.54, 4 × 4
      // 0.95 / 1.13 / 1.18 / 1.44 / 2.34, 8 × 8 1.01 / 1.15 / 1.19 / 1.36 / 2.09; words 8 lines
      // apart lose (4 × 4: 1.22 / 1.53 / 2.58 at 4 / 8 / 16 per SM). On H200 (cg 0.97 / 0.98 /
      // 1.22 / 2.19 / 4.90): 2 × 4 words with 200 cycles 0.83 / 0.78 / 0.89 / 1.18 / 2.02, 8 × 4
      // with 300 cycles 0.91 / 0.89 / 0.91 / 0.95 / 1.68, one word 0.85 / 0.94 / 1.27 / 2.65 /
      // 5.39. In parpat (bench/barrier_sweep.py, same points): H100 with these defaults 0.90 /
      // 1.01 / 1.19 / 1.38 / 2.05 against 0.91 / 1.13 / 1.29 / 1.66 / 2.69 without the table
      // (100 cycles: 0.91 / 1.01 / 1.20 / 1.41 / 2.14); H200 with its rows below 0.84 / 0.81 /
      // 0.89 / 1.06 / 1.79 against 0.87 / 0.90 / 1.13 / 1.75 / 2.31 without (one row at 2 per SM:
      // 0.86; 250 cycles and 4 rows at 4 per SM: 0.90 for blocks of 128, 0.94 for 256).
      // Measured on H100 (stencil, ratio to cg): warp arrivals win for groups of 32 (0.83 against
      // 0.85), block arrivals for groups of 64 (0.82 against 0.95).
      {Backend::cuda, "", "barrier.flip.warp_arrivals_block_max", 32},
      {Backend::cuda, "", "barrier.flip.one_level_max", 1100},
      {Backend::cuda, "H200", "barrier.flip.one_level_max", 600},
      {Backend::cuda, "", "barrier.flip.subword_blocks", 0},
      {Backend::cuda, "", "barrier.flip.red_arrivals_max", 160},
      {Backend::cuda, "", "barrier.flip.poll", 1},
      {Backend::cuda, "", "barrier.flip.wait", 0},
      {Backend::cuda, "", "barrier.flip.poll_check_every", 1024},
      {Backend::cuda, "", "barrier.flip.poll_sleep_ns", 32},
      {Backend::cuda, "", "barrier.flip.poll_sleep_from", 1000},
      {Backend::cuda, "", "barrier.flip.release_lines", 4},
      {Backend::cuda, "", "barrier.flip.release_lines_from", 1500},
      {Backend::cuda, "", "barrier.flip.poll_delay_from", 1000},
      {Backend::cuda, "", "barrier.flip.poll_delay_cycles", 900},
      {Backend::cuda, "H200", "barrier.flip.poll_delay_from", 200},
      {Backend::cuda, "H200", "barrier.flip.poll_delay_cycles", 200},
      {Backend::cuda, "", "barrier.flip.table_from", 100},
      {Backend::cuda, "", "barrier.flip.table_max", 2200},
      {Backend::cuda, "", "barrier.flip.table_rows_from", 500},
      {Backend::cuda, "", "barrier.flip.arrivals_per_row", 132},
      {Backend::cuda, "", "barrier.flip.table_rows_max", 8},
      {Backend::cuda, "", "barrier.flip.table_columns", 4},
      {Backend::cuda, "", "barrier.flip.arrivals_per_column", 132},
      {Backend::cuda, "", "barrier.flip.table_columns_max", 8},
      {Backend::cuda, "", "barrier.flip.table_stride_lines", 128},
      {Backend::cuda, "", "barrier.flip.table_poll_delay", 200},
      {Backend::cuda, "H200", "barrier.flip.table_rows_from", 200},
      {Backend::cuda, "H200", "barrier.flip.arrivals_per_row", 264},
      {Backend::cuda, "H200", "barrier.flip.arrivals_per_column", 1 << 20},
      {Backend::cuda, "H200", "barrier.flip.table_poll_delay", 300},
      // Barrier `hierarchical`: the largest cluster (a power of two up to 16; above 8 is
      // non-portable), and release: 0 = one poller per cluster and a second cluster barrier,
      // 1 = every block polls the flip word, no second cluster barrier.
      {Backend::cuda, "", "barrier.hierarchical.cluster", 8},
      {Backend::cuda, "", "barrier.hierarchical.release", 0},
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
std::vector<Override> overrides() {
  std::vector<Override> found;
  const char* env = std::getenv("PARPAT_TUNING");
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

}  // namespace

void check_tuning_overrides() {
  overrides();
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
  std::vector<Override> set = overrides();
  for (auto it = set.rbegin(); it != set.rend(); ++it)
    if (it->key == key) return it->value;
  const Entry* generic = nullptr;
  for (const auto& e : table()) {
    if (e.backend != device.backend || key != e.key) continue;
    if (*e.device_pattern == '\0') {
      if (!generic) generic = &e;
    } else if (device.name.find(e.device_pattern) != std::string::npos) {
      return e.value;
    }
  }
  return generic ? generic->value : fallback;
}

}  // namespace parpat::detail
