// libparpat_mpi.so: the parpat command's MPI engine, loaded only when the command runs under an
// MPI launcher, so that the command itself starts without an MPI library. A C interface over
// the collectives of parpat/mpi.hpp (ranks.cpp wraps it in a Communicator).
#include "parpat/mpi.hpp"

#include <cstring>

extern "C" {

// MPI_Init; this process's rank and the job's size, and its rank and size among the ranks of
// its host. MPI_SUCCESS or MPI's error code.
int parpat_mpi_start(int* rank, int* size, int* local_rank, int* local_size) {
  int provided = 0;
  int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  MPI_Comm host;
  rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm_rank(host, local_rank);
  MPI_Comm_size(host, local_size);
  return MPI_Comm_free(&host);
}

int parpat_mpi_all_gather(const void* data, std::size_t bytes, void* out, double timeout) {
  return parpat::mpi_detail::all_gather(MPI_COMM_WORLD, data, bytes, out, timeout);
}

int parpat_mpi_all_reduce_sum(std::uint64_t* values, std::size_t count, double timeout) {
  return parpat::mpi_detail::all_reduce_sum(MPI_COMM_WORLD, values, count, timeout);
}

// The text of a code the calls above returned, cut to `capacity` bytes with the terminator.
void parpat_mpi_describe(int rc, double timeout, char* text, std::size_t capacity) {
  const std::string s = parpat::mpi_detail::describe(rc, timeout);
  const std::size_t n = std::min(s.size(), capacity - 1);
  std::memcpy(text, s.data(), n);
  text[n] = '\0';
}

void parpat_mpi_finish() {
  MPI_Finalize();
}

void parpat_mpi_abort(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
}
}
