// measure_peaks: dispatch to the backend's two probes, cached per device.
#include "parpat/measure.hpp"

#include <map>
#include <mutex>

#include "runtime/device_impl.hpp"
#include "runtime/measure_backends.hpp"

namespace parpat {

Peaks measure_peaks(const Device& device) {
  static std::mutex mutex;
  static std::map<const detail::DeviceImpl*, Peaks> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(&device.impl());
  if (it != cache.end()) return it->second;
  Peaks p;
  switch (device.backend()) {
    case Backend::cpu:
      p = detail::measure_cpu(device);
      break;
    case Backend::cuda:
#ifdef PARPAT_HAVE_CUDA
      p = detail::measure_cuda(device);
#endif
      break;
    case Backend::opencl:
#ifdef PARPAT_HAVE_OPENCL
      p = detail::measure_opencl(device);
#endif
      break;
  }
  cache.emplace(&device.impl(), p);
  return p;
}

}  // namespace parpat
