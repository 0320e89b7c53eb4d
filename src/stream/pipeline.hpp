// The chunk pipeline: reader threads fill host staging slots ahead of the consumer, which runs
// on the calling thread, one chunk at a time in order (upload, the pattern's plan, the fold).
// Reading overlaps everything the consumer does, and host memory stays at the slots' size
// whatever the input's. A chunk already read is shown to the device input before the consumer
// takes the chunk before it, so its upload overlaps that chunk's kernels (ChunkInput).
//
// How a chunk reaches host memory:
//   lent     the source lends its bytes (a mapped window of a file, host memory): no copy; only
//            for the CPU device, whose kernels read host memory
//   threads  a regular file on a GPU: each of the read threads preads its stripe of the chunk
//            into staging that the device copies from at full speed (page-locked)
//   in order a pipe, standard input or an .npz member: one thread reads the chunk in order
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "io/source.hpp"
#include "runtime/device_impl.hpp"

namespace parpat::detail {

struct HostChunk {
  const void* host = nullptr;
  std::uint64_t first = 0;    // element offset in the input
  std::int64_t elements = 0;  // > 0
};

// Elements of the chunk that starts at element `first` (the input's end may cut it short).
using ChunkCutter = std::function<std::int64_t(std::uint64_t first)>;

struct PipelineOptions {
  std::size_t chunk_bytes = 0;  // the largest chunk
  int slots = 3;                // chunks in flight
  int read_threads = 1;
};

class ChunkPipeline {
 public:
  ChunkPipeline(SourceImpl& source, DeviceImpl& device, const PipelineOptions& options);
  ~ChunkPipeline();
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // Reads the whole input once, from its first byte where the source can start again, and calls
  // consume(chunk) for each chunk, in order, on the calling thread. A reader's error is rethrown
  // here; an error in consume stops the readers. `ahead`, when given, sees each chunk once, in
  // order, before it is consumed: the chunk before consume(chunk), and the next one too when it
  // has been read by then (so its upload can overlap the consumer's work on this one).
  void run(const ChunkCutter& cut, const std::function<void(const HostChunk&)>& consume,
           const std::function<void(const HostChunk&)>& ahead = {});

  double read_ms() const { return read_ms_; }
  std::int64_t chunks() const { return chunks_; }

 private:
  struct Slot {
    void* staging = nullptr;
    std::shared_ptr<void> keep;  // a lent window
    HostChunk chunk;
    std::int64_t index = -1;  // the chunk it holds
    int parts_done = 0;
    bool ready = false;
  };

  void reader(int part, const ChunkCutter& cut);
  // The range of chunk c, computed in order the first time any thread asks (lock held).
  bool chunk_range(std::int64_t c, const ChunkCutter& cut, HostChunk& out);
  void fill(Slot& slot, const HostChunk& range, int part);
  void stop_readers() noexcept;

  SourceImpl& source_;
  DeviceImpl& device_;
  PipelineOptions options_;
  bool lend_ = false;
  int parts_ = 1;
  std::size_t item_ = 1;
  std::vector<Slot> slots_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<HostChunk> ranges_;
  std::int64_t total_chunks_ = -1;  // known once a reader has passed the end
  std::int64_t released_ = 0;       // chunks the consumer is done with
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> readers_;
  double first_read_ = -1, last_read_ = 0;  // seconds since start_, for read_ms
  double read_ms_ = 0;
  std::int64_t chunks_ = 0;
};

}  // namespace parpat::detail
