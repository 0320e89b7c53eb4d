// The entry points each backend's runtime provides to the backend-independent core.
#pragma once

#include <memory>
#include <vector>

#include "parpat/device.hpp"

namespace parpat::detail {

class DeviceImpl;

#ifdef PARPAT_HAVE_CUDA
inline constexpr bool kHaveCuda = true;
#else
inline constexpr bool kHaveCuda = false;
#endif
#ifdef PARPAT_HAVE_OPENCL
inline constexpr bool kHaveOpencl = true;
#else
inline constexpr bool kHaveOpencl = false;
#endif

// Devices of one backend; empty when it is not built or its driver finds none.
std::vector<DeviceInfo> discover(Backend backend);
std::shared_ptr<DeviceImpl> open_device(Backend backend, int index);

std::vector<DeviceInfo> discover_cpu();
std::shared_ptr<DeviceImpl> open_cpu(int index);
std::vector<DeviceInfo> discover_cuda();
// CUDA device `ordinal` as discover_cuda() describes it, queried once per process (the raw
// CUDA calls and the grid barrier's launches read it on every call). Throws
// Error(invalid_argument) for an ordinal parpat did not find.
const DeviceInfo& cuda_device_info(int ordinal);
std::shared_ptr<DeviceImpl> open_cuda(int index);
std::vector<DeviceInfo> discover_opencl();
std::shared_ptr<DeviceImpl> open_opencl(int index);

// Verbose mode prints OpenCL/NVRTC build logs to stderr.
void set_verbose(bool on);
bool verbose();

}  // namespace parpat::detail
