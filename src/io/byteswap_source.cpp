// A big-endian source read on a little-endian machine: every item's bytes reversed as they pass.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "io/source.hpp"

namespace parpat::detail {

void swap_bytes(void* data, std::size_t bytes, std::size_t item) {
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t at = 0; at + item <= bytes; at += item)
    std::reverse(p + at, p + at + item);
}

namespace {

class ByteswappedSource final : public SourceImpl {
 public:
  explicit ByteswappedSource(std::shared_ptr<SourceImpl> inner) : inner_(std::move(inner)) {
    dtype = inner_->dtype;
    shape = inner_->shape;
    name = inner_->name;
    raw = inner_->raw;
  }

  bool random_access() const override { return inner_->random_access(); }
  bool rereadable() const override { return inner_->rereadable(); }
  bool rewind() override { return inner_->rewind(); }

  void read_at(std::uint64_t offset, void* dst, std::size_t bytes) override {
    check_whole_items(offset, bytes);
    inner_->read_at(offset, dst, bytes);
    swap_bytes(dst, bytes, dtype_size(dtype));
  }

  // Every read takes whole items, so each starts on an item (a short read ends the input).
  std::size_t read_next(void* dst, std::size_t bytes) override {
    check_whole_items(0, bytes);
    const std::size_t got = inner_->read_next(dst, bytes);
    swap_bytes(dst, got, dtype_size(dtype));
    return got;
  }

 private:
  void check_whole_items(std::uint64_t offset, std::size_t bytes) const {
    const std::size_t item = dtype_size(dtype);
    if (offset % item != 0 || bytes % item != 0)
      throw std::logic_error(name + ": a big-endian source is read in whole items (byte " +
                             std::to_string(offset) + ", " + std::to_string(bytes) + " bytes)");
  }

  std::shared_ptr<SourceImpl> inner_;
};

}  // namespace

std::shared_ptr<SourceImpl> open_byteswapped_source(std::shared_ptr<SourceImpl> inner) {
  return std::make_shared<ByteswappedSource>(std::move(inner));
}

}  // namespace parpat::detail
