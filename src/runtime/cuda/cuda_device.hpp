// The CUDA backend: one stream per device, cudaMalloc'd memory, event timing. The benchmarks'
// timing holds the stream behind a blocking kernel while the timed work is enqueued, so the
// events measure device time only, not the host's launch overhead. A device may be shared by
// threads: the runtime API is thread-safe, and each thread times with events of its own.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "runtime/device_impl.hpp"

namespace parpat::detail {

// Throws Error(backend) naming the call when a CUDA runtime call fails.
void cuda_check(cudaError_t status, const char* call);
#define PARPAT_CUDA(call) ::parpat::detail::cuda_check((call), #call)

class CudaDevice final : public DeviceImpl {
 public:
  explicit CudaDevice(int ordinal);
  ~CudaDevice() override;

  const DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t bytes) override;
  void release(void* handle) noexcept override;
  void* allocate_host(std::size_t bytes) override;
  void release_host(void* host) noexcept override;
  void upload(void* handle, std::size_t offset, const void* src, std::size_t bytes) override;
  void download(const void* handle, std::size_t offset, void* dst, std::size_t bytes) override;
  void synchronize() override;
  std::unique_ptr<Gather> make_gather(const GatherLayout& layout,
                                      std::size_t item_bytes) override;  // cuda_gather.cu
  void timer_start(TimerMode mode = TimerMode::hold_queue) override;
  double timer_stop_ms() override;
  std::unique_ptr<CopyQueue> make_copy_queue() override;  // cuda_copy_queue.cu
  bool capture_begin() override;
  void capture_end() override;
  void replay() override;

  int ordinal() const { return ordinal_; }
  // The stream the calling thread's work goes to: a caller's (use_stream) or the device's own.
  cudaStream_t stream() const;
  void* use_stream(void* native) override;
  const cudaDeviceProp& props() const { return props_; }
  // Makes this device current on the calling thread (cheap when it already is).
  void activate() const;

 private:
  int ordinal_;
  cudaDeviceProp props_{};
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t graph_ = nullptr;       // the last captured work, instantiated
  volatile int* release_flag_ = nullptr;  // pinned, mapped: the host releases the blocking kernel
  int* release_flag_device_ = nullptr;
};

// Checks the last launch on `device`'s stream; call right after every kernel launch.
void check_launch(const char* kernel);

}  // namespace parpat::detail
