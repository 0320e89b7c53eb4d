#include "stream/chunk_input.hpp"

#include <algorithm>

namespace parpat::detail {

void stream_tuning_policies(TuningCatalog& catalog) {
  catalog.add<StreamPolicy>();
}

PipelineOptions pipeline_options(const Device& device, const SourceImpl& source,
                                 const StreamOptions& options) {
  const DeviceInfo& info = device.info();
  const StreamPolicy policy = tuned<StreamPolicy>(info);
  std::size_t chunk =
      options.chunk_bytes ? options.chunk_bytes : static_cast<std::size_t>(policy.chunk_kib) << 10;
  if (info.backend != Backend::cpu && info.global_memory > 0)
    chunk = std::min<std::size_t>(chunk, static_cast<std::size_t>(info.global_memory / 4));
  std::size_t staging = options.staging_bytes ? options.staging_bytes
                                              : static_cast<std::size_t>(policy.staging_mib) << 20;
  const std::size_t item = dtype_size(source.dtype);
  PipelineOptions p;
  // Four chunks in flight where the budget allows (being read, waiting, in use), never fewer
  // than two; a budget below two chunks makes the chunks smaller.
  p.slots =
      static_cast<int>(std::clamp<std::size_t>(staging / std::max<std::size_t>(chunk, 1), 2, 4));
  chunk = std::min(chunk, staging / static_cast<std::size_t>(p.slots));
  p.chunk_bytes = std::max(chunk / item * item, item);
  p.read_threads = options.read_threads ? options.read_threads : policy.read_threads;
  return p;
}

ChunkInput::ChunkInput(const Device& device, std::size_t chunk_bytes) : device_(device) {
  if (device.backend() != Backend::cpu) staging_ = Buffer(device, chunk_bytes);
}

Array ChunkInput::array(const HostChunk& chunk, DType dtype, std::vector<std::int64_t> shape) {
  const std::size_t bytes = static_cast<std::size_t>(chunk.elements) * dtype_size(dtype);
  if (device_.backend() == Backend::cpu)
    return Array::view(Buffer::wrap(device_, const_cast<void*>(chunk.host), bytes), dtype,
                       std::move(shape));
  auto start = std::chrono::steady_clock::now();
  staging_.upload(chunk.host, bytes);
  transfer_ms_ += ms_since(start);
  return Array::view(staging_, dtype, std::move(shape));
}

}  // namespace parpat::detail
