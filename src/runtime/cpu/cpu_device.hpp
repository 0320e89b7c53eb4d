// The CPU backend: host memory, a persistent pool of worker threads, wall-clock timing.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/device_impl.hpp"
#include "runtime/tuning.hpp"

namespace parpat::detail {

// The thread pool: one thread per hardware thread (or `threads`), idle threads poll `spin_us`
// before they sleep. Measured: bench/tuning/measurements.json, cpu-pool.
struct CpuPoolPolicy : SameOnEveryDevice<CpuPoolPolicy> {
  static constexpr const char* kName = "cpu.pool";
  int threads = 0;  // 0: one per hardware thread
  int spin_us = 100;

  static const std::vector<Field<CpuPoolPolicy>>& fields() {
    static const std::vector<Field<CpuPoolPolicy>> f = {
        {"threads", &CpuPoolPolicy::threads, range(0, 1024)},
        {"spin_us", &CpuPoolPolicy::spin_us, range(0, 10000000)},
    };
    return f;
  }
};

class CpuDevice final : public DeviceImpl {
 public:
  CpuDevice();
  ~CpuDevice() override;

  const DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t bytes) override;
  void release(void* handle) noexcept override;
  void* allocate_host(std::size_t bytes) override;
  void release_host(void* host) noexcept override;
  void upload(void* handle, std::size_t offset, const void* src, std::size_t bytes) override;
  void download(const void* handle, std::size_t offset, void* dst, std::size_t bytes) override;
  void synchronize() override {}
  std::unique_ptr<Gather> make_gather(const GatherLayout& layout,
                                      std::size_t item_bytes) override;  // cpu_gather.cpp
  void timer_start(TimerMode mode = TimerMode::hold_queue) override;
  double timer_stop_ms() override;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs task(i) for i in [0, tasks) on all threads (the caller's included) and returns when
  // every task is done. Tasks are handed out in order, one at a time. Calls from several threads
  // take turns; a task must not call parallel_for.
  void parallel_for(std::int64_t tasks, const std::function<void(std::int64_t)>& task);

 private:
  void run_round(std::int64_t first, std::int64_t count);
  void claim_and_run();
  void wait_until_finished(std::int64_t count);
  void worker_loop();
  void stop_workers() noexcept;  // wakes every worker, has it leave and joins it

  DeviceInfo info_;
  std::vector<std::thread> workers_;
  std::chrono::nanoseconds spin_;  // how long an idle thread polls before it sleeps
  std::mutex submit_;              // one parallel_for at a time
  // The round being handed out: next unclaimed index and task count in one word (see
  // claim_and_run), the round's number, and its finished tasks, each in its own cache line so
  // that polls of the round number do not slow the claims.
  alignas(64) std::atomic<std::uint64_t> work_{0};
  alignas(64) std::atomic<std::uint64_t> round_{0};
  alignas(64) std::atomic<std::int64_t> finished_{0};
  std::atomic<const std::function<void(std::int64_t)>*> task_{nullptr};
  std::atomic<std::int64_t> first_{0};  // task index of the round's index 0
  // Sleeping: workers wait on wake_, the caller on done_, each after announcing it, so that the
  // other side notifies only when someone sleeps.
  std::mutex sleep_mutex_;
  std::condition_variable wake_, done_;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_sleeps_{false};
  std::atomic<bool> stop_{false};
  std::exception_ptr failure_;  // the first exception a task threw this call (sleep_mutex_)
};

}  // namespace parpat::detail
