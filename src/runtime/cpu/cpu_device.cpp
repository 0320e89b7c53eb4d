#include "runtime/cpu/cpu_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "runtime/backends.hpp"
#include "runtime/tuning.hpp"

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

// The pool's work word: the next unclaimed index in the high half, the round's task count in
// the low half. A claim is one fetch_add of kNextOne, which always succeeds.
constexpr std::uint64_t kNextOne = std::uint64_t{1} << 32;
constexpr std::int64_t kMaxRound = std::int64_t{1} << 20;  // tasks per round

std::uint64_t next_of(std::uint64_t w) {
  return w >> 32;
}
std::uint64_t count_of(std::uint64_t w) {
  return w & 0xffffffffu;
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls done() until it holds (true) or `limit` has passed (false), yielding the core now and
// then so that on a busy machine the thread being waited for still gets to run.
template <class Done>
bool spin_until(Done done, std::chrono::nanoseconds limit) {
  auto start = std::chrono::steady_clock::now();
  for (unsigned polls = 1;; ++polls) {
    if (done()) return true;
    cpu_relax();
    if (polls % 64 == 0) {
      if (std::chrono::steady_clock::now() - start > limit) return done();
      if (polls % 1024 == 0) std::this_thread::yield();
    }
  }
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
  const CpuPoolPolicy policy = tuned<CpuPoolPolicy>(info_);
  spin_ = std::chrono::microseconds(policy.spin_us);
  const int threads = policy.threads > 0 ? policy.threads : info_.compute_units;
  // A thread that cannot start (a limit on processes or memory) must not leave the started
  // ones waiting on members that are about to be destroyed.
  try {
    for (int i = 1; i < threads; ++i)
      workers_.emplace_back([this] { worker_loop(); });
  } catch (const std::system_error& e) {
    const std::size_t started = workers_.size() + 1;
    stop_workers();
    throw Error(ErrorKind::backend,
                "the CPU pool started " + std::to_string(started) + " of its " +
                    std::to_string(threads) + " threads: " + e.what() +
                    " (PARPAT_TUNING=cpu.pool.threads=N asks for fewer)",
                "cpu", "std::thread", e.code().value());
  } catch (...) {
    stop_workers();
    throw;
  }
}

CpuDevice::~CpuDevice() {
  stop_workers();
}

void CpuDevice::stop_workers() noexcept {
  stop_.store(true);
  { std::lock_guard<std::mutex> lock(sleep_mutex_); }
  wake_.notify_all();
  for (auto& w : workers_)
    w.join();
  workers_.clear();
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

void* CpuDevice::allocate_host(std::size_t bytes) {
  return allocate(bytes);
}

void CpuDevice::release_host(void* host) noexcept {
  release(host);
}

void CpuDevice::upload(void* handle, std::size_t offset, const void* src, std::size_t bytes) {
  std::memcpy(static_cast<char*>(handle) + offset, src, bytes);
}

void CpuDevice::download(const void* handle, std::size_t offset, void* dst, std::size_t bytes) {
  std::memcpy(dst, static_cast<const char*>(handle) + offset, bytes);
}

namespace {
thread_local double timer_start_ms = 0;  // each thread times its own calls
}  // namespace

void CpuDevice::timer_start(TimerMode) {
  timer_start_ms = now_ms();
}
double CpuDevice::timer_stop_ms() {
  return now_ms() - timer_start_ms;
}

// The pool. A call publishes a round: its task count in the work word (next index 0), then a
// new round number. Every thread, the caller's included, claims indices by adding one to the
// word's next index and runs them; the caller returns once the round's finished count reaches
// its task count. Idle threads poll the round number for spin_ before they sleep, and the caller
// polls as long for the last tasks, so a run of short calls (a benchmark loop, a barrier's
// phases) never waits for a thread to wake up.
//
// A claim that returns an index below the word's count holds that index of the round whose
// word it incremented, late arrivals from an earlier round included: that round cannot end
// before the index finishes, and the caller writes the next round's task and first index only
// after it ends, so the ones read after the claim are the claimed round's. A claim at or past
// the count changes nothing that matters: each thread makes at most two per round, far below
// the 2^32 − count the next index may grow. A worker that sleeps announces it in sleepers_
// before its last look at the round number, and the caller reads sleepers_ after publishing,
// so one of the two sees the other; done_ and caller_sleeps_ work the same way the other round.
void CpuDevice::parallel_for(std::int64_t tasks, const std::function<void(std::int64_t)>& task) {
  if (tasks <= 0) return;
  if (tasks == 1 || workers_.empty()) {
    for (std::int64_t i = 0; i < tasks; ++i)
      task(i);
    return;
  }
  std::lock_guard<std::mutex> turn(submit_);
  task_.store(&task, std::memory_order_relaxed);
  for (std::int64_t first = 0; first < tasks; first += kMaxRound)
    run_round(first, std::min(kMaxRound, tasks - first));
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

void CpuDevice::run_round(std::int64_t first, std::int64_t count) {
  first_.store(first, std::memory_order_relaxed);
  finished_.store(0, std::memory_order_relaxed);
  work_.store(static_cast<std::uint64_t>(count));
  round_.store(round_.load(std::memory_order_relaxed) + 1);  // only the caller writes it
  if (sleepers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(sleep_mutex_); }
    wake_.notify_all();
  }
  claim_and_run();
  wait_until_finished(count);
}

void CpuDevice::claim_and_run() {
  for (;;) {
    const std::uint64_t w = work_.fetch_add(kNextOne, std::memory_order_acq_rel);
    const std::uint64_t next = next_of(w), count = count_of(w);
    if (next >= count) return;
    const auto* task = task_.load(std::memory_order_relaxed);
    try {
      (*task)(first_.load(std::memory_order_relaxed) + static_cast<std::int64_t>(next));
    } catch (...) {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      if (!failure_) failure_ = std::current_exception();
    }
    if (finished_.fetch_add(1) + 1 == static_cast<std::int64_t>(count) && caller_sleeps_.load()) {
      { std::lock_guard<std::mutex> lock(sleep_mutex_); }
      done_.notify_all();
    }
  }
}

void CpuDevice::wait_until_finished(std::int64_t count) {
  if (spin_until([&] { return finished_.load(std::memory_order_acquire) == count; }, spin_)) return;
  std::unique_lock<std::mutex> lock(sleep_mutex_);
  caller_sleeps_.store(true);
  done_.wait(lock, [&] { return finished_.load() == count; });
  caller_sleeps_.store(false, std::memory_order_relaxed);
}

void CpuDevice::worker_loop() {
  std::uint64_t seen = 0;
  auto news = [&] { return stop_.load() || round_.load() != seen; };
  for (;;) {
    if (!spin_until(news, spin_)) {
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, news);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stop_.load()) return;
    seen = round_.load(std::memory_order_acquire);
    claim_and_run();
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
