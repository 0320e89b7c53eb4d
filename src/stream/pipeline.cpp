#include "stream/pipeline.hpp"

#include <algorithm>
#include <chrono>

#include "parpat/error.hpp"

namespace parpat::detail {

namespace {

double now_s() {
  using clock = std::chrono::steady_clock;
  static const clock::time_point start = clock::now();
  return std::chrono::duration<double>(clock::now() - start).count();
}

}  // namespace

ChunkPipeline::ChunkPipeline(SourceImpl& source, DeviceImpl& device, const PipelineOptions& options)
    : source_(source), device_(device), options_(options) {
  item_ = dtype_size(source.dtype);
  // The CPU reads lent windows in place; a GPU needs the bytes in staging it can copy from.
  std::shared_ptr<void> probe;
  lend_ = device.info().backend == Backend::cpu && source.elements() > 0 &&
          source.map(0, item_, probe) != nullptr;
  probe.reset();
  parts_ = !lend_ && source.random_access() ? std::max(options.read_threads, 1) : 1;
  options_.slots = std::max(options_.slots, 2);
  std::size_t slot_bytes = options.chunk_bytes;
  if (source.elements() >= 0)
    slot_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(slot_bytes, source.data_bytes()));
  slots_.resize(static_cast<std::size_t>(options_.slots));
  if (!lend_) {
    try {
      for (auto& s : slots_)
        s.staging = device.allocate_host(std::max<std::size_t>(slot_bytes, 1));
    } catch (...) {
      for (auto& s : slots_)
        if (s.staging) device.release_host(s.staging);
      throw;
    }
  }
}

ChunkPipeline::~ChunkPipeline() {
  stop_readers();
  for (auto& s : slots_)
    if (s.staging) device_.release_host(s.staging);
}

void ChunkPipeline::stop_readers() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (auto& t : readers_)
    if (t.joinable()) t.join();
  readers_.clear();
}

bool ChunkPipeline::chunk_range(std::int64_t c, const ChunkCutter& cut, HostChunk& out) {
  while (static_cast<std::int64_t>(ranges_.size()) <= c) {
    if (total_chunks_ >= 0) return false;
    std::uint64_t first = ranges_.empty() ? 0
                                          : ranges_.back().first +
                                                static_cast<std::uint64_t>(ranges_.back().elements);
    std::int64_t total = source_.elements();
    if (total >= 0 && first >= static_cast<std::uint64_t>(total)) {
      total_chunks_ = static_cast<std::int64_t>(ranges_.size());
      return false;
    }
    std::int64_t n = cut(first);
    if (total >= 0) n = std::min<std::int64_t>(n, total - static_cast<std::int64_t>(first));
    ranges_.push_back({nullptr, first, n});
  }
  out = ranges_[static_cast<std::size_t>(c)];
  return true;
}

// Brings part `part` of the chunk `range` into `slot`. A read that ends early (unknown length)
// shortens the chunk and ends the input.
void ChunkPipeline::fill(Slot& slot, const HostChunk& range, int part) {
  const std::uint64_t offset = range.first * item_;
  const std::size_t bytes = static_cast<std::size_t>(range.elements) * item_;
  if (lend_) {
    slot.chunk.host = source_.map(offset, bytes, slot.keep);
    if (!slot.chunk.host) throw Error(ErrorKind::io, "cannot map " + source_.name);
    return;
  }
  auto* staging = static_cast<unsigned char*>(slot.staging);
  if (parts_ > 1) {
    // Stripes in whole 64 KiB blocks, so that the threads' reads stay large and aligned.
    constexpr std::size_t kBlock = std::size_t{1} << 16;
    std::size_t blocks = (bytes + kBlock - 1) / kBlock;
    std::size_t begin = std::min(bytes, blocks * static_cast<std::size_t>(part) / parts_ * kBlock);
    std::size_t end =
        std::min(bytes, blocks * static_cast<std::size_t>(part + 1) / parts_ * kBlock);
    if (end > begin) source_.read_at(offset + begin, staging + begin, end - begin);
    return;
  }
  std::size_t got = source_.read_next(staging, bytes);
  if (got < bytes) {
    if (source_.elements() >= 0)
      throw Error(ErrorKind::io, source_.name + ": the input ended early");
    if (got % item_ != 0)
      throw Error(ErrorKind::io, source_.name + ": its last " + dtype_name(source_.dtype) +
                                     " element is cut short (" + std::to_string(got % item_) +
                                     " of " + std::to_string(item_) + " bytes)");
    std::lock_guard<std::mutex> lock(mutex_);
    slot.chunk.elements = static_cast<std::int64_t>(got / item_);
    auto& mine = ranges_[static_cast<std::size_t>(slot.index)];
    mine.elements = slot.chunk.elements;
    total_chunks_ = slot.chunk.elements > 0 ? slot.index + 1 : slot.index;
  }
}

void ChunkPipeline::reader(int part, const ChunkCutter& cut) {
  try {
    for (std::int64_t c = 0;; ++c) {
      HostChunk range;
      Slot* slot = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || c - released_ < options_.slots; });
        if (stop_) return;
        if (!chunk_range(c, cut, range)) {
          lock.unlock();
          changed_.notify_all();  // the consumer may be waiting to learn that the input ended
          return;
        }
        slot = &slots_[static_cast<std::size_t>(c % options_.slots)];
        if (slot->index != c) {  // the first part to arrive claims the slot
          slot->index = c;
          slot->parts_done = 0;
          slot->ready = false;
          slot->keep.reset();
          slot->chunk = range;
          slot->chunk.host = slot->staging;  // lent chunks: fill() points it at the window
        }
        if (first_read_ < 0) first_read_ = now_s();
      }
      fill(*slot, range, part);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        last_read_ = now_s();
        if (++slot->parts_done == parts_) slot->ready = slot->chunk.elements > 0;
      }
      changed_.notify_all();
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    changed_.notify_all();
  }
}

void ChunkPipeline::run(const ChunkCutter& cut,
                        const std::function<void(const HostChunk&)>& consume,
                        const std::function<void(const HostChunk&)>& ahead) {
  // Every run reads the input from its first byte (a source read before, or a second pass).
  if (source_.rereadable() && !source_.rewind())
    throw Error(ErrorKind::io, source_.name + " cannot be read again");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ranges_.clear();
    total_chunks_ = -1;
    released_ = 0;
    stop_ = false;
    error_ = nullptr;
    first_read_ = -1;
    for (auto& s : slots_) {
      s.index = -1;
      s.ready = false;
      s.keep.reset();
    }
  }
  for (int p = 0; p < parts_; ++p)
    readers_.emplace_back([this, p, &cut] { reader(p, cut); });
  try {
    std::int64_t ahead_next = 0;  // the next chunk `ahead` sees
    for (std::int64_t c = 0;; ++c) {
      Slot* slot = &slots_[static_cast<std::size_t>(c % options_.slots)];
      const Slot* next = &slots_[static_cast<std::size_t>((c + 1) % options_.slots)];
      bool next_ready = false;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] {
          return error_ || (slot->index == c && slot->ready) ||
                 (total_chunks_ >= 0 && c >= total_chunks_);
        });
        if (error_) std::rethrow_exception(error_);
        if (!(slot->index == c && slot->ready)) break;
        next_ready = next->index == c + 1 && next->ready;
      }
      if (ahead && ahead_next == c) {
        ahead(slot->chunk);
        ahead_next = c + 1;
      }
      if (ahead && next_ready) {
        ahead(next->chunk);
        ahead_next = c + 2;
      }
      consume(slot->chunk);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        slot->ready = false;
        slot->keep.reset();
        released_ = c + 1;
      }
      changed_.notify_all();
    }
  } catch (...) {
    stop_readers();
    throw;
  }
  stop_readers();
  read_ms_ = first_read_ >= 0 ? (last_read_ - first_read_) * 1e3 : 0;
  chunks_ = total_chunks_;
}

}  // namespace parpat::detail
