// parpat/measure.hpp — the denominators of "% of peak": measured, not from a datasheet.
#pragma once

#include "parpat/device.hpp"

namespace parpat {

struct Peaks {
  double read_gbps = 0;   // streaming read of a buffer 4× the last-level cache, GB/s
  double fma_gflops = 0;  // FP32 fused multiply-add rate, 2 flops per FMA
};

// Runs two short kernels on `device` (a few hundred milliseconds) and reports their rates.
// Results are cached per device for the life of the process.
Peaks measure_peaks(const Device& device);

}  // namespace parpat
