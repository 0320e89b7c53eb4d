// What every streamed pattern shares: the stream's settings for a device, and the device side of
// a chunk (an upload into one device buffer on a GPU, the host bytes themselves on the CPU).
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <vector>

#include "parpat/stream.hpp"
#include "stream/pipeline.hpp"

namespace parpat::detail {

// The pipeline's settings: the options given, else the device's tuning keys. A chunk takes at
// most a quarter of the device's memory, and the slots of staging fit the staging budget.
PipelineOptions pipeline_options(const Device& device, const SourceImpl& source,
                                 const StreamOptions& options);

class ChunkInput {
 public:
  ChunkInput(const Device& device, std::size_t chunk_bytes);
  // The chunk as an array of `shape` on the device (copied there from staging on a GPU).
  Array array(const HostChunk& chunk, DType dtype, std::vector<std::int64_t> shape);
  double transfer_ms() const { return transfer_ms_; }

 private:
  Device device_;
  Buffer staging_;  // GPU: the device copy of the current chunk
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
