// Each backend's read-bandwidth and FMA-rate probes (see parpat/measure.hpp).
#pragma once

#include <algorithm>
#include <vector>

#include "parpat/measure.hpp"

namespace parpat::detail {

Peaks measure_cpu(const Device& device);
Peaks measure_cuda(const Device& device);
Peaks measure_opencl(const Device& device);

// Bytes streamed by the read probe: 4× the last-level cache, at least 256 MiB, at most a
// quarter of the device memory.
inline std::size_t probe_bytes(const DeviceInfo& info) {
  std::size_t want = std::max<std::size_t>(256u << 20, 4 * info.l2_cache);
  if (info.global_memory) want = std::min<std::size_t>(want, info.global_memory / 4);
  return want / 4096 * 4096;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace parpat::detail
