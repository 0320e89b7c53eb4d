// Communicators over NCCL: a clique of the CUDA devices of one process (nccl_communicators), or
// one rank per process of a bootstrap communicator (nccl_communicator). NCCL is loaded with
// dlopen on the first use, so parpat's binaries start on machines without it. Every peer is
// connected while the communicators are made (NCCL_RUNTIME_CONNECT=0), so a collective only
// enqueues its kernel and never waits on the host for a peer. The ranks of other processes are
// non-blocking communicators (ncclConfig_t::blocking = 0): their set-up, which waits for every
// process, is polled against the time limit. A clique within one process is made by one thread
// for all its GPUs and is blocking: its collectives launch at once, where a non-blocking
// communicator hands each to NCCL's own thread (H200 pair, 512 KiB all-reduce: 22 µs against
// 60–74 µs). Either way this side polls ncclCommGetAsyncError and the stream until the work is
// done, no longer than the time limit — a rank that stopped makes the others abort their
// communicator and throw, never hang.
// NCCL moves what is in device memory; collectives on host memory (a few bytes of agreement,
// partial results already on the host) go through a host communicator of the same ranks: the
// threads' shared memory within a process, the bootstrap (MPI) between processes.
#include <cuda_runtime.h>
#include <nccl.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include "distributed/agreement.hpp"
#include "parpat/communicator.hpp"
#include "parpat/device.hpp"
#include "parpat/error.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda/cuda_device.hpp"
#include "runtime/loaded_library.hpp"

namespace parpat {

namespace {

#define PARPAT_NCCL_FUNCTIONS(X) \
  X(ncclGetUniqueId)             \
  X(ncclCommInitRankConfig)      \
  X(ncclGroupStart)              \
  X(ncclGroupEnd)                \
  X(ncclAllReduce)               \
  X(ncclAllGather)               \
  X(ncclCommGetAsyncError)       \
  X(ncclCommAbort)               \
  X(ncclGetErrorString)

struct Nccl {
  PARPAT_NCCL_FUNCTIONS(PARPAT_LIBRARY_MEMBER)
  std::string missing;  // why NCCL could not be loaded; empty when it was
};

const Nccl& nccl() {
  static const Nccl api = [] {
    Nccl n;
    std::vector<std::string> names;
    if (const char* path = std::getenv("PARPAT_NCCL_LIBRARY")) names.push_back(path);
    names.push_back("libnccl.so.2");
    void* lib = detail::open_first_library(names);
    if (!lib) {
      n.missing =
          "NCCL (libnccl.so.2) was not found on the loader's path; set "
          "PARPAT_NCCL_LIBRARY to its file";
      return n;
    }
#define PARPAT_NCCL_BIND(name) detail::bind_function(lib, #name, n.name, n.missing, "NCCL");
    PARPAT_NCCL_FUNCTIONS(PARPAT_NCCL_BIND)
#undef PARPAT_NCCL_BIND
    return n;
  }();
  if (!api.missing.empty()) throw Error(ErrorKind::unsupported, api.missing, "nccl", "dlopen");
  return api;
}
#undef PARPAT_NCCL_FUNCTIONS

[[noreturn]] void throw_nccl(ncclResult_t status, const std::string& call) {
  throw Error(ErrorKind::backend, call + " failed: " + nccl().ncclGetErrorString(status), "nccl",
              call, static_cast<int>(status));
}

// Polls until `done()` holds and `comm` has no NCCL work in progress, for no longer than
// `timeout_seconds`: the first millisecond by yielding, then by sleeps that double up to 1 ms.
// Returns false on timeout; throws NCCL's asynchronous error.
template <class Done>
bool poll_bounded(ncclComm_t comm, double timeout_seconds, const char* call, Done&& done) {
  const auto start = std::chrono::steady_clock::now();
  const auto limit = std::chrono::duration<double>(timeout_seconds);
  auto pause = std::chrono::microseconds(0);
  for (;;) {
    ncclResult_t state = ncclSuccess;
    nccl().ncclCommGetAsyncError(comm, &state);
    if (state != ncclSuccess && state != ncclInProgress) throw_nccl(state, call);
    if (state == ncclSuccess && done()) return true;
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > limit) return false;
    if (waited < std::chrono::milliseconds(1)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(std::chrono::microseconds(1000), pause * 2 + std::chrono::microseconds(1));
    }
  }
}

// The clique's NCCL communicators, aborted (which frees them without waiting for the others) when
// the last rank's Communicator goes.
struct Clique {
  std::vector<ncclComm_t> comms;
  ~Clique() {
    for (ncclComm_t c : comms)
      if (c) nccl().ncclCommAbort(c);
  }
};

class NcclCommunicator final : public Communicator {
 public:
  // The rank of `host` (the same ranks, for host memory) whose NCCL communicator is
  // clique->comms[slot].
  NcclCommunicator(std::shared_ptr<Clique> clique, std::size_t slot,
                   std::shared_ptr<Communicator> host, Device device, double timeout)
      : clique_(std::move(clique)),
        slot_(slot),
        host_(std::move(host)),
        comm_(clique_->comms[slot]),
        device_(std::move(device)),
        timeout_(timeout) {}

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  std::string engine() const override { return "nccl"; }

  void all_gather(const void* data, std::size_t bytes, void* out) override {
    host_->all_gather(data, bytes, out);
  }

  void all_reduce_sum(std::uint64_t* values, std::size_t count) override {
    host_->all_reduce_sum(values, count);
  }

  bool has_device_collectives() const override { return true; }

  bool all_reduce_sum_on_device(std::uint64_t* device_values, std::size_t count) override {
    if (count == 0) return true;
    run("ncclAllReduce", [&](cudaStream_t s) {
      return nccl().ncclAllReduce(device_values, device_values, count, ncclUint64, ncclSum, comm_,
                                  s);
    });
    return true;
  }

  bool all_gather_on_device(const void* device_data, std::size_t bytes, void* device_out) override {
    if (bytes == 0) return true;
    run("ncclAllGather", [&](cudaStream_t s) {
      return nccl().ncclAllGather(device_data, device_out, bytes, ncclUint8, comm_, s);
    });
    return true;
  }

 private:
  detail::CudaDevice& cuda() const { return static_cast<detail::CudaDevice&>(device_.impl()); }

  // Enqueues one collective on the device's stream, after the work already there (stream order:
  // NCCL's kernel starts when the kernels that wrote the data have completed), and waits,
  // bounded, until it completed.
  template <class Enqueue>
  void run(const char* call, Enqueue&& enqueue) {
    if (!comm_)
      throw Error(ErrorKind::backend,
                  "rank " + std::to_string(rank()) +
                      "'s NCCL communicator was aborted after an earlier failure",
                  "nccl", "aborted");
    cuda().activate();
    const cudaStream_t stream = cuda().stream();
    cudaError_t query = cudaSuccess;
    bool done = false;
    try {
      const ncclResult_t status = enqueue(stream);
      if (status != ncclSuccess && status != ncclInProgress) throw_nccl(status, call);
      done = poll_bounded(comm_, timeout_, call, [&] {
        query = cudaStreamQuery(stream);
        return query != cudaErrorNotReady;
      });
    } catch (...) {
      abort();  // NCCL's rule after an error: its kernel may never finish otherwise
      throw;
    }
    if (!done) {
      // The others stopped: this rank's communicator cannot finish the collective; aborting it
      // ends its kernel. The clique is unusable from here on.
      abort();
      throw Error(ErrorKind::backend,
                  "rank " + std::to_string(rank()) + " waited " + std::to_string(timeout_) +
                      " s in " + call + " for ranks that stopped",
                  "nccl", "timeout");
    }
    PARPAT_CUDA(query);
  }

  void abort() {
    nccl().ncclCommAbort(comm_);
    clique_->comms[slot_] = nullptr;
    comm_ = nullptr;
  }

  std::shared_ptr<Clique> clique_;
  std::size_t slot_;
  std::shared_ptr<Communicator> host_;
  ncclComm_t comm_;
  Device device_;
  double timeout_;
};

int ordinal_of(const Device& device) {
  return static_cast<const detail::CudaDevice&>(device.impl()).ordinal();
}

// Never NVLink multicast, in this process or any it starts, and every peer connected at set-up:
// set before NCCL starts.
void keep_multicast_off() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::setenv("NCCL_NVLS_ENABLE", "0", 1);
    ::setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
    ::setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
    // Peers connected at set-up, not by the first collective that needs them.
    ::setenv("NCCL_RUNTIME_CONNECT", "0", 1);
  });
}

ncclConfig_t config_of(bool blocking) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = blocking ? 1 : 0;
  return config;
}

}  // namespace

std::vector<std::shared_ptr<Communicator>> nccl_communicators(const std::vector<Device>& devices,
                                                              double timeout_seconds) {
  if (devices.empty()) throw_invalid("NCCL communicators need at least one device");
  std::set<int> ordinals;
  for (const Device& d : devices) {
    if (d.backend() != Backend::cuda)
      throw_invalid("NCCL communicators take CUDA devices, not " + d.label());
    if (!ordinals.insert(ordinal_of(d)).second)
      throw_invalid("NCCL communicators take distinct devices; " + d.label() + " appears twice");
  }
  const Nccl& api = nccl();
  keep_multicast_off();
  ncclUniqueId id;
  if (const ncclResult_t s = api.ncclGetUniqueId(&id); s != ncclSuccess)
    throw_nccl(s, "ncclGetUniqueId");
  auto clique = std::make_shared<Clique>();
  clique->comms.assign(devices.size(), nullptr);
  int current = 0;
  PARPAT_CUDA(cudaGetDevice(&current));
  ncclConfig_t config = config_of(true);
  if (const ncclResult_t s = api.ncclGroupStart(); s != ncclSuccess)
    throw_nccl(s, "ncclGroupStart");
  // Nothing throws between the group's start and end, so the group is always closed and the
  // calling thread's device restored.
  cudaError_t set = cudaSuccess;
  ncclResult_t init = ncclSuccess;
  for (std::size_t k = 0; k < devices.size(); ++k) {
    if ((set = cudaSetDevice(ordinal_of(devices[k]))) != cudaSuccess) break;
    init = api.ncclCommInitRankConfig(&clique->comms[k], static_cast<int>(devices.size()), id,
                                      static_cast<int>(k), &config);
    if (init == ncclInProgress) init = ncclSuccess;
    if (init != ncclSuccess) break;
  }
  const ncclResult_t group = api.ncclGroupEnd();
  cudaSetDevice(current);
  PARPAT_CUDA(set);
  if (init != ncclSuccess) throw_nccl(init, "ncclCommInitRankConfig");
  if (group != ncclSuccess && group != ncclInProgress) throw_nccl(group, "ncclGroupEnd");
  // One time limit for the whole clique, not one per communicator.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (ncclComm_t c : clique->comms) {
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (!poll_bounded(c, std::max(0.0, left), "ncclCommInitRankConfig", [] { return true; }))
      throw Error(
          ErrorKind::backend,
          "NCCL's communicators were not ready after " + std::to_string(timeout_seconds) + " s",
          "nccl", "timeout");
  }
  const auto host = thread_communicators(static_cast<int>(devices.size()), timeout_seconds);
  std::vector<std::shared_ptr<Communicator>> out;
  for (std::size_t k = 0; k < devices.size(); ++k)
    out.push_back(
        std::make_shared<NcclCommunicator>(clique, k, host[k], devices[k], timeout_seconds));
  return out;
}

std::shared_ptr<Communicator> nccl_communicator(const Device& device,
                                                std::shared_ptr<Communicator> bootstrap,
                                                double timeout_seconds) {
  if (!bootstrap) throw_invalid("an NCCL rank needs a bootstrap communicator");
  Communicator& boot = *bootstrap;
  ncclUniqueId id{};
  detail::step_then_agree(boot, [&] {
    if (device.backend() != Backend::cuda)
      throw_invalid("an NCCL rank takes a CUDA device, not " + device.label());
    const Nccl& api = nccl();
    keep_multicast_off();
    if (boot.rank() == 0)
      if (const ncclResult_t s = api.ncclGetUniqueId(&id); s != ncclSuccess)
        throw_nccl(s, "ncclGetUniqueId");
  });
  std::vector<ncclUniqueId> ids(static_cast<std::size_t>(boot.size()));
  boot.all_gather(&id, sizeof id, ids.data());
  auto clique = std::make_shared<Clique>();
  clique->comms.assign(1, nullptr);
  detail::step_then_agree(boot, [&] {
    int current = 0;
    PARPAT_CUDA(cudaGetDevice(&current));
    PARPAT_CUDA(cudaSetDevice(ordinal_of(device)));
    ncclConfig_t config = config_of(false);
    const ncclResult_t init =
        nccl().ncclCommInitRankConfig(&clique->comms[0], boot.size(), ids[0], boot.rank(), &config);
    cudaSetDevice(current);
    if (init != ncclSuccess && init != ncclInProgress) throw_nccl(init, "ncclCommInitRankConfig");
    if (!poll_bounded(clique->comms[0], timeout_seconds, "ncclCommInitRankConfig",
                      [] { return true; }))
      throw Error(ErrorKind::backend,
                  "rank " + std::to_string(boot.rank()) +
                      "'s NCCL communicator was not ready after " +
                      std::to_string(timeout_seconds) + " s",
                  "nccl", "timeout");
  });
  return std::make_shared<NcclCommunicator>(clique, 0, std::move(bootstrap), device,
                                            timeout_seconds);
}

std::shared_ptr<Communicator> rank_communicator(const Device& device,
                                                std::shared_ptr<Communicator> bootstrap,
                                                double timeout_seconds) {
  if (!bootstrap) throw_invalid("a rank needs a bootstrap communicator");
  // Each rank's claim: its host and its GPU's PCI address, or no address when it cannot join
  // (not a CUDA device, or NCCL does not load). Every rank sees every claim, so all decide alike.
  struct Claim {
    char host[64] = {};
    char bus[32] = {};
  };
  Claim mine;
  ::gethostname(mine.host, sizeof mine.host - 1);
  std::string why;
  if (device.backend() != Backend::cuda) {
    why = "rank " + std::to_string(bootstrap->rank()) + " computes on " + device.label();
  } else {
    try {
      nccl();
      PARPAT_CUDA(cudaDeviceGetPCIBusId(mine.bus, sizeof mine.bus - 1, ordinal_of(device)));
    } catch (const Error& e) {
      why = e.what();
      mine.bus[0] = '\0';
    }
  }
  std::vector<Claim> claims(static_cast<std::size_t>(bootstrap->size()));
  bootstrap->all_gather(&mine, sizeof mine, claims.data());
  std::set<std::pair<std::string, std::string>> taken;
  bool joinable = bootstrap->size() > 1;
  for (std::size_t r = 0; r < claims.size(); ++r) {
    const std::string host(claims[r].host, strnlen(claims[r].host, sizeof claims[r].host));
    const std::string bus(claims[r].bus, strnlen(claims[r].bus, sizeof claims[r].bus));
    if (bus.empty()) {
      joinable = false;
      if (why.empty()) why = "rank " + std::to_string(r) + " cannot join NCCL";
    } else if (!taken.insert({host, bus}).second) {
      joinable = false;
      if (why.empty()) why = "ranks share the GPU " + bus + " of " + host;
    }
  }
  if (!joinable) {
    if (detail::verbose() && bootstrap->size() > 1)
      std::cerr << "[parpat] ranks over " << bootstrap->engine() << ", not NCCL: " << why << "\n";
    return bootstrap;
  }
  return nccl_communicator(device, std::move(bootstrap), timeout_seconds);
}

}  // namespace parpat
