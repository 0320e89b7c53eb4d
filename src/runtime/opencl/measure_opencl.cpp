// OpenCL probes (measure.cl): launch and time through the device's profiling queue.
#include "parpat/array.hpp"
#include "runtime/measure_backends.hpp"
#include "runtime/opencl/opencl_device.hpp"

extern const char* const parpat_cl_measure;

namespace parpat::detail {

Peaks measure_opencl(const Device& device) {
  auto& cl = backend_cast<OpenclDevice>(device);
  Peaks p;
  bool gpu = cl.info().independent_groups;
  std::size_t bytes = gpu ? probe_bytes(cl.info()) : (64u << 20);
  Buffer buf(device, bytes), sink(device, 64);
  std::vector<unsigned char> ones(bytes, 1);
  buf.upload(ones.data(), bytes);
  std::size_t groups = static_cast<std::size_t>(cl.info().compute_units) * (gpu ? 8 : 1);
  cl::Kernel read = cl.kernel("measure.cl", parpat_cl_measure, "", "read_probe");
  set_args(read, as_mem(buf.handle()), static_cast<cl_ulong>(bytes / 16), as_mem(sink.handle()));
  std::vector<double> times;
  for (int rep = 0; rep < (gpu ? 12 : 4); ++rep) {
    cl.timer_start();
    cl.launch(read, groups * 256, 256);
    double ms = cl.timer_stop_ms();
    if (rep >= 2) times.push_back(ms);
  }
  p.read_gbps = bytes / (median(times) * 1e6);

  int iters = gpu ? 4096 : 256;
  cl::Kernel fma = cl.kernel("measure.cl", parpat_cl_measure, "", "fma_probe");
  set_args(fma, as_mem(sink.handle()), 0.999f, 1e-3f, iters);
  times.clear();
  for (int rep = 0; rep < (gpu ? 7 : 3); ++rep) {
    cl.timer_start();
    cl.launch(fma, groups * 256, 256);
    double ms = cl.timer_stop_ms();
    if (rep >= 2) times.push_back(ms);
  }
  p.fma_gflops = 2.0 * 8 * iters * groups * 256.0 / (median(times) * 1e6);

  cl::Kernel empty = cl.kernel("measure.cl", parpat_cl_measure, "", "empty_probe");
  times.clear();
  for (int rep = 0; rep < 23; ++rep) {
    cl.timer_start();
    cl.launch(empty, 32, 32);
    double ms = cl.timer_stop_ms();
    if (rep >= 3) times.push_back(ms);
  }
  p.launch_us = median(times) * 1e3;
  return p;
}

}  // namespace parpat::detail
