// The OpenCL copy queue: a second in-order, profiling queue of the device's context for
// non-blocking writes. The device's own queue never waits for an event of the copy queue (with
// cross-queue markers and barriers, NVIDIA's OpenCL lost the profiles of the kernels behind them:
// error -7 in the timer). The host orders the two instead, at no cost to the overlap: a chunk's
// copy is staged before the kernels of the chunk before it are enqueued, so waiting for the queue
// then waits only for older chunks' work.
#include "runtime/opencl/opencl_device.hpp"

namespace parpat::detail {

namespace {

void check(cl_int status, const char* call) {
  if (status != CL_SUCCESS)
    throw Error(ErrorKind::backend, std::string("OpenCL ") + call + " failed", "opencl", call,
                status);
}

Fence fence_of_event(cl_event event) {
  return Fence(event, [](void* e) { clReleaseEvent(static_cast<cl_event>(e)); });
}

cl_event event_of(const Fence& fence) {
  return static_cast<cl_event>(fence.get());
}

class OpenclCopyQueue final : public CopyQueue {
 public:
  explicit OpenclCopyQueue(OpenclDevice& device) : device_(device) {
    try {
      copies_ = cl::CommandQueue(device.context(), device.device(), CL_QUEUE_PROFILING_ENABLE);
    } catch (const cl::Error& e) {
      rethrow_opencl(e);
    }
  }
  ~OpenclCopyQueue() override { clFinish(copies_()); }

  Fence upload(void* handle, const void* src, std::size_t bytes, const Fence& after) override {
    cl_event wait_for = after ? event_of(after) : nullptr;
    cl_event done = nullptr;
    check(clEnqueueWriteBuffer(copies_(), as_mem(handle), CL_FALSE, 0, bytes, src, after ? 1 : 0,
                               after ? &wait_for : nullptr, &done),
          "clEnqueueWriteBuffer");
    Fence fence = fence_of_event(done);
    check(clFlush(copies_()), "clFlush");
    return fence;
  }

  Fence mark_stream() override {
    device_.synchronize();
    return nullptr;
  }

  void stream_waits(const Fence& fence) override {
    if (fence) wait(fence);
  }

  double wait(const Fence& fence) override {
    cl_event e = event_of(fence);
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
  cl::CommandQueue copies_;
};

}  // namespace

std::unique_ptr<CopyQueue> OpenclDevice::make_copy_queue() {
  return std::make_unique<OpenclCopyQueue>(*this);
}

}  // namespace parpat::detail
