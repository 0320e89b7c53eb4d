// The OpenCL copy queue: non-blocking writes on the calling thread's own in-order queue, with
// events that time them and let the host wait for them. A second queue would let the writes
// overlap the kernels, but with one NVIDIA's OpenCL lost the profiles of the kernels (error -7
// in the timer, with or without cross-queue events), so on OpenCL a chunk's upload runs between
// the kernels; in-order execution orders everything, so no fence is needed between the two.
#include "runtime/opencl/opencl_device.hpp"

namespace parpat::detail {

namespace {

void check(cl_int status, const char* call) {
  if (status != CL_SUCCESS)
    throw Error(ErrorKind::backend, std::string("OpenCL ") + call + " failed", "opencl", call,
                status);
}

class OpenclCopyQueue final : public CopyQueue {
 public:
  explicit OpenclCopyQueue(OpenclDevice& device) : device_(device) {}

  Fence upload(void* handle, const void* src, std::size_t bytes, const Fence&) override {
    cl_event done = nullptr;
    check(clEnqueueWriteBuffer(device_.queue()(), as_mem(handle), CL_FALSE, 0, bytes, src, 0,
                               nullptr, &done),
          "clEnqueueWriteBuffer");
    Fence fence(done, [](void* e) { clReleaseEvent(static_cast<cl_event>(e)); });
    check(clFlush(device_.queue()()), "clFlush");
    return fence;
  }

  Fence mark_stream() override { return nullptr; }

  double wait(const Fence& fence) override {
    auto e = static_cast<cl_event>(fence.get());
    check(clWaitForEvents(1, &e), "clWaitForEvents");
    cl_ulong begin = 0, end = 0;
    if (clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof begin, &begin, nullptr) !=
            CL_SUCCESS ||
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) !=
            CL_SUCCESS)
      return 0;
    return end > begin ? static_cast<double>(end - begin) * 1e-6 : 0;
  }

 private:
  OpenclDevice& device_;
};

}  // namespace

std::unique_ptr<CopyQueue> OpenclDevice::make_copy_queue() {
  return std::make_unique<OpenclCopyQueue>(*this);
}

}  // namespace parpat::detail
