// The barrier floor probe: one thread times a thousand release fences and then a thousand relaxed
// loads of one L2 word, each load's address depending on the previous value so that each waits a
// whole round trip: the two costs under every grid barrier (BENCHMARKS.md's barrier tables).
#include <vector>

#include "bench.hpp"
#include "parpat/array.hpp"
#include "runtime/cuda/cuda_device.hpp"
#include "runtime/measure_backends.hpp"

namespace parpat::bench {

namespace {

constexpr int kBarrierProbeRounds = 1000;

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// `word` points at two zeroed words; ns receives the fences' and the loads' total times.
__global__ void barrier_probe(const unsigned* word, unsigned long long* ns) {
  unsigned long long start = global_ns();
  for (int i = 0; i < kBarrierProbeRounds; ++i)
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
  unsigned long long fenced = global_ns();
  unsigned v = 0;
  for (int i = 0; i < kBarrierProbeRounds; ++i)
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"
                 : "=r"(v)
                 : "l"(__cvta_generic_to_global(word + (v & 1u)))
                 : "memory");
  unsigned long long loaded = global_ns();
  ns[0] = fenced - start;
  ns[1] = loaded - fenced + (v & 1u);
}

}  // namespace

BarrierFloor measure_barrier_floor_cuda(const Device& device) {
  auto& cuda = detail::backend_cast<detail::CudaDevice>(device);
  cuda.activate();
  Buffer sink(device, 64);
  PARPAT_CUDA(cudaMemsetAsync(sink.handle(), 0, sink.bytes(), cuda.stream()));
  std::vector<double> fences, loads;
  for (int rep = 0; rep < 7; ++rep) {
    barrier_probe<<<1, 1, 0, cuda.stream()>>>(static_cast<const unsigned*>(sink.handle()),
                                              static_cast<unsigned long long*>(sink.handle()) + 1);
    detail::check_launch("barrier_probe");
    unsigned long long ns[2] = {};
    cuda.download(sink.handle(), sizeof(unsigned long long), ns, sizeof ns);
    if (rep < 2) continue;
    fences.push_back(ns[0] * 1e-3 / kBarrierProbeRounds);
    loads.push_back(ns[1] * 1e-3 / kBarrierProbeRounds);
  }
  return {detail::median(fences), detail::median(loads)};
}

}  // namespace parpat::bench
