// A share of a source: the byte range of some elements, read through the whole source's own
// random access and mapped windows, so a rank reads only its own part of a file.
#include "io/source.hpp"

namespace parpat::detail {

namespace {

class ShareSource final : public RandomAccessSource {
 public:
  ShareSource(SourceImpl& whole, std::int64_t first, std::vector<std::int64_t> share_shape)
      : whole_(whole), base_(static_cast<std::uint64_t>(first) * dtype_size(whole.dtype)) {
    dtype = whole.dtype;
    shape = std::move(share_shape);
    name = whole.name;
    raw = whole.raw;
  }

  void read_at(std::uint64_t offset, void* dst, std::size_t bytes) override {
    whole_.read_at(base_ + offset, dst, bytes);
  }
  const void* map(std::uint64_t offset, std::size_t bytes, std::shared_ptr<void>& keep) override {
    return whole_.map(base_ + offset, bytes, keep);
  }

 private:
  SourceImpl& whole_;
  std::uint64_t base_;
};

}  // namespace

std::shared_ptr<SourceImpl> open_share_source(SourceImpl& whole, std::int64_t first,
                                              std::vector<std::int64_t> shape) {
  return std::make_shared<ShareSource>(whole, first, std::move(shape));
}

}  // namespace parpat::detail
