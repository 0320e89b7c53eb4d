// Dispatches discovery and opening to the backends compiled into this build.
#include "runtime/backends.hpp"

#include <atomic>

#include "parpat/error.hpp"

namespace parpat::detail {

namespace {
std::atomic<bool> g_verbose{false};
}

void set_verbose(bool on) {
  g_verbose = on;
}
bool verbose() {
  return g_verbose;
}

std::vector<DeviceInfo> discover(Backend backend) {
  switch (backend) {
    case Backend::cpu:
      return discover_cpu();
    case Backend::cuda:
#ifdef PARPAT_HAVE_CUDA
      return discover_cuda();
#else
      return {};
#endif
    case Backend::opencl:
#ifdef PARPAT_HAVE_OPENCL
      return discover_opencl();
#else
      return {};
#endif
  }
  return {};
}

std::shared_ptr<DeviceImpl> open_device(Backend backend, int index) {
  switch (backend) {
    case Backend::cpu:
      return open_cpu(index);
#ifdef PARPAT_HAVE_CUDA
    case Backend::cuda:
      return open_cuda(index);
#endif
#ifdef PARPAT_HAVE_OPENCL
    case Backend::opencl:
      return open_opencl(index);
#endif
    default:
      break;
  }
  throw Error(ErrorKind::unsupported,
              std::string("backend ") + backend_name(backend) + " is not built in");
}

}  // namespace parpat::detail
