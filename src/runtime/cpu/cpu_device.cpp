#include "runtime/cpu/cpu_device.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "runtime/backends.hpp"

namespace parpat::detail {

namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "host CPU";
}

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

DeviceInfo cpu_info() {
  DeviceInfo info;
  info.backend = Backend::cpu;
  info.name = cpu_model_name();
  info.vendor = "host";
  info.version = "std::thread";
  info.compute_units = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  info.global_memory = 0;
  std::ifstream mem("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  if (mem >> key >> kb) info.global_memory = kb * 1024;
  info.max_group_size = 1;
  info.independent_groups = true;
  return info;
}

}  // namespace

CpuDevice::CpuDevice() : info_(cpu_info()) {
  for (int i = 1; i < info_.compute_units; ++i)
    workers_.emplace_back([this] { worker_loop(); });
}

CpuDevice::~CpuDevice() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_)
    w.join();
}

void* CpuDevice::allocate(std::size_t bytes) {
  // 64-byte alignment lets the vector loops use aligned loads on any element type.
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) throw Error(ErrorKind::backend, "out of host memory", "cpu", "aligned_alloc");
  return p;
}

void CpuDevice::release(void* handle) noexcept {
  std::free(handle);
}

void CpuDevice::upload(void* handle, std::size_t offset, const void* src, std::size_t bytes) {
  std::memcpy(static_cast<char*>(handle) + offset, src, bytes);
}

void CpuDevice::download(const void* handle, std::size_t offset, void* dst, std::size_t bytes) {
  std::memcpy(dst, static_cast<const char*>(handle) + offset, bytes);
}

void CpuDevice::timer_start() {
  start_ms_ = now_ms();
}
double CpuDevice::timer_stop_ms() {
  return now_ms() - start_ms_;
}

void CpuDevice::parallel_for(std::int64_t tasks, const std::function<void(std::int64_t)>& task) {
  if (tasks <= 0) return;
  if (tasks == 1 || workers_.empty()) {
    for (std::int64_t i = 0; i < tasks; ++i)
      task(i);
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  task_ = &task;
  tasks_ = tasks;
  next_ = 0;
  finished_ = 0;
  ++generation_;
  wake_.notify_all();
  while (next_ < tasks_) {
    std::int64_t i = next_++;
    lock.unlock();
    task(i);
    lock.lock();
    ++finished_;
  }
  done_.wait(lock, [this] { return finished_ == tasks_; });
  task_ = nullptr;
}

void CpuDevice::worker_loop() {
  std::uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (generation_ != seen && task_ && next_ < tasks_); });
    if (stop_) return;
    seen = generation_;
    while (task_ && next_ < tasks_) {
      std::int64_t i = next_++;
      const auto* task = task_;
      lock.unlock();
      (*task)(i);
      lock.lock();
      if (++finished_ == tasks_) done_.notify_all();
    }
  }
}

std::vector<DeviceInfo> discover_cpu() {
  return {cpu_info()};
}

std::shared_ptr<DeviceImpl> open_cpu(int index) {
  if (index != 0) throw_invalid("the cpu backend has one device, index 0");
  return std::make_shared<CpuDevice>();
}

}  // namespace parpat::detail
