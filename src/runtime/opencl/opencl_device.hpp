// The OpenCL backend: one context and in-order profiling queue per device, a program cache keyed
// by (device, source, options), and device-side timing from kernel event profiles. A device may be
// shared by threads: the program cache is locked, every kernel() call creates a kernel object of
// its own (kernel arguments are per object, so plans never share one), and a timer covers the
// launches of the thread that started it.
#pragma once

#define CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include <map>
#include <mutex>
#include <string>

#include "parpat/dtype.hpp"
#include "runtime/device_impl.hpp"

namespace parpat::detail {

// Rethrows a cl::Error (or anything else) as parpat::Error naming the OpenCL call.
[[noreturn]] void rethrow_opencl(const cl::Error& e);

class OpenclDevice final : public DeviceImpl {
 public:
  OpenclDevice(cl::Platform platform, cl::Device device, int index);

  const DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t bytes) override;
  void release(void* handle) noexcept override;
  void* allocate_host(std::size_t bytes) override;
  void release_host(void* host) noexcept override;
  void upload(void* handle, std::size_t offset, const void* src, std::size_t bytes) override;
  void download(const void* handle, std::size_t offset, void* dst, std::size_t bytes) override;
  void synchronize() override;
  std::unique_ptr<Gather> make_gather(const GatherLayout& layout,
                                      std::size_t item_bytes) override;  // opencl_gather.cpp
  void timer_start(TimerMode mode = TimerMode::hold_queue) override;
  double timer_stop_ms() override;
  std::unique_ptr<CopyQueue> make_copy_queue() override;  // opencl_copy_queue.cpp

  // A new kernel object for `name` of `source` built with `options`; the program is built once
  // per device and options. The caller owns the object (a plan keeps its kernels, so no two
  // plans set arguments on the same one). A build failure throws Error(invalid_argument)
  // carrying the build log. `source_name` is only used in messages.
  cl::Kernel kernel(const char* source_name, const std::string& source, const std::string& options,
                    const char* name);
  // Compiled program binary (PTX on NVIDIA) of a program built through kernel().
  std::string program_binary(const std::string& source, const std::string& options);

  // Enqueues `k` over `global` work-items in groups of `local` (1-D or 2-D).
  void launch(cl::Kernel& k, std::size_t global, std::size_t local);
  void launch(cl::Kernel& k, cl::NDRange global, cl::NDRange local);

  bool has_extension(const std::string& name) const;
  const cl::Device& device() const { return device_; }
  const cl::Context& context() const { return context_; }
  // The queue the calling thread's work goes to: a caller's (use_stream) or the device's own.
  cl::CommandQueue& queue();
  void* use_stream(void* native) override;

 private:
  cl::Program& program(const char* source_name, const std::string& source,
                       const std::string& options);

  cl::Platform platform_;
  cl::Device device_;
  cl::Context context_;
  cl::CommandQueue queue_;
  DeviceInfo info_;
  std::string extensions_;
  std::mutex programs_mutex_;
  std::map<std::string, cl::Program> programs_;  // std::map: references stay valid on insertion
  std::mutex host_mutex_;
  std::map<void*, cl::Buffer> host_buffers_;  // allocate_host's mapped buffers by host pointer
};

// Binds arguments in order by value: set_args(k, a, b, c) sets argument 0 to a, 1 to b, ...
// Scalars and cl_mem handles alike (the C++ bindings refuse raw pointers such as cl_mem).
template <class... Args>
void set_args(cl::Kernel& k, const Args&... args) {
  cl_uint i = 0;
  (k.setArg(i++, sizeof(Args), &args), ...);
}

// The OpenCL C type of a dtype's elements.
inline const char* opencl_type_name(DType t) {
  switch (t) {
    case DType::boolean:  // numpy's bool is one byte, 0 or 1
    case DType::uint8:
      return "uchar";
    case DType::int8:
      return "char";
    case DType::int16:
      return "short";
    case DType::uint16:
    case DType::float16:  // the bits; kernels that take them convert
    case DType::bfloat16:
      return "ushort";
    case DType::int32:
      return "int";
    case DType::uint32:
      return "uint";
    case DType::int64:
      return "long";
    case DType::uint64:
      return "ulong";
    case DType::float32:
      return "float";
    case DType::float64:
      break;
  }
  return "double";
}

// A Buffer's handle as the cl_mem the kernels take.
inline cl_mem as_mem(void* handle) {
  return static_cast<cl_mem>(handle);
}

}  // namespace parpat::detail
