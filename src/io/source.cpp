// Source: the public handle over the sources of src/io/, and the choice of source by name.
#include "io/source.hpp"

#include <algorithm>
#include <utility>

#include "parpat/error.hpp"
#include "parpat/stream.hpp"

namespace parpat {

namespace detail {

std::int64_t SourceImpl::elements() const {
  std::int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

void SourceImpl::read_at(std::uint64_t, void*, std::size_t) {
  throw Error(ErrorKind::invalid_argument, name + " can only be read in order");
}

const void* SourceImpl::map(std::uint64_t, std::size_t, std::shared_ptr<void>&) {
  return nullptr;
}

std::size_t RandomAccessSource::read_next(void* dst, std::size_t bytes) {
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, data_bytes() - cursor_));
  if (n) read_at(cursor_, dst, n);
  cursor_ += n;
  return n;
}

}  // namespace detail

namespace {

// "data.npz" or "data.npz:NAME" → the archive and the member (empty when not named).
bool split_npz(const std::string& spec, std::string& archive, std::string& member) {
  auto at = spec.find(".npz");
  while (at != std::string::npos) {
    std::size_t end = at + 4;
    if (end == spec.size() || spec[end] == ':') {
      archive = spec.substr(0, end);
      member = end == spec.size() ? "" : spec.substr(end + 1);
      return true;
    }
    at = spec.find(".npz", at + 1);
  }
  return false;
}

}  // namespace

Source::Source(std::shared_ptr<detail::SourceImpl> impl) : impl_(std::move(impl)) {}

Source Source::open(const std::string& spec) {
  std::string archive, member;
  std::shared_ptr<detail::SourceImpl> impl = spec == "-" ? detail::open_stdin_source()
                                             : split_npz(spec, archive, member)
                                                 ? detail::open_npz_source(archive, member)
                                                 : detail::open_file_source(spec);
  const bool fortran_order = impl->fortran_order;
  if (impl->big_endian) impl = detail::open_byteswapped_source(std::move(impl));
  if (fortran_order) impl = detail::open_c_order_source(std::move(impl));
  return Source(std::move(impl));
}

void Source::read_raw_as(DType dtype) {
  detail::SourceImpl& s = *impl_;
  if (!s.raw)
    throw_invalid(s.name + " is an .npy array of " + dtype_name(s.dtype) +
                  ": its header gives its dtype, which only raw input lacks");
  const std::size_t size = dtype_size(dtype);
  if (s.elements() < 0) {  // standard input: checked when it ends
    s.dtype = dtype;
    return;
  }
  const std::uint64_t bytes = s.data_bytes();
  if (bytes % size != 0)
    throw_invalid(s.name + " holds " + std::to_string(bytes) + " bytes, not a whole number of " +
                  dtype_name(dtype) + " elements of " + std::to_string(size) + " bytes");
  s.dtype = dtype;
  s.shape = {static_cast<std::int64_t>(bytes / size)};
}

Source Source::from_host(DType dtype, std::vector<std::int64_t> shape, const void* data) {
  for (auto d : shape)
    if (d < 0) throw_invalid("negative array dimension");
  return Source(detail::open_host_source(dtype, std::move(shape), data));
}

DType Source::dtype() const {
  return impl_->dtype;
}
const std::vector<std::int64_t>& Source::shape() const {
  return impl_->shape;
}
std::int64_t Source::size() const {
  return impl_->elements();
}
const std::string& Source::name() const {
  return impl_->name;
}
bool Source::raw() const {
  return impl_->raw;
}
bool Source::rereadable() const {
  return impl_->rereadable();
}

}  // namespace parpat
