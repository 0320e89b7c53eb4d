// The CPU backend's thread pool (CpuDevice::parallel_for): every task of every call runs exactly
// once — with idle threads that poll, that sleep at once, or that fall asleep between calls; with
// more threads than cores; across calls larger than one round of the pool's word; from callers
// on several threads — and a task's exception reaches the caller and leaves the pool usable.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cpu/cpu_device.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

using detail::CpuDevice;

// `calls` calls of 0 to `most` tasks each (a pause after every `pause_every`-th, longer than
// the pool's polling, so that its threads fall asleep); true when every index of every call ran
// exactly once.
bool each_task_runs_once(CpuDevice& cpu, int calls, std::int64_t most, int pause_every,
                         std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> count(0, most);
  std::vector<std::atomic<int>> runs(static_cast<std::size_t>(most));
  for (int c = 0; c < calls; ++c) {
    const std::int64_t tasks = count(rng);
    for (std::int64_t i = 0; i < tasks; ++i)
      runs[static_cast<std::size_t>(i)].store(0, std::memory_order_relaxed);
    cpu.parallel_for(tasks, [&](std::int64_t i) {
      runs[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
    });
    for (std::int64_t i = 0; i < tasks; ++i) {
      const int ran = runs[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
      if (ran != 1) {
        ADD_FAILURE() << "call " << c << " of " << tasks << " tasks ran task " << i << " " << ran
                      << " times, seed " << run_seed();
        return false;
      }
    }
    if (pause_every > 0 && c % pause_every == pause_every - 1)
      std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  return true;
}

TEST(CpuPool, EveryTaskRunsOnceWhetherThreadsPollOrSleep) {
  std::mt19937_64 rng(run_seed());
  for (const char* setting :
       {"cpu.pool.spin_us=0", "cpu.pool.spin_us=100", "cpu.pool.spin_us=100000",
        "cpu.pool.spin_us=0,cpu.pool.threads=8", "cpu.pool.spin_us=100,cpu.pool.threads=8"}) {
    ScopedTuning tuning(setting);
    CpuDevice cpu;
    SCOPED_TRACE(std::string(setting) + ", " + std::to_string(cpu.threads()) + " threads");
    if (!each_task_runs_once(cpu, 2000, 70, 0, rng)) return;
    if (!each_task_runs_once(cpu, 100, 70, 7, rng)) return;
  }
}

TEST(CpuPool, CallsBeyondOneRoundRunEveryTaskOnce) {
  ScopedTuning tuning("cpu.pool.threads=4");
  CpuDevice cpu;
  const std::int64_t tasks = (std::int64_t{1} << 21) + 3;  // three rounds of at most 2^20 − 1
  std::vector<std::atomic<std::uint8_t>> runs(static_cast<std::size_t>(tasks));
  for (auto& r : runs)
    r.store(0, std::memory_order_relaxed);
  cpu.parallel_for(tasks, [&](std::int64_t i) {
    runs[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
  });
  std::int64_t wrong = 0;
  for (auto& r : runs)
    wrong += r.load(std::memory_order_relaxed) != 1;
  EXPECT_EQ(wrong, 0);
}

TEST(CpuPool, CallersOnSeveralThreadsTakeTurns) {
  ScopedTuning tuning("cpu.pool.threads=4");
  CpuDevice cpu;
  std::atomic<bool> ok{true};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&, t] {
      std::mt19937_64 rng(run_seed() + static_cast<std::uint64_t>(t));
      if (!each_task_runs_once(cpu, 500, 40, 0, rng)) ok = false;
    });
  for (auto& c : callers)
    c.join();
  EXPECT_TRUE(ok);
}

TEST(CpuPool, ATaskExceptionReachesTheCaller) {
  ScopedTuning tuning("cpu.pool.threads=4");
  CpuDevice cpu;
  for (std::int64_t bad : {0, 5, 63}) {
    std::atomic<int> ran{0};
    EXPECT_THROW(cpu.parallel_for(64,
                                  [&](std::int64_t i) {
                                    ran.fetch_add(1);
                                    if (i == bad) throw std::runtime_error("task failed");
                                  }),
                 std::runtime_error);
    EXPECT_EQ(ran.load(), 64) << "every other task still runs";
  }
  std::mt19937_64 rng(run_seed());
  EXPECT_TRUE(each_task_runs_once(cpu, 200, 64, 0, rng));
}

}  // namespace
}  // namespace parpat::test
