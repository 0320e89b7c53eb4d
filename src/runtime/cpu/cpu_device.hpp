// The CPU backend: host memory, a persistent pool of worker threads, wall-clock timing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/device_impl.hpp"

namespace parpat::detail {

class CpuDevice final : public DeviceImpl {
 public:
  CpuDevice();
  ~CpuDevice() override;

  const DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t bytes) override;
  void release(void* handle) noexcept override;
  void upload(void* handle, std::size_t offset, const void* src, std::size_t bytes) override;
  void download(const void* handle, std::size_t offset, void* dst, std::size_t bytes) override;
  void synchronize() override {}
  void timer_start() override;
  double timer_stop_ms() override;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs task(i) for i in [0, tasks) on all threads (the caller's included) and returns when
  // every task is done. Tasks are handed out in order, one at a time.
  void parallel_for(std::int64_t tasks, const std::function<void(std::int64_t)>& task);

 private:
  void worker_loop();

  DeviceInfo info_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::int64_t)>* task_ = nullptr;
  std::int64_t tasks_ = 0, next_ = 0, finished_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  double start_ms_ = 0;
};

}  // namespace parpat::detail
