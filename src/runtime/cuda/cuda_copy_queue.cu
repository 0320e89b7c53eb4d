// The CUDA copy queue: a non-blocking stream of the device for uploads, which wait for events of
// the calling thread's stream. Copies time themselves with a pair of events.
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {

namespace {

struct CudaFence {
  cudaEvent_t begin = nullptr;  // uploads only: the copy's start, for its time
  cudaEvent_t end = nullptr;
  ~CudaFence() {
    if (begin) cudaEventDestroy(begin);
    if (end) cudaEventDestroy(end);
  }
};

cudaEvent_t new_event(bool timed) {
  cudaEvent_t e = nullptr;
  PARPAT_CUDA(cudaEventCreateWithFlags(&e, timed ? cudaEventDefault : cudaEventDisableTiming));
  return e;
}

class CudaCopyQueue final : public CopyQueue {
 public:
  explicit CudaCopyQueue(CudaDevice& device) : device_(device) {
    device_.activate();
    PARPAT_CUDA(cudaStreamCreateWithFlags(&copies_, cudaStreamNonBlocking));
  }
  ~CudaCopyQueue() override {
    device_.activate();
    cudaStreamSynchronize(copies_);
    cudaStreamDestroy(copies_);
  }

  Fence upload(void* handle, const void* src, std::size_t bytes, const Fence& after) override {
    device_.activate();
    if (after) PARPAT_CUDA(cudaStreamWaitEvent(copies_, fence_of(after).end, 0));
    auto fence = std::make_shared<CudaFence>();
    fence->begin = new_event(true);
    fence->end = new_event(true);
    PARPAT_CUDA(cudaEventRecord(fence->begin, copies_));
    PARPAT_CUDA(cudaMemcpyAsync(handle, src, bytes, cudaMemcpyHostToDevice, copies_));
    PARPAT_CUDA(cudaEventRecord(fence->end, copies_));
    return fence;
  }

  Fence mark_stream() override {
    device_.activate();
    auto fence = std::make_shared<CudaFence>();
    fence->end = new_event(false);
    PARPAT_CUDA(cudaEventRecord(fence->end, device_.stream()));
    return fence;
  }

  double wait(const Fence& fence) override {
    const CudaFence& f = fence_of(fence);
    PARPAT_CUDA(cudaEventSynchronize(f.end));
    float ms = 0;
    if (f.begin) PARPAT_CUDA(cudaEventElapsedTime(&ms, f.begin, f.end));
    return ms;
  }

 private:
  static const CudaFence& fence_of(const Fence& fence) {
    return *static_cast<const CudaFence*>(fence.get());
  }

  CudaDevice& device_;
  cudaStream_t copies_ = nullptr;
};

}  // namespace

std::unique_ptr<CopyQueue> CudaDevice::make_copy_queue() {
  return std::make_unique<CudaCopyQueue>(*this);
}

}  // namespace parpat::detail
