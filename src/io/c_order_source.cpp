// A Fortran-order .npy array put in C order: read whole into host memory, reordered once, then
// served as host memory is (random access, mapped windows), so every pattern reads it as it
// reads any C-order array.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "io/source.hpp"
#include "parpat/error.hpp"

namespace parpat::detail {

void fortran_to_c_order(const unsigned char* fortran, unsigned char* c,
                        const std::vector<std::int64_t>& shape, std::size_t item) {
  const std::size_t dims = shape.size();
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  if (n == 0) return;
  // Element (i_0, …, i_{D−1}) sits at Σ i_k · stride_k in Fortran order (stride_0 = 1): walk
  // the C-order index (last axis fastest) as an odometer, keeping its Fortran offset.
  std::vector<std::int64_t> stride(dims, 1), index(dims, 0);
  for (std::size_t k = 1; k < dims; ++k)
    stride[k] = stride[k - 1] * shape[k - 1];
  std::int64_t at = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    std::copy_n(fortran + static_cast<std::size_t>(at) * item, item,
                c + static_cast<std::size_t>(i) * item);
    for (std::size_t k = dims; k-- > 0;) {
      at += stride[k];
      if (++index[k] < shape[k]) break;
      at -= stride[k] * shape[k];
      index[k] = 0;
    }
  }
}

namespace {

class COrderSource final : public SourceImpl {
 public:
  explicit COrderSource(SourceImpl& inner) {
    dtype = inner.dtype;
    shape = inner.shape;
    name = inner.name;
    if (inner.elements() < 0) throw std::logic_error(name + ": a Fortran-order array of no size");
    std::vector<unsigned char> fortran(inner.data_bytes());
    std::size_t got = 0;
    while (got < fortran.size()) {
      const std::size_t n = inner.read_next(fortran.data() + got, fortran.size() - got);
      if (n == 0)
        throw_invalid(name + ": the input ended early (" + std::to_string(fortran.size() - got) +
                      " of its data bytes missing)");
      got += n;
    }
    data_.resize(fortran.size());
    fortran_to_c_order(fortran.data(), data_.data(), shape, dtype_size(dtype));
    memory_ = open_host_source(dtype, shape, data_.data());
  }

  bool random_access() const override { return true; }
  void read_at(std::uint64_t offset, void* dst, std::size_t bytes) override {
    memory_->read_at(offset, dst, bytes);
  }
  std::size_t read_next(void* dst, std::size_t bytes) override {
    return memory_->read_next(dst, bytes);
  }
  bool rewind() override { return memory_->rewind(); }
  const void* map(std::uint64_t offset, std::size_t bytes, std::shared_ptr<void>& keep) override {
    return memory_->map(offset, bytes, keep);
  }

 private:
  std::vector<unsigned char> data_;
  std::shared_ptr<SourceImpl> memory_;
};

}  // namespace

std::shared_ptr<SourceImpl> open_c_order_source(std::shared_ptr<SourceImpl> inner) {
  return std::make_shared<COrderSource>(*inner);
}

}  // namespace parpat::detail
