// parpat/communicator.hpp — the ranks a distributed pattern runs on, and the two collectives it
// needs. A rank is one process (MPI), one GPU of a process (NCCL) or one thread of a process
// (thread_communicators); every rank holds its own Device and its own share of the input.
//
// This header is self-contained (no library symbols), so a communicator over an engine the
// caller already runs (parpat/mpi.hpp) is a few inline lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace parpat {

// Collectives are called by every rank, in the same order, with the same sizes. Each call
// returns on every rank or throws on every rank that waited longer than the communicator's
// time limit (a rank that stopped): no collective waits forever. Such an Error has call()
// "timeout".
class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string engine() const = 0;  // "mpi", "nccl", "threads"

  // Every rank's `bytes` bytes of `data`, rank after rank, into `out` (size() × bytes), on every
  // rank.
  virtual void all_gather(const void* data, std::size_t bytes, void* out) = 0;
  // The element-wise sum over ranks of `count` uint64 values in host memory, in place, on every
  // rank. Integer sums do not depend on the order of the ranks.
  virtual void all_reduce_sum(std::uint64_t* values, std::size_t count) = 0;

  std::vector<unsigned char> all_gather(const void* data, std::size_t bytes) {
    std::vector<unsigned char> out(bytes * static_cast<std::size_t>(size()));
    all_gather(data, bytes, out.data());
    return out;
  }
};

// `size` communicators over the threads of this process, one per rank: thread k uses the k-th.
// A collective that waits longer than `timeout_seconds` for the other threads throws
// Error(backend) naming the ranks that did not arrive (call() "timeout"); the group is then
// unusable.
std::vector<std::shared_ptr<Communicator>> thread_communicators(int size,
                                                                double timeout_seconds = 600);

// Runs `rank(comm)` on `size` new threads, one rank each of thread_communicators(size), and waits
// for them all; when any rank threw, rethrows the lowest such rank's exception.
void on_thread_ranks(int size, const std::function<void(Communicator&)>& rank,
                     double timeout_seconds = 600);

}  // namespace parpat
