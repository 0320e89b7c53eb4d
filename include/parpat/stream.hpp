// parpat/stream.hpp — patterns over data that arrives in chunks: files larger than host or device
// memory, pipes, .npz members. A stream reads its input once (a histogram without a range reads
// it twice: a min/max pass first), through host staging of bounded size, and accumulates each
// chunk's partial results on the device, so the answer equals the in-memory call's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "parpat/histogram.hpp"
#include "parpat/pairwise.hpp"
#include "parpat/reduce.hpp"

namespace parpat {

namespace detail {
class SourceImpl;
}

// Where a stream's elements come from. The dtype and shape are known once the source is open
// (from the .npy header, or uint8 bytes for raw input).
class Source {
 public:
  // Opens an input by name:
  //   FILE           .npy (by its name or its magic), else raw bytes (uint8)
  //   FILE.npz       the one array an .npz archive holds (stored or deflated)
  //   FILE.npz:NAME  the member NAME (or NAME.npy) of an .npz archive
  //   -              standard input: .npy when it starts with the magic, else raw bytes
  // Throws Error(io) for a file that cannot be opened or read, Error(invalid_argument) for a
  // malformed or unsupported .npy header, a directory, an .npz member that does not exist (the
  // message lists the members) or an archive that is not a zip file.
  static Source open(const std::string& spec);
  // Memory the caller owns, laid out in C order; it must outlive the source.
  static Source from_host(DType dtype, std::vector<std::int64_t> shape, const void* data);

  // Reads raw input as elements of `dtype` in this machine's byte order, as numpy.fromfile does:
  // a 1-D array of (bytes / its size) elements. Throws Error(invalid_argument) for an .npy
  // source (its header gives its dtype) and for a length that is not a whole number of
  // elements; raw standard input, of unknown length, is checked when it ends (Error(io)).
  void read_raw_as(DType dtype);

  DType dtype() const;
  const std::vector<std::int64_t>& shape() const;
  std::int64_t size() const;  // elements; −1 while unknown (raw bytes on standard input)
  const std::string& name() const;
  bool raw() const;         // raw bytes rather than an .npy array
  bool rereadable() const;  // whether a second pass is possible (not standard input)

  explicit Source(std::shared_ptr<detail::SourceImpl> impl);
  detail::SourceImpl& impl() const { return *impl_; }

 private:
  std::shared_ptr<detail::SourceImpl> impl_;
};

struct StreamProgress {
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;  // 0 when unknown
  int pass = 1, passes = 1;       // a histogram's min/max pass is pass 1 of 2
};

struct StreamOptions {
  // Host staging for chunks in flight (0: the tuning key stream.staging_mib, 512 MiB).
  std::size_t staging_bytes = 0;
  // The largest chunk, which is also the device memory the stream takes for its input (0: the
  // tuning key stream.chunk_kib, 64 MiB, at most a quarter of the device's memory). A small
  // value forces many chunks, e.g. to test the chunked paths on small inputs.
  std::size_t chunk_bytes = 0;
  // Threads that read a file (0: the tuning key stream.read_threads).
  int read_threads = 0;
  // Called on the calling thread after every chunk.
  std::function<void(const StreamProgress&)> progress;
};

// Where the time went. Rates are bytes over the time of that stage alone.
struct StreamStats {
  std::uint64_t bytes = 0;  // input bytes streamed, every pass
  std::int64_t chunks = 0;  // every pass
  int passes = 1;
  double read_ms = 0;      // wall time of the reading, first byte to last, overlapped with the rest
  double transfer_ms = 0;  // host → device copies (0 on the CPU, which reads the mapped file)
  double kernel_ms = 0;    // the pattern's own device time, summed over chunks
  double wall_ms = 0;      // the whole call
  double read_GBps() const { return read_ms > 0 ? bytes / read_ms / 1e6 : 0; }
  double transfer_GBps() const { return transfer_ms > 0 ? bytes / transfer_ms / 1e6 : 0; }
};

// Reduces every element of `source` on `device` (any axis argument, as parpat::reduce of an
// Array). Float sums add the chunks' partial sums in float64, in chunk order: the same chunking
// gives the same bits. Arg ops return indices into the whole input (along the axis, for one).
// An N-D source streams as a 2-D one when its reduced axes make one block beside the kept ones
// (axis None; axes (1, 2) of a 3-D source, its rows; axis 0, its columns); axes that
// interleave with kept ones (0 and 2 of a 3-D source) read the whole input into device memory
// and reduce it there, or throw Error(invalid_argument) when the input and its gathered copy do
// not fit.
ReduceResult reduce(Source& source, const Device& device, const ReduceOptions& options = {},
                    const StreamOptions& stream = {}, StreamStats* stats = nullptr);

// The histogram of every element of `source` (taken flat). Bins without a range cost a min/max
// pass over the input first (stats->passes == 2), which a source that cannot be read twice
// (standard input) refuses with Error(invalid_argument).
HistogramResult histogram(Source& source, const Device& device, const HistogramBins& bins = {},
                          const HistogramOptions& options = {}, const StreamOptions& stream = {},
                          StreamStats* stats = nullptr);

// The weighted histogram of `source` (HistogramResult::sums): `weights` holds one float32 or
// float64 weight per element, in the same shape, and is read beside it in the same chunks (in
// order, or at each chunk's offset where it allows). Both must have a known length.
HistogramResult histogram(Source& source, Source& weights, const Device& device,
                          const HistogramBins& bins = {}, const HistogramOptions& options = {},
                          const StreamOptions& stream = {}, StreamStats* stats = nullptr);

// C[x] = Σ_y f(A[x], B[y]) with `a` resident on its device and B streamed from `b` (1-D float32)
// in chunks; each chunk's C is added in float64 on the host, in chunk order, and rounded once.
PairwiseResult pairwise(const Array& a, Source& b, const PairwiseOptions& options = {},
                        const StreamOptions& stream = {}, StreamStats* stats = nullptr);

}  // namespace parpat
