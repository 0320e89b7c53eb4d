// Errors, dtypes, backends and the device list: the backend-independent part of the runtime.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>

#include "parpat/array.hpp"
#include "parpat/device.hpp"
#include "parpat/dtype.hpp"
#include "parpat/error.hpp"
#include "runtime/backends.hpp"
#include "runtime/contiguous.hpp"
#include "runtime/device_impl.hpp"
#include "runtime/names.hpp"

namespace parpat {

Error::Error(ErrorKind kind, std::string message, std::string backend, std::string call, int code)
    : std::runtime_error(std::move(message)),
      kind_(kind),
      backend_(std::move(backend)),
      call_(std::move(call)),
      code_(code) {}

void throw_invalid(const std::string& message) {
  throw Error(ErrorKind::invalid_argument, message);
}

namespace {
constexpr const char* kDTypeNames[] = {"bool",    "int8",    "uint8",   "int16",  "uint16",
                                       "int32",   "uint32",  "int64",   "uint64", "float32",
                                       "float64", "float16", "bfloat16"};
constexpr std::size_t kDTypeSizes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 2, 2};
constexpr const char* kBackendNames[] = {"cpu", "cuda", "opencl"};
}  // namespace

std::size_t dtype_size(DType t) {
  return kDTypeSizes[static_cast<int>(t)];
}
const char* dtype_name(DType t) {
  return kDTypeNames[static_cast<int>(t)];
}
DType parse_dtype(const std::string& name) {
  return detail::parse_word<DType>(kDTypeNames, name, "dtype");
}
bool is_float(DType t) {
  return t == DType::float32 || t == DType::float64 || t == DType::float16 || t == DType::bfloat16;
}
bool is_signed_integer(DType t) {
  return t == DType::int8 || t == DType::int16 || t == DType::int32 || t == DType::int64;
}

const char* backend_name(Backend b) {
  return kBackendNames[static_cast<int>(b)];
}
Backend parse_backend(const std::string& name) {
  return detail::parse_word<Backend>(kBackendNames, name, "backend");
}
bool backend_built(Backend b) {
  switch (b) {
    case Backend::cpu:
      return true;
    case Backend::cuda:
      return detail::kHaveCuda;
    case Backend::opencl:
      return detail::kHaveOpencl;
  }
  return false;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> all;
  for (Backend b : {Backend::cuda, Backend::opencl, Backend::cpu}) {
    for (auto& info : detail::discover(b))
      all.push_back(info);
  }
  return all;
}

std::vector<Device> open_devices(const std::string& spec) {
  std::vector<Device> out;
  std::size_t at = 0;
  while (at <= spec.size()) {
    const std::size_t end = std::min(spec.find(',', at), spec.size());
    const std::string item = spec.substr(at, end - at);
    at = end + 1;
    const std::size_t colon = item.find(':');
    const Backend backend = parse_backend(item.substr(0, colon));
    const std::string index = colon == std::string::npos ? "0" : item.substr(colon + 1);
    if (index == "all") {
      for (const auto& d : list_devices())
        if (d.backend == backend) out.push_back(Device::open(backend, d.index));
      continue;
    }
    char* tail = nullptr;
    const long k = std::strtol(index.c_str(), &tail, 10);
    if (index.empty() || *tail || k < 0 || k > INT_MAX)
      throw_invalid("'" + item + "' is not BACKEND, BACKEND:INDEX or BACKEND:all");
    out.push_back(Device::open(backend, static_cast<int>(k)));
  }
  if (out.empty()) throw_invalid("'" + spec + "' names no device");
  return out;
}

Device::Device(std::shared_ptr<detail::DeviceImpl> impl) : impl_(std::move(impl)) {}

Device Device::open(Backend backend, int index) {
  // One implementation object per device per process, so contexts, streams and compiled
  // programs are shared by every handle.
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::shared_ptr<detail::DeviceImpl>> opened;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(static_cast<int>(backend), index);
  auto it = opened.find(key);
  if (it != opened.end()) return Device(it->second);
  if (!backend_built(backend))
    throw_invalid(std::string("backend ") + backend_name(backend) + " is not built in");
  auto found = detail::discover(backend);
  if (index < 0 || index >= static_cast<int>(found.size())) {
    throw_invalid(std::string("no device ") + std::to_string(index) + " on backend " +
                  backend_name(backend) + " (" + std::to_string(found.size()) +
                  " present; see `parpat info`)");
  }
  auto impl = detail::open_device(backend, index);
  opened.emplace(key, impl);
  return Device(impl);
}

Device Device::best() {
  for (Backend b : {Backend::cuda, Backend::opencl}) {
    auto found = detail::discover(b);
    for (std::size_t i = 0; i < found.size(); ++i) {
      if (found[i].independent_groups) return open(b, static_cast<int>(i));
    }
  }
  return open(Backend::cpu, 0);
}

const DeviceInfo& Device::info() const {
  return impl_->info();
}
Backend Device::backend() const {
  return impl_->info().backend;
}
std::string Device::label() const {
  return std::string(backend_name(backend())) + ":" + std::to_string(info().index) + " " +
         info().name;
}
void Device::synchronize(Stream stream) const {
  detail::StreamScope scope(*impl_, stream);
  impl_->synchronize();
}

Buffer::Buffer(const Device& device, std::size_t bytes)
    : device_(device.shared_impl()), bytes_(bytes) {
  auto impl = device_;
  // Zero-byte buffers still get a valid (1-byte) allocation so kernels can take them as args.
  void* h = impl->allocate(std::max<std::size_t>(bytes, 1));
  handle_ = std::shared_ptr<void>(h, [impl](void* p) { impl->release(p); });
}

Buffer Buffer::wrap(const Device& device, void* handle, std::size_t bytes) {
  if (!handle && bytes) throw_invalid("Buffer::wrap of a null handle");
  Buffer b;
  b.device_ = device.shared_impl();
  b.handle_ = std::shared_ptr<void>(handle, [](void*) {});
  b.bytes_ = bytes;
  return b;
}

void Buffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  if (offset + bytes > bytes_) throw_invalid("upload past the end of a buffer");
  if (bytes) device_->upload(handle(), offset, host, bytes);
}

void Buffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (offset + bytes > bytes_) throw_invalid("download past the end of a buffer");
  if (bytes) device_->download(handle(), offset, host, bytes);
}

namespace {

void check_shape(const std::vector<std::int64_t>& shape, std::int64_t row_stride) {
  if (shape.empty()) throw_invalid("arrays have at least one dimension, got a 0-D shape");
  for (auto d : shape)
    if (d < 0) throw_invalid("negative array dimension");
  if (row_stride && row_stride < shape.back())
    throw_invalid("row stride is smaller than the row length");
  if (shape.size() > 2 && row_stride && row_stride != shape.back())
    throw_invalid("a row stride applies to 2-D arrays only (" + std::to_string(shape.size()) +
                  "-D arrays are contiguous)");
}

}  // namespace

Array::Array(const Device& device, DType dtype, std::vector<std::int64_t> shape,
             std::int64_t row_stride)
    : dtype_(dtype), shape_(std::move(shape)) {
  check_shape(shape_, row_stride);
  row_stride_ = row_stride ? row_stride : cols();
  buffer_ = Buffer(device, static_cast<std::size_t>(storage_elements()) * dtype_size(dtype_));
}

Array Array::view(const Buffer& buffer, DType dtype, std::vector<std::int64_t> shape,
                  std::int64_t row_stride) {
  check_shape(shape, row_stride);
  Array a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.row_stride_ = row_stride ? row_stride : a.cols();
  a.attach(buffer);
  return a;
}

namespace detail {

std::vector<std::int64_t> checked_strides(const std::vector<std::int64_t>& shape,
                                          std::vector<std::int64_t> strides) {
  if (strides.size() != shape.size())
    throw_invalid("strided arrays take one stride per axis: " + std::to_string(strides.size()) +
                  " strides for " + std::to_string(shape.size()) + " axes");
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (strides[d] < 0)
      throw_invalid("strided arrays take non-negative strides, axis " + std::to_string(d) +
                    " has " + std::to_string(strides[d]));
    if (shape[d] == 1) strides[d] = 0;  // any stride: the axis is never stepped
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())  // no element is reached
    std::fill(strides.begin(), strides.end(), 0);
  return strides;
}

Array DenseCopy::of(const Array& a) {
  if (a.contiguous()) return a;
  if (a.ndim() > kMaxGatherDims)
    throw_invalid("strided views of at most " + std::to_string(kMaxGatherDims) +
                  " dimensions are copied, this one has " + std::to_string(a.ndim()));
  GatherLayout layout;
  layout.ndim = a.ndim();
  const std::vector<std::int64_t> strides = a.strides();
  for (std::size_t d = 0; d < strides.size(); ++d) {
    layout.shape[d] = a.shape()[d];
    layout.strides[d] = strides[d];
  }
  const std::size_t item = dtype_size(a.dtype());
  if (!gather_ || item != item_ || layout.ndim != layout_.ndim || layout.shape != layout_.shape ||
      layout.strides != layout_.strides) {
    gather_ = a.device().impl().make_gather(layout, item);
    layout_ = layout;
    item_ = item;
  }
  const auto bytes = static_cast<std::size_t>(a.size()) * item;
  if (scratch_.bytes() < bytes) scratch_ = Buffer(a.device(), bytes);
  gather_->run(a.buffer().handle(), scratch_.handle());
  return Array::view(scratch_, a.dtype(), a.shape());
}

}  // namespace detail

void Array::attach(const Buffer& buffer) {
  const auto need = static_cast<std::size_t>(storage_elements()) * dtype_size(dtype_);
  if (buffer.bytes() < need)
    throw_invalid("array view needs " + std::to_string(need) + " bytes, the buffer holds " +
                  std::to_string(buffer.bytes()));
  buffer_ = buffer;
}

Array Array::strided_view(const Buffer& buffer, DType dtype, std::vector<std::int64_t> shape,
                          std::vector<std::int64_t> strides) {
  check_shape(shape, 0);
  strides = detail::checked_strides(shape, std::move(strides));
  // Layouts the other constructors describe become such arrays.
  bool c_order = true;
  std::int64_t elements = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    c_order &= shape[d] == 1 || strides[d] == elements;
    elements *= shape[d];
  }
  if (c_order || elements == 0) return view(buffer, dtype, std::move(shape));
  if (shape.size() == 2 && (shape[1] == 1 || strides[1] == 1) && strides[0] >= shape[1])
    return view(buffer, dtype, std::move(shape), strides[0]);
  Array a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.row_stride_ = a.cols();
  a.strides_ = std::move(strides);
  a.attach(buffer);
  return a;
}

Array Array::from_host(const Device& device, DType dtype, std::vector<std::int64_t> shape,
                       const void* host, std::int64_t row_stride) {
  Array a(device, dtype, std::move(shape), row_stride);
  a.upload(host);
  return a;
}

std::int64_t Array::rows() const {
  std::int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < shape_.size(); ++d)
    rows *= shape_[d];
  return rows;
}

std::int64_t Array::storage_elements() const {
  if (rows() == 0 || cols() == 0) return 0;
  if (strides_.empty()) return (rows() - 1) * row_stride_ + cols();
  std::int64_t reach = 1;
  for (std::size_t d = 0; d < shape_.size(); ++d)
    reach += (shape_[d] - 1) * strides_[d];
  return reach;
}

std::vector<std::int64_t> c_order_strides(const std::vector<std::int64_t>& shape,
                                          std::int64_t row_stride) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;)
    s[d - 1] = s[d] * shape[d];
  if (shape.size() == 2 && row_stride) s[0] = row_stride;
  return s;
}

std::vector<std::int64_t> Array::strides() const {
  return strides_.empty() ? c_order_strides(shape_, row_stride_) : strides_;
}

bool Array::contiguous() const {
  return strides_.empty() && (rows() <= 1 || row_stride_ == cols());
}

void Array::upload(const void* host) {
  buffer_.upload(host, buffer_.bytes());
}
void Array::download(void* host) const {
  buffer_.download(host, buffer_.bytes());
}

}  // namespace parpat
