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

}  // namespace parpat
