// parpat/measure.hpp — the denominators of "% of peak": measured, not from a datasheet.
#pragma once

#include "parpat/device.hpp"

namespace parpat {

struct Peaks {
  double read_gbps = 0;   // streaming read of a buffer 4× the last-level cache, GB/s
  double fma_gflops = 0;  // FP32 fused multiply-add rate, 2 flops per FMA
  // The floor of a short case: an empty kernel of one group, timed like a bench case's single
  // launch (CUDA: between events behind a blocking kernel; OpenCL: its profiling span; CPU: one
  // parallel_for of an empty task per thread), µs.
  double launch_us = 0;
  // The same kernel as 100 launches captured into one CUDA graph, replay time / 100, µs (0 where
  // the backend has no graphs).
  double graph_launch_us = 0;
};

// Runs short kernels on `device` (a few hundred milliseconds) and reports their rates.
// Results are cached per device for the life of the process.
Peaks measure_peaks(const Device& device);

// The host side of a stream from a file: how fast its bytes reach the device.
struct HostRates {
  // Host → device copies of 256 MiB from the backend's staging memory (page-locked on CUDA, a
  // mapped ALLOC_HOST_PTR buffer on NVIDIA OpenCL) into a device buffer, synchronous uploads,
  // the fastest of five, GB/s; 0 on the CPU backend, which reads the file in place.
  double h2d_pinned_gbps = 0;
  // pread of a 512 MiB file already in the page cache into a host buffer of its size, the
  // fastest of three, GB/s: by one thread, and by `threads` threads reading a stripe each
  // (threads = min(8, hardware threads)). 0 when no temporary file could be written.
  double page_cache_read_gbps_1 = 0;
  double page_cache_read_gbps_n = 0;
  int threads = 0;
};

// Measures HostRates for `device` (about a second: the temporary file, in $TMPDIR or /tmp, is
// written, read and deleted). The page-cache rates are the machine's, measured once per process;
// every result is cached per device.
HostRates measure_host_rates(const Device& device);

}  // namespace parpat
