// parpat/communicator.hpp — the ranks a distributed pattern runs on, and the collectives it
// needs. A rank is one process (MPI), one GPU of a process (nccl_communicators) or one thread of a
// process (thread_communicators); every rank holds its own Device and its own share of the input.
//
// The Communicator class needs no library symbol, so a communicator over an engine the caller
// already runs (parpat/mpi.hpp) is a few inline lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace parpat {

class Device;

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

  // Whether the communicator moves data through device memory (NCCL): then the two collectives
  // below work on this rank's device memory (CUDA pointers), after the work queued on the
  // device's current stream. Every rank of a communicator answers alike. Without them the two
  // return false and touch nothing, and the caller goes through the host.
  virtual bool has_device_collectives() const { return false; }
  // The sum over ranks of `count` uint64 values, in place.
  virtual bool all_reduce_sum_on_device(std::uint64_t* /*device_values*/, std::size_t /*count*/) {
    return false;
  }
  // Every rank's `bytes` bytes, rank after rank, into `device_out` (size() × bytes).
  virtual bool all_gather_on_device(const void* /*device_data*/, std::size_t /*bytes*/,
                                    void* /*device_out*/) {
    return false;
  }

  std::vector<unsigned char> all_gather(const void* data, std::size_t bytes) {
    std::vector<unsigned char> out(bytes * static_cast<std::size_t>(size()));
    all_gather(data, bytes, out.data());
    return out;
  }
};

// `size` communicators over the threads of this process, one per rank: thread k uses the k-th.
// A collective that waits longer than `timeout_seconds` for the other threads throws
// Error(backend) naming the ranks that did not arrive (call() "timeout"); the group is then
// unusable: every later collective of its ranks throws too.
std::vector<std::shared_ptr<Communicator>> thread_communicators(int size,
                                                                double timeout_seconds = 600);

// One communicator per device of `devices`, rank k on devices[k], over NCCL within this process
// (one clique, as ncclCommInitAll makes): collectives run on the devices' streams over NVLink or
// PCIe, and the on-device sum above is NCCL's. The devices must be distinct CUDA devices. NCCL
// is loaded at run time: PARPAT_NCCL_LIBRARY, else libnccl.so.2 on the loader's path. Throws
// Error(unsupported) when parpat was built without CUDA or nccl.h, or NCCL cannot be loaded;
// Error(invalid_argument) for a device that is not CUDA or appears twice. NVLink multicast
// stays off (NCCL_NVLS_ENABLE=0 is set in this process's environment). A collective that waits
// longer than `timeout_seconds` aborts its NCCL communicator and throws call() "timeout".
std::vector<std::shared_ptr<Communicator>> nccl_communicators(const std::vector<Device>& devices,
                                                              double timeout_seconds = 600);

// One rank's communicator over NCCL for ranks in several processes or machines: every rank of
// `bootstrap` (an MpiCommunicator across machines; any communicator) calls it with its own CUDA
// device; rank 0 makes NCCL's id, sends it through `bootstrap`, and all join one clique. The
// on-device collectives go through NCCL, the host-memory ones through `bootstrap`, which the
// result keeps. Collective: a rank that cannot join (no CUDA device, no NCCL) stops every rank
// with its error. Loading, multicast and the time limit as for nccl_communicators.
std::shared_ptr<Communicator> nccl_communicator(const Device& device,
                                                std::shared_ptr<Communicator> bootstrap,
                                                double timeout_seconds = 600);

// The communicator one rank of `bootstrap` (an MPI job's rank) computes on `device` with: NCCL's
// over the ranks of `bootstrap` when every rank holds a CUDA device that no other rank of its
// host holds and NCCL loads on every rank; `bootstrap` itself otherwise. Collective over
// `bootstrap`: every rank gets the same engine, and a failure to join stops every rank alike.
std::shared_ptr<Communicator> rank_communicator(const Device& device,
                                                std::shared_ptr<Communicator> bootstrap,
                                                double timeout_seconds = 600);

// The communicators a call over `devices` in one process uses: NCCL's when every device is a
// distinct CUDA device and NCCL loads, else the threads'.
std::vector<std::shared_ptr<Communicator>> device_communicators(const std::vector<Device>& devices,
                                                                double timeout_seconds = 600);

// Runs `rank(*comms[k])` on one new thread per communicator and waits for them all; when any
// rank threw, rethrows the lowest such rank's exception.
void on_ranks(const std::vector<std::shared_ptr<Communicator>>& comms,
              const std::function<void(Communicator&)>& rank);

// on_ranks over thread_communicators(size, timeout_seconds).
void on_thread_ranks(int size, const std::function<void(Communicator&)>& rank,
                     double timeout_seconds = 600);

}  // namespace parpat
