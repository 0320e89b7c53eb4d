// What every streamed pattern shares: the stream's settings for a device, and the device side of
// a chunk (an upload into one device buffer on a GPU, the host bytes themselves on the CPU).
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <vector>

#include "parpat/stream.hpp"
#include "runtime/tuning.hpp"
#include "stream/pipeline.hpp"

namespace parpat::detail {

// Streams: chunks of 16 MiB on GPUs (the device memory a stream's input takes; page-locking
// costs about 0.5 ms per MiB at start-up, and 16 MiB copies already run at the bus's speed) and
// 64 MiB windows on the CPU; four chunks in flight within 512 MiB of host staging; files read by
// 8 threads on a GPU. Measured: bench/tuning/measurements.json, stream-chunks.
struct StreamPolicy {
  static constexpr const char* kName = "stream";
  int chunk_kib = 16384;
  int staging_mib = 512;
  int read_threads = 8;

  static const std::vector<Field<StreamPolicy>>& fields() {
    static const std::vector<Field<StreamPolicy>> f = {
        {"chunk_kib", &StreamPolicy::chunk_kib, range(1, 1 << 22)},
        {"staging_mib", &StreamPolicy::staging_mib, range(1, 1 << 16)},
        {"read_threads", &StreamPolicy::read_threads, range(1, 64)},
    };
    return f;
  }
  static const std::vector<TableValue<StreamPolicy>>& table() {
    static const std::vector<TableValue<StreamPolicy>> t = {
        {Backend::cpu, Scope::any, "", &StreamPolicy::chunk_kib, 65536},
        {Backend::cpu, Scope::any, "", &StreamPolicy::read_threads, 2},
    };
    return t;
  }
};

// The pipeline's settings: the options given, else the device's tuning keys. A chunk takes at
// most a quarter of the device's memory, and the slots of staging fit the staging budget.
PipelineOptions pipeline_options(const Device& device, const SourceImpl& source,
                                 const StreamOptions& options);

// The device side of a stream's chunks. On a GPU, chunks go into two device buffers in turn
// through the device's copy queue: stage() starts the copy of the next chunk while the kernels of
// the one before still run, and array() waits for it. On the CPU the
// kernels read the host bytes in place.
class ChunkInput {
 public:
  // Chunks of `dtype` elements, of at most `chunk_bytes`.
  ChunkInput(const Device& device, DType dtype, std::size_t chunk_bytes);
  ~ChunkInput();
  ChunkInput(const ChunkInput&) = delete;
  ChunkInput& operator=(const ChunkInput&) = delete;

  // Starts the copy of `chunk`, the one after those passed to array() so far (the pipeline's
  // look-ahead); its host bytes must stay until array() has taken it.
  void stage(const HostChunk& chunk);
  // The chunk as an array of `shape` on the device; on a GPU the host waits for its copy to end,
  // so that the staging may be reused once this returns.
  Array array(const HostChunk& chunk, std::vector<std::int64_t> shape);
  // Device time of the copies.
  double transfer_ms() const { return transfer_ms_; }

 private:
  struct Staged {
    std::uint64_t first = 0;  // the chunk's first element
    int buffer = 0;
    Fence copied;
  };

  Device device_;
  DType dtype_;
  std::unique_ptr<CopyQueue> copies_;  // null on the CPU
  Buffer buffers_[2];
  std::int64_t staged_count_ = 0;
  std::vector<Staged> staged_;  // copies started, oldest first (at most two)
  double transfer_ms_ = 0;
};

// The pipeline of `source`, made on another thread while `meanwhile()` makes the first chunk's
// plans on this one: an OpenCL program's build overlaps the staging's allocation (on CUDA the
// driver runs the two one after the other).
template <class F>
std::unique_ptr<ChunkPipeline> make_pipeline_meanwhile(SourceImpl& source, const Device& device,
                                                       const PipelineOptions& options,
                                                       F&& meanwhile) {
  auto made = std::async(std::launch::async, [&] {
    return std::make_unique<ChunkPipeline>(source, device.impl(), options);
  });
  try {
    meanwhile();
  } catch (...) {
    made.wait();
    throw;
  }
  return made.get();
}

// Wall time since `start` in milliseconds.
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace parpat::detail
