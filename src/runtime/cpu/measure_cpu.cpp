// CPU probes: every thread streams its share of a large buffer (summing 64-bit words), and
// every thread runs independent float multiply-add chains in vector lanes; each peak is the
// fastest of seven runs.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "runtime/cpu/cpu_device.hpp"
#include "runtime/cpu/simd.hpp"
#include "runtime/measure_backends.hpp"

namespace parpat::detail {

namespace {

// Independent multiply-add chains in float lanes, eight vectors of them so that each FMA unit
// always has a chain whose last result is ready; the same two builds as the kernels (simd.hpp),
// so the peak is the one the kernels can reach on this processor.
template <int kBytes>
PARPAT_CPU_INLINE float fma_chains(int iters, float seed) {
  using F = simd::Vec<float, kBytes>;
  constexpr int kVectors = 8, kWidth = kBytes / 4;
  F acc[kVectors];
  for (int k = 0; k < kVectors; ++k)
    for (int j = 0; j < kWidth; ++j)
      acc[k][j] = seed + static_cast<float>(k * kWidth + j);
  F scale, step;
  simd::splat(scale, 0.999999f);
  simd::splat(step, 1e-7f);
  for (int i = 0; i < iters; ++i)
    for (int k = 0; k < kVectors; ++k)
      acc[k] = acc[k] * scale + step;
  float s = 0;
  for (int k = 0; k < kVectors; ++k)
    for (int j = 0; j < kWidth; ++j)
      s += acc[k][j];
  return s;
}

PARPAT_CPU_AVX2 float fma_chains_avx2(int iters, float seed) {
  return fma_chains<simd::kAvx2Bytes>(iters, seed);
}

float fma_chains_baseline(int iters, float seed) {
  return fma_chains<simd::kBaselineBytes>(iters, seed);
}

// A peak is what the machine can do: the fastest of several runs, since other tenants of a
// shared host only ever slow a run down.
double fastest(const std::vector<double>& times) {
  return *std::min_element(times.begin(), times.end());
}

}  // namespace

Peaks measure_cpu(const Device& device) {
  auto& cpu = backend_cast<CpuDevice>(device);
  Peaks p;
  std::size_t words = (256u << 20) / sizeof(std::uint64_t);
  std::vector<std::uint64_t> buf(words);
  for (std::size_t i = 0; i < words; ++i)
    buf[i] = i;
  const std::int64_t tasks = cpu.threads() * 8;
  std::vector<std::uint64_t> sums(static_cast<std::size_t>(tasks));
  std::vector<double> times;
  for (int rep = 0; rep < 7; ++rep) {
    cpu.timer_start();
    cpu.parallel_for(tasks, [&](std::int64_t t) {
      std::size_t per = words / tasks, b = t * per;
      std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (std::size_t i = b; i + 4 <= b + per; i += 4) {
        s0 += buf[i];
        s1 += buf[i + 1];
        s2 += buf[i + 2];
        s3 += buf[i + 3];
      }
      sums[t] = s0 + s1 + s2 + s3;
    });
    times.push_back(cpu.timer_stop_ms());
  }
  p.read_gbps = words * sizeof(std::uint64_t) / (fastest(times) * 1e6);

  const int iters = 1 << 20;
  const bool avx2 = simd::cpu_has_avx2();
  std::vector<float> sink(static_cast<std::size_t>(cpu.threads()));
  times.clear();
  for (int rep = 0; rep < 7; ++rep) {
    cpu.timer_start();
    cpu.parallel_for(cpu.threads(), [&](std::int64_t t) {
      sink[t] = avx2 ? fma_chains_avx2(iters, t) : fma_chains_baseline(iters, t);
    });
    times.push_back(cpu.timer_stop_ms());
  }
  const int lanes = 8 * (avx2 ? simd::kAvx2Bytes : simd::kBaselineBytes) / 4;
  p.fma_gflops = 2.0 * lanes * iters * cpu.threads() / (fastest(times) * 1e6);

  times.clear();
  for (int rep = 0; rep < 203; ++rep) {
    cpu.timer_start();
    cpu.parallel_for(cpu.threads(), [](std::int64_t) {});
    double ms = cpu.timer_stop_ms();
    if (rep >= 3) times.push_back(ms);
  }
  p.launch_us = median(times) * 1e3;
  return p;
}

}  // namespace parpat::detail
