#include "runtime/opencl/opencl_device.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include "runtime/backends.hpp"

namespace parpat::detail {

void rethrow_opencl(const cl::Error& e) {
  throw Error(ErrorKind::backend,
              std::string("OpenCL error ") + std::to_string(e.err()) + " in " + e.what(), "opencl",
              e.what(), e.err());
}

namespace {

struct Found {
  cl::Platform platform;
  cl::Device device;
};

std::vector<Found> enumerate() {
  std::vector<Found> out;
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error&) {
    return out;  // no ICD loader or no platform: the backend has no devices
  }
  for (auto& p : platforms) {
    std::vector<cl::Device> devices;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      continue;
    }
    for (auto& d : devices)
      out.push_back({p, d});
  }
  return out;
}

DeviceInfo describe(const Found& f, int index) {
  DeviceInfo info;
  info.backend = Backend::opencl;
  info.index = index;
  info.name = f.device.getInfo<CL_DEVICE_NAME>();
  info.vendor = f.platform.getInfo<CL_PLATFORM_NAME>();
  info.version =
      f.device.getInfo<CL_DEVICE_VERSION>() + ", " + f.device.getInfo<CL_DRIVER_VERSION>();
  info.compute_units = static_cast<int>(f.device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
  info.global_memory = f.device.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.local_memory = f.device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.l2_cache = f.device.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
  info.max_group_size = static_cast<int>(f.device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>());
  std::string ext = f.device.getInfo<CL_DEVICE_EXTENSIONS>();
  info.fp64 = ext.find("cl_khr_fp64") != std::string::npos;
  info.int64_atomics = ext.find("cl_khr_int64_base_atomics") != std::string::npos;
  bool gpu = (f.device.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_GPU) != 0;
  info.independent_groups = gpu;
  if (ext.find("cl_nv_device_attribute_query") != std::string::npos) {
    info.warp_size = 32;
    cl_uint major = 0, minor = 0;
    if (clGetDeviceInfo(f.device(), CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major,
                        nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(f.device(), CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof minor, &minor,
                        nullptr) == CL_SUCCESS)
      info.architecture = "sm_" + std::to_string(major) + std::to_string(minor);
  }
  return info;
}

}  // namespace

OpenclDevice::OpenclDevice(cl::Platform platform, cl::Device device, int index)
    : platform_(platform), device_(device) {
  try {
    info_ = describe({platform, device}, index);
    extensions_ = device_.getInfo<CL_DEVICE_EXTENSIONS>();
    context_ = cl::Context(device_);
    queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

void* OpenclDevice::allocate(std::size_t bytes) {
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(context_(), CL_MEM_READ_WRITE, bytes, nullptr, &status);
  if (status != CL_SUCCESS) {
    throw Error(ErrorKind::backend,
                "cannot allocate " + std::to_string(bytes) + " bytes on " + info_.name +
                    " (OpenCL error " + std::to_string(status) + ")",
                "opencl", "clCreateBuffer", status);
  }
  return mem;
}

void OpenclDevice::release(void* handle) noexcept {
  clReleaseMemObject(as_mem(handle));
}

namespace {

// The caller's queue of the calling thread, and the device it is for.
struct CallerQueue {
  const OpenclDevice* device = nullptr;
  cl::CommandQueue queue;
};
thread_local CallerQueue caller_queue;

}  // namespace

cl::CommandQueue& OpenclDevice::queue() {
  return caller_queue.device == this ? caller_queue.queue : queue_;
}

void* OpenclDevice::use_stream(void* native) {
  void* previous = caller_queue.device == this ? caller_queue.queue() : nullptr;
  if (!native) {
    caller_queue = {};
    return previous;
  }
  cl_context context = nullptr;
  if (clGetCommandQueueInfo(static_cast<cl_command_queue>(native), CL_QUEUE_CONTEXT, sizeof context,
                            &context, nullptr) != CL_SUCCESS ||
      context != context_())
    throw Error(ErrorKind::invalid_argument,
                "the command queue given to run() is not of " + info_.name + "'s context");
  caller_queue = {this, cl::CommandQueue(static_cast<cl_command_queue>(native), true)};
  return previous;
}

void* OpenclDevice::allocate_host(std::size_t bytes) {
  // NVIDIA: a buffer the driver allocates in host memory and maps once, which the driver pins,
  // so writes from it run at the bus's speed. Elsewhere (PoCL, which refuses writes from a
  // mapped region) plain aligned host memory.
  if (info_.vendor.find("NVIDIA") == std::string::npos) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw Error(ErrorKind::backend, "out of host memory", "opencl", "aligned_alloc");
    return p;
  }
  try {
    cl::Buffer buffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
    void* host = queue_.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes);
    std::lock_guard<std::mutex> lock(host_mutex_);
    host_buffers_.emplace(host, std::move(buffer));
    return host;
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

void OpenclDevice::release_host(void* host) noexcept {
  std::lock_guard<std::mutex> lock(host_mutex_);
  auto it = host_buffers_.find(host);
  if (it == host_buffers_.end()) {
    std::free(host);
    return;
  }
  clEnqueueUnmapMemObject(queue_(), it->second(), host, 0, nullptr, nullptr);
  clFinish(queue_());
  host_buffers_.erase(it);
}

void OpenclDevice::upload(void* handle, std::size_t offset, const void* src, std::size_t bytes) {
  cl_int status = clEnqueueWriteBuffer(queue()(), as_mem(handle), CL_TRUE, offset, bytes, src, 0,
                                       nullptr, nullptr);
  if (status != CL_SUCCESS)
    throw Error(ErrorKind::backend, "OpenCL upload failed (error " + std::to_string(status) + ")",
                "opencl", "clEnqueueWriteBuffer", status);
}

void OpenclDevice::download(const void* handle, std::size_t offset, void* dst, std::size_t bytes) {
  cl_int status = clEnqueueReadBuffer(queue()(), as_mem(const_cast<void*>(handle)), CL_TRUE, offset,
                                      bytes, dst, 0, nullptr, nullptr);
  if (status != CL_SUCCESS)
    throw Error(ErrorKind::backend, "OpenCL download failed", "opencl", "clEnqueueReadBuffer",
                status);
}

void OpenclDevice::synchronize() {
  try {
    queue().finish();
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

namespace {

// The timing window of the calling thread: the first and last launch it enqueued on `device`
// since its timer_start().
struct TimingWindow {
  const OpenclDevice* device = nullptr;
  cl::Event first, last;
};
thread_local TimingWindow timing_window;

}  // namespace

void OpenclDevice::timer_start(TimerMode) {
  synchronize();
  timing_window = TimingWindow{this, cl::Event(), cl::Event()};
}

double OpenclDevice::timer_stop_ms() {
  synchronize();
  TimingWindow window = std::move(timing_window);
  timing_window = TimingWindow{};
  if (window.device != this || !window.first() || !window.last()) return 0;
  try {
    cl_ulong start = window.first.getProfilingInfo<CL_PROFILING_COMMAND_START>();
    cl_ulong end = window.last.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    return end > start ? static_cast<double>(end - start) * 1e-6 : 0.0;
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

namespace {

// A built program's binary (NVIDIA: its PTX); empty where the platform gives none.
std::string binary_of(const cl::Program& program) {
  auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
  if (binaries.empty()) return {};
  return std::string(binaries[0].begin(), binaries[0].end());
}

// Writes a built program's binary and its build options to FOLDER as
// <source>-<hash of the options>.bin and .options, for reading what the device's compiler made.
void write_binary(const char* folder, const char* source_name, const std::string& options,
                  const cl::Program& program) {
  const std::string stem = std::string(folder) + "/" + source_name + "-" +
                           std::to_string(std::hash<std::string>{}(options));
  std::error_code ignored;  // a folder that cannot be made shows in the warning below
  std::filesystem::create_directories(folder, ignored);
  std::ofstream binary(stem + ".bin", std::ios::binary), text(stem + ".options");
  try {
    binary << binary_of(program);
  } catch (const cl::Error&) {
  }
  text << options << "\n";
  if (!binary || !text) std::cerr << "parpat: warning: cannot write " << stem << ".bin\n";
}

}  // namespace

cl::Program& OpenclDevice::program(const char* source_name, const std::string& source,
                                   const std::string& options) {
  std::string key = options + '\n' + source;
  std::lock_guard<std::mutex> lock(programs_mutex_);
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;
  cl::Program program(context_, source);
  std::string build_options = "-cl-std=CL1.2 " + options;
  // NVIDIA's compiler then adds each kernel's registers and shared memory to the log.
  if (verbose() && info_.vendor.find("NVIDIA") != std::string::npos)
    build_options += " -cl-nv-verbose";
  // With exceptions enabled a failed build throws; the log is read either way.
  cl_int status = CL_SUCCESS;
  try {
    status = program.build(std::vector<cl::Device>{device_}, build_options.c_str());
  } catch (const cl::Error& e) {
    status = e.err();
  }
  std::string log;
  try {
    log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
  } catch (const cl::Error&) {
  }
  if (verbose() && !log.empty())
    std::cerr << "[opencl] build log of " << source_name << " (" << build_options << "):\n"
              << log << "\n";
  if (status != CL_SUCCESS) {
    throw Error(
        ErrorKind::invalid_argument,
        std::string("OpenCL build of ") + source_name + " failed (" + build_options + "): " + log,
        "opencl", "clBuildProgram", status);
  }
  if (const char* folder = std::getenv("PARPAT_OPENCL_BINARIES"))
    write_binary(folder, source_name, build_options, program);
  return programs_.emplace(key, std::move(program)).first->second;
}

cl::Kernel OpenclDevice::kernel(const char* source_name, const std::string& source,
                                const std::string& options, const char* name) {
  cl::Program& p = program(source_name, source, options);
  try {
    return cl::Kernel(p, name);
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

std::string OpenclDevice::program_binary(const std::string& source, const std::string& options) {
  std::lock_guard<std::mutex> lock(programs_mutex_);
  auto it = programs_.find(options + '\n' + source);
  if (it == programs_.end()) throw_invalid("program was not built on this device");
  return binary_of(it->second);
}

void OpenclDevice::launch(cl::Kernel& k, std::size_t global, std::size_t local) {
  launch(k, cl::NDRange(global), cl::NDRange(local));
}

void OpenclDevice::launch(cl::Kernel& k, cl::NDRange global, cl::NDRange local) {
  cl::Event event;
  const bool timed = timing_window.device == this;
  try {
    queue().enqueueNDRangeKernel(k, cl::NullRange, global, local, nullptr,
                                 timed ? &event : nullptr);
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
  if (timed) {
    if (!timing_window.first()) timing_window.first = event;
    timing_window.last = event;
  }
}

bool OpenclDevice::has_extension(const std::string& name) const {
  return extensions_.find(name) != std::string::npos;
}

std::vector<DeviceInfo> discover_opencl() {
  std::vector<DeviceInfo> out;
  auto found = enumerate();
  for (std::size_t i = 0; i < found.size(); ++i) {
    try {
      out.push_back(describe(found[i], static_cast<int>(i)));
    } catch (const cl::Error&) {
    }
  }
  return out;
}

std::shared_ptr<DeviceImpl> open_opencl(int index) {
  auto found = enumerate();
  if (index < 0 || index >= static_cast<int>(found.size()))
    throw_invalid("no OpenCL device " + std::to_string(index));
  return std::make_shared<OpenclDevice>(found[index].platform, found[index].device, index);
}

}  // namespace parpat::detail
