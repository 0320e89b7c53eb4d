// parpat/device.hpp — backends, device discovery and the device handle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace parpat {

enum class Backend { cpu, cuda, opencl };

const char* backend_name(Backend b);
Backend parse_backend(const std::string& name);  // throws Error(invalid_argument)
bool backend_built(Backend b);                   // compiled into this build

// What `parpat info` prints about a device. Sizes are in bytes.
struct DeviceInfo {
  Backend backend = Backend::cpu;
  int index = 0;  // position among the devices of its backend
  std::string name;
  std::string vendor;
  std::string version;       // driver / platform version
  std::string architecture;  // "sm_90" on CUDA and NVIDIA OpenCL; empty where unknown
  int compute_units = 0;
  std::uint64_t global_memory = 0;
  std::uint64_t local_memory = 0;  // shared memory per group
  std::uint64_t l2_cache = 0;      // 0 when unknown
  int max_group_size = 0;
  int warp_size = 1;  // SIMD width the kernels may rely on (1 when unknown)
  bool fp64 = true;
  bool int64_atomics = true;
  bool cooperative_launch = false;
  // Whether groups of one launch make progress independently of each other (a GPU does; PoCL
  // runs them one after another on a thread, so a spin barrier there would hang).
  bool independent_groups = false;
};

// A CUDA stream (cudaStream_t) or OpenCL command queue (a cl_command_queue of the device's
// context) that the caller owns, for a plan's run() to enqueue its work on, so that it is ordered
// with the caller's own work on that stream; the default, null, is the device's own. The CPU
// backend runs synchronously and takes only the default.
struct Stream {
  void* native = nullptr;
};

namespace detail {
class DeviceImpl;
}

// A handle to one device of one backend. Cheap to copy; all copies share the same context,
// queue/stream and program cache.
class Device {
 public:
  // Opens device `index` of `backend`. Throws Error(invalid_argument) naming the devices that
  // exist when there is no such device.
  static Device open(Backend backend, int index = 0);
  // The fastest device present: a CUDA GPU, then an OpenCL GPU, then the CPU.
  static Device best();

  const DeviceInfo& info() const;
  Backend backend() const;
  std::string label() const;  // "cuda:0 NVIDIA H200"
  // Waits for the work queued on `stream` (default: the device's own stream or queue).
  void synchronize(Stream stream = {}) const;

  explicit Device(std::shared_ptr<detail::DeviceImpl> impl);
  detail::DeviceImpl& impl() const { return *impl_; }
  const std::shared_ptr<detail::DeviceImpl>& shared_impl() const { return impl_; }

 private:
  std::shared_ptr<detail::DeviceImpl> impl_;
};

// Every device of every backend built in, in backend order. Backends whose driver is missing
// contribute no devices (never an error).
std::vector<DeviceInfo> list_devices();

// The devices of a list such as "cuda:0,cuda:1", "cuda:all" or "cpu,opencl:0": one per
// comma-separated item, BACKEND[:INDEX] (index 0 by default) or BACKEND:all (every device of that
// backend). Throws Error(invalid_argument) for an item of another form, and the errors of
// Device::open for a device that does not exist.
std::vector<Device> open_devices(const std::string& list);

}  // namespace parpat
