// A distributed histogram from C++ under MPI: every rank opens the same .npy file, reads its own
// share on its own device (the GPUs of a host in turn, else the CPU) and gets the whole
// histogram; rank 0 prints it and checks it against a histogram of the whole file on one rank.
//   mpirun -n 4 mpi_histogram data.npy [bins]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "parpat/mpi.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    if (argc < 2)
      throw parpat::Error(parpat::ErrorKind::invalid_argument,
                          "usage: mpi_histogram FILE.npy [bins]");
    parpat::MpiCommunicator comm(MPI_COMM_WORLD, 120);
    parpat::Device device = parpat::Device::best();
    parpat::Source data = parpat::Source::open(argv[1]);
    const auto bins = parpat::HistogramBins::even(argc > 2 ? std::atoi(argv[2]) : 16);
    parpat::HistogramResult spread = parpat::histogram(data, device, comm, bins);
    if (comm.rank() == 0) {
      parpat::Source again = parpat::Source::open(argv[1]);
      parpat::HistogramResult alone = parpat::histogram(again, device, bins);
      const auto edges = spread.bins.edge_values();
      for (std::size_t i = 0; i < spread.counts.size(); ++i)
        std::printf("[%g, %g) %llu\n", edges[i], edges[i + 1],
                    static_cast<unsigned long long>(spread.counts[i]));
      if (alone.counts != spread.counts || alone.nan != spread.nan) {
        std::fprintf(stderr, "mpi_histogram: %d ranks counted otherwise than one\n", comm.size());
        status = 1;
      }
    }
  } catch (const parpat::Error& e) {
    std::fprintf(stderr, "mpi_histogram: %s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
