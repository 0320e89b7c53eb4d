// parpat/mpi.hpp — a Communicator over an MPI communicator the caller owns (MPI_Init done,
// MPI_Finalize after the last call). Header-only, so it is built against the caller's MPI; the
// library itself does not link MPI.
//
//   MPI_Init(&argc, &argv);
//   parpat::MpiCommunicator comm(MPI_COMM_WORLD);
//   parpat::Source data = parpat::Source::open("data.npy");  // every rank opens the same file
//   auto r = parpat::reduce(data, parpat::Device::best(), comm, {parpat::ReduceOp::sum});
//
// Collectives are non-blocking MPI calls polled until done or until the time limit, after which
// they throw Error(backend) with call() "timeout": no rank waits forever for a rank that stopped
// (MPI_Abort is then the caller's way out, as a collective cannot be cancelled).
#pragma once

#include <mpi.h>

#include <chrono>
#include <climits>
#include <string>
#include <thread>

#include "parpat/communicator.hpp"
#include "parpat/error.hpp"

namespace parpat {

namespace mpi_detail {

// Polls `request` until it completes (MPI_SUCCESS) or `timeout_seconds` pass (-1).
inline int wait_bounded(MPI_Request& request, double timeout_seconds) {
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    int done = 0;
    const int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(timeout_seconds))
      return -1;
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::microseconds(1000)) pause *= 2;
  }
}

// The two collectives on `comm`: MPI_SUCCESS, -1 on timeout, -2 for a size MPI cannot count,
// else MPI's error code.
inline int all_gather(MPI_Comm comm, const void* data, std::size_t bytes, void* out,
                      double timeout_seconds) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) return -2;
  MPI_Request request;
  const int n = static_cast<int>(bytes);
  const int rc = MPI_Iallgather(data, n, MPI_BYTE, out, n, MPI_BYTE, comm, &request);
  return rc != MPI_SUCCESS ? rc : wait_bounded(request, timeout_seconds);
}

inline int all_reduce_sum(MPI_Comm comm, std::uint64_t* values, std::size_t count,
                          double timeout_seconds) {
  if (count > static_cast<std::size_t>(INT_MAX)) return -2;
  MPI_Request request;
  const int rc = MPI_Iallreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_UINT64_T,
                                MPI_SUM, comm, &request);
  return rc != MPI_SUCCESS ? rc : wait_bounded(request, timeout_seconds);
}

// What a non-success code of the calls above means.
inline std::string describe(int rc, double timeout_seconds) {
  if (rc == -1)
    return "waited " + std::to_string(timeout_seconds) +
           " s at a collective for a rank that stopped";
  if (rc == -2) return "a collective of more than 2^31 - 1 items";
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace mpi_detail

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm, double timeout_seconds = 600)
      : comm_(comm), timeout_(timeout_seconds) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string engine() const override { return "mpi"; }

  void all_gather(const void* data, std::size_t bytes, void* out) override {
    check(mpi_detail::all_gather(comm_, data, bytes, out, timeout_), "MPI_Iallgather");
  }
  void all_reduce_sum(std::uint64_t* values, std::size_t count) override {
    check(mpi_detail::all_reduce_sum(comm_, values, count, timeout_), "MPI_Iallreduce");
  }
  using Communicator::all_gather;

 private:
  void check(int rc, const char* call) const {
    if (rc != MPI_SUCCESS)
      throw Error(ErrorKind::backend,
                  "rank " + std::to_string(rank_) + ": " + mpi_detail::describe(rc, timeout_),
                  "mpi", rc == -1 ? "timeout" : call, rc);
  }

  MPI_Comm comm_;
  double timeout_;
  int rank_ = 0, size_ = 1;
};

}  // namespace parpat
