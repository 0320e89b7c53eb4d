// Communicators over the threads of one process: each collective is a rendezvous under one
// mutex (an all-gather and an all-reduce are two: the ranks read, and write, each other's
// values in place between them). The
// last rank to arrive builds the answer and opens the next round; the others wait on a
// condition variable for the round to change, no longer than the time limit. Answers alternate
// between two buffers: a rank that starts round g + 1 before a slow rank has read round g's answer
// writes the other one, and round g + 2 cannot start before every rank has arrived in g + 1. A
// rank that times out breaks the group: every rank waiting or arriving later throws too.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "parpat/communicator.hpp"
#include "parpat/error.hpp"

namespace parpat {

namespace {

class ThreadGroup {
 public:
  ThreadGroup(int size, double timeout_seconds)
      : size_(size), timeout_(timeout_seconds), arrived_(static_cast<std::size_t>(size), false) {}

  // Rank `rank`'s part of one collective: `contribute` adds this rank's data to the round's
  // answer (under the lock), `take` reads the finished answer (after it).
  template <class Contribute, class Take>
  void rendezvous(int rank, Contribute&& contribute, Take&& take) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (broken_) throw stopped(rank);
    const std::uint64_t round = round_.load();
    std::vector<unsigned char>& answer = answers_[round & 1];
    if (count_ == 0) answer.clear();
    contribute(answer);
    arrived_[static_cast<std::size_t>(rank)] = true;
    if (++count_ == size_) {
      count_ = 0;
      arrived_.assign(arrived_.size(), false);
      ++round_;
      done_.notify_all();
    } else {
      // The others are usually close behind: a short spin saves the sleep and wake-up of the
      // condition variable (tens of microseconds a collective).
      lock.unlock();
      const auto spin_end = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
      while (round_.load() == round && std::chrono::steady_clock::now() < spin_end)
        std::this_thread::yield();
      lock.lock();
      const auto limit = std::chrono::duration<double>(timeout_);
      if (!done_.wait_for(lock, limit, [&] { return round_.load() != round || broken_; })) {
        // The group is broken from here on: the ranks still waiting, and any that arrive
        // later, throw instead of reading what this rank published.
        broken_ = true;
        done_.notify_all();
        std::string missing;
        for (std::size_t r = 0; r < arrived_.size(); ++r)
          if (!arrived_[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        throw Error(ErrorKind::backend,
                    "rank " + std::to_string(rank) + " waited " + std::to_string(timeout_) +
                        " s at a collective for rank(s) " + missing + ", which stopped",
                    "threads", "timeout");
      }
      if (round_.load() == round) throw stopped(rank);
    }
    // Round g's answer stays as it is until round g + 2 begins, which needs this rank in round
    // g + 1 first: the ranks read it at once, outside the lock.
    lock.unlock();
    take(answer);
  }

  int size() const { return size_; }

 private:
  static Error stopped(int rank) {
    return Error(ErrorKind::backend,
                 "rank " + std::to_string(rank) +
                     ": a rank of its group timed out at a collective, so the group stopped",
                 "threads", "timeout");
  }

  const int size_;
  const double timeout_;
  std::mutex mutex_;
  std::condition_variable done_;
  int count_ = 0;
  std::atomic<std::uint64_t> round_{0};  // written under the lock, read by spinning ranks too
  bool broken_ = false;                  // a rank timed out: every later collective throws
  std::vector<bool> arrived_;
  std::vector<unsigned char> answers_[2];
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(std::shared_ptr<ThreadGroup> group, int rank)
      : group_(std::move(group)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }
  std::string engine() const override { return "threads"; }

  // Each rank copies every rank's bytes into its own `out` itself, all at once.
  void all_gather(const void* data, std::size_t bytes, void* out) override {
    with_every_buffer(data, [&](const std::vector<void*>& buffers) {
      for (std::size_t r = 0; r < buffers.size() && bytes; ++r)
        std::memcpy(static_cast<unsigned char*>(out) + r * bytes, buffers[r], bytes);
    });
  }

  // Each rank sums its own share of the slots over every rank's values and writes each sum back
  // into every rank's values, all ranks at once (no copy, no buffer).
  void all_reduce_sum(std::uint64_t* values, std::size_t count) override {
    with_every_buffer(values, [&](const std::vector<void*>& buffers) {
      const std::size_t ranks = buffers.size(), r = static_cast<std::size_t>(rank_);
      for (std::size_t i = count * r / ranks, end = count * (r + 1) / ranks; i < end; ++i) {
        std::uint64_t sum = 0;
        for (void* v : buffers)
          sum += static_cast<std::uint64_t*>(v)[i];
        for (void* v : buffers)
          static_cast<std::uint64_t*>(v)[i] = sum;
      }
    });
  }

 private:
  // Every rank publishes where its buffer is, then `work(buffers)` reads (or writes) every
  // rank's buffer in place; a second rendezvous keeps every buffer alive and unchanged by its
  // owner until all ranks are done with it.
  template <class Work>
  void with_every_buffer(const void* mine, Work&& work) {
    const auto ranks = static_cast<std::size_t>(size());
    group_->rendezvous(
        rank_,
        [&](std::vector<unsigned char>& answer) {
          answer.resize(ranks * sizeof mine);
          std::memcpy(answer.data() + static_cast<std::size_t>(rank_) * sizeof mine, &mine,
                      sizeof mine);
        },
        [&](const std::vector<unsigned char>& answer) {
          std::vector<void*> buffers(ranks);
          std::memcpy(buffers.data(), answer.data(), ranks * sizeof mine);
          work(buffers);
        });
    group_->rendezvous(
        rank_, [](std::vector<unsigned char>&) {}, [](const std::vector<unsigned char>&) {});
  }

  std::shared_ptr<ThreadGroup> group_;
  int rank_;
};

}  // namespace

std::vector<std::shared_ptr<Communicator>> thread_communicators(int size, double timeout_seconds) {
  if (size < 1) throw_invalid("a thread communicator needs at least one rank");
  auto group = std::make_shared<ThreadGroup>(size, timeout_seconds);
  std::vector<std::shared_ptr<Communicator>> out;
  for (int r = 0; r < size; ++r)
    out.push_back(std::make_shared<ThreadCommunicator>(group, r));
  return out;
}

void on_ranks(const std::vector<std::shared_ptr<Communicator>>& comms,
              const std::function<void(Communicator&)>& rank) {
  std::vector<std::exception_ptr> failed(comms.size());
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < comms.size(); ++k)
    threads.emplace_back([&, k] {
      try {
        rank(*comms[k]);
      } catch (...) {
        failed[k] = std::current_exception();
      }
    });
  for (auto& t : threads)
    t.join();
  for (auto& f : failed)
    if (f) std::rethrow_exception(f);
}

void on_thread_ranks(int size, const std::function<void(Communicator&)>& rank,
                     double timeout_seconds) {
  on_ranks(thread_communicators(size, timeout_seconds), rank);
}

}  // namespace parpat
