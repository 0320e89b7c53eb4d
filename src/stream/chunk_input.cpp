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

ChunkInput::ChunkInput(const Device& device, DType dtype, std::size_t chunk_bytes)
    : device_(device), dtype_(dtype) {
  copies_ = device.impl().make_copy_queue();
  if (copies_)
    for (auto& b : buffers_)
      b = Buffer(device, chunk_bytes);
}

ChunkInput::~ChunkInput() {
  // A copy still running writes into buffers_ (an error stopped the stream between stage() and
  // array()): it ends before the buffers go.
  for (const auto& s : staged_)
    try {
      copies_->wait(s.copied);
    } catch (...) {
    }
}

void ChunkInput::stage(const HostChunk& chunk) {
  if (!copies_ || staged_.size() == 2) return;
  const int b = static_cast<int>(staged_count_ % 2);
  // The buffer's last chunk (two chunks back) was handed out before the previous one: the work
  // enqueued so far on the stream (that chunk's kernels at least) comes before the copy
  // overwrites it.
  Fence after = staged_count_++ >= 2 ? copies_->mark_stream() : nullptr;
  const std::size_t bytes = static_cast<std::size_t>(chunk.elements) * dtype_size(dtype_);
  staged_.push_back(
      {chunk.first, b, copies_->upload(buffers_[b].handle(), chunk.host, bytes, after)});
}

Array ChunkInput::array(const HostChunk& chunk, std::vector<std::int64_t> shape) {
  const std::size_t bytes = static_cast<std::size_t>(chunk.elements) * dtype_size(dtype_);
  if (!copies_)
    return Array::view(Buffer::wrap(device_, const_cast<void*>(chunk.host), bytes), dtype_,
                       std::move(shape));
  if (staged_.empty() || staged_.front().first != chunk.first) {
    // Not the chunk staged ahead (a new pass over the input): those copies are dropped.
    for (const auto& s : staged_)
      copies_->wait(s.copied);
    staged_.clear();
    stage(chunk);
  }
  Staged s = staged_.front();
  staged_.erase(staged_.begin());
  transfer_ms_ += copies_->wait(s.copied);
  return Array::view(buffers_[s.buffer], dtype_, std::move(shape));
}

}  // namespace parpat::detail
