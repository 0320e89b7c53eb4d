// CPU probes: every thread streams its share of a large buffer (summing 64-bit words), and
// every thread runs independent float multiply-add chains that the compiler vectorises.
#include <cstdint>
#include <cstring>

#include "runtime/cpu/cpu_device.hpp"
#include "runtime/measure_backends.hpp"

namespace parpat::detail {

namespace {

constexpr int kChains = 32;

float fma_chains(int iters, float seed) {
  float acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = seed + j;
  for (int i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j)
      acc[j] = acc[j] * 0.999999f + 1e-7f;
  float s = 0;
  for (float a : acc)
    s += a;
  return s;
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
  p.read_gbps = words * sizeof(std::uint64_t) / (median(times) * 1e6);

  const int iters = 1 << 20;
  std::vector<float> sink(static_cast<std::size_t>(cpu.threads()));
  times.clear();
  for (int rep = 0; rep < 3; ++rep) {
    cpu.timer_start();
    cpu.parallel_for(cpu.threads(), [&](std::int64_t t) { sink[t] = fma_chains(iters, t); });
    times.push_back(cpu.timer_stop_ms());
  }
  p.fma_gflops = 2.0 * kChains * iters * cpu.threads() / (median(times) * 1e6);
  return p;
}

}  // namespace parpat::detail
