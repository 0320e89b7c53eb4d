// The strided gather on the CPU (strided_gather.hpp). The output is cut into blocks of
// consecutive elements, one pool task each; a task turns its first output index into the
// coordinates of the input element once (divisions from the last axis), then walks its block
// like an odometer: the last coordinate steps by one and carries into the axes before it, and
// the input offset moves by the strides of the coordinates that changed. Every output element
// is written by exactly one task, so the result does not depend on the threads.
#include <algorithm>
#include <memory>

#include "runtime/cpu/cpu_device.hpp"

namespace parpat::detail {

namespace {

constexpr std::int64_t kGatherBlock = 1 << 16;  // output elements per task

template <class Item>
void gather_block(const Item* src, Item* dst, const GatherLayout& g, std::int64_t first,
                  std::int64_t count) {
  std::array<std::int64_t, kMaxGatherDims> coord{};
  std::int64_t offset = 0, rest = first;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const auto k = static_cast<std::size_t>(d);
    coord[k] = rest % g.shape[k];
    rest /= g.shape[k];
    offset += coord[k] * g.strides[k];
  }
  for (std::int64_t o = first; o < first + count; ++o) {
    dst[o] = src[offset];
    for (int d = g.ndim - 1; d >= 0; --d) {
      const auto k = static_cast<std::size_t>(d);
      offset += g.strides[k];
      if (++coord[k] < g.shape[k]) break;
      offset -= coord[k] * g.strides[k];
      coord[k] = 0;
    }
  }
}

template <class Item>
class CpuGather final : public Gather {
 public:
  CpuGather(CpuDevice& cpu, const GatherLayout& layout) : cpu_(cpu), layout_(layout) {}

  void run(const void* src, void* dst) override {
    const std::int64_t n = layout_.elements();
    cpu_.parallel_for((n + kGatherBlock - 1) / kGatherBlock, [&](std::int64_t t) {
      const std::int64_t first = t * kGatherBlock;
      gather_block(static_cast<const Item*>(src), static_cast<Item*>(dst), layout_, first,
                   std::min(kGatherBlock, n - first));
    });
  }

 private:
  CpuDevice& cpu_;
  GatherLayout layout_;
};

}  // namespace

std::unique_ptr<Gather> CpuDevice::make_gather(const GatherLayout& layout, std::size_t item_bytes) {
  switch (item_bytes) {
    case 1:
      return std::make_unique<CpuGather<std::uint8_t>>(*this, layout);
    case 2:
      return std::make_unique<CpuGather<std::uint16_t>>(*this, layout);
    case 4:
      return std::make_unique<CpuGather<std::uint32_t>>(*this, layout);
    case 8:
      return std::make_unique<CpuGather<std::uint64_t>>(*this, layout);
    default:
      throw Error(ErrorKind::invalid_argument,
                  "gather takes items of 1, 2, 4 or 8 bytes, not " + std::to_string(item_bytes));
  }
}

}  // namespace parpat::detail
