// The caller's memory as parpat arrays and buffers: a pointer on the host (numpy) or on the
// plan's device (CuPy, torch, JAX), viewed in place where the device can read it, else copied to
// the device (inputs) or back to the host when the call ends (outputs); and bins as the package
// describes them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "parpat/parpat.hpp"

namespace parpat::python {

// Where the caller's memory is: a host pointer (numpy) or a pointer of the plan's device.
struct Memory {
  std::uintptr_t ptr = 0;
  bool host = true;
};

inline Stream stream_of(std::uintptr_t handle) {
  return Stream{reinterpret_cast<void*>(handle)};
}

// Host memory in and out on a GPU is a blocking call on the device's own stream (the copies go
// there); device memory runs on the caller's stream without waiting.
inline Stream run_stream(const Device& device, bool any_host, std::uintptr_t stream) {
  if (device.backend() == Backend::cpu || any_host) return {};
  return stream_of(stream);
}

// An array's shape and element strides (empty: C order), as the package describes it.
struct Layout {
  std::vector<std::int64_t> shape, strides;

  std::int64_t elements() const {
    std::int64_t n = 1;
    for (std::int64_t e : shape)
      n *= e;
    return n;
  }
};

// The caller's array on `device`, of element `strides` (empty: C order): its own memory when it
// is already there (the CPU reads host memory in place), else a copy of the host data the view
// reaches.
inline Array input_array(const Device& device, Memory m, DType dtype,
                         std::vector<std::int64_t> shape, std::vector<std::int64_t> strides = {}) {
  if (strides.empty()) strides = c_order_strides(shape);
  std::int64_t reach = strides.size() == shape.size() ? 1 : 0;  // a bad count: strided_view says
  for (std::size_t d = 0; d < shape.size() && d < strides.size(); ++d)
    reach = shape[d] == 0 ? 0 : reach + (shape[d] - 1) * std::max<std::int64_t>(strides[d], 0);
  const auto bytes = static_cast<std::size_t>(reach) * dtype_size(dtype);
  auto* p = reinterpret_cast<void*>(m.ptr);
  Buffer buffer;
  if (m.host && device.backend() != Backend::cpu) {
    buffer = Buffer(device, bytes);
    buffer.upload(p, bytes);
  } else {
    buffer = Buffer::wrap(device, bytes ? p : nullptr, bytes);
  }
  return Array::strided_view(buffer, dtype, std::move(shape), std::move(strides));
}

// An output of `bytes`: the caller's memory, or device memory copied to the caller's host
// memory by finish().
class Output {
 public:
  Output(const Device& device, Memory m, std::size_t bytes) : host_(nullptr), bytes_(bytes) {
    auto* p = reinterpret_cast<void*>(m.ptr);
    if (!bytes || !m.host || device.backend() == Backend::cpu) {
      buffer_ = Buffer::wrap(device, bytes ? p : nullptr, bytes);
    } else {
      buffer_ = Buffer(device, bytes);
      host_ = p;
    }
  }
  const Buffer& buffer() const { return buffer_; }
  // Starts the device memory from the caller's host values (an accumulating output).
  void start_from_host() {
    if (host_ && bytes_) buffer_.upload(host_, bytes_);
  }
  void finish() {
    if (host_ && bytes_) buffer_.download(host_, bytes_);
  }

 private:
  Buffer buffer_;
  void* host_;
  std::size_t bytes_;
};

// numpy.histogram's bins as the package parsed them: "even" (with or without a range),
// "edges" or "per_value".
inline HistogramBins bins_of(const std::string& kind, std::int64_t count, bool has_range, double lo,
                             double hi, std::vector<double> edges) {
  if (kind == "edges") return HistogramBins::explicit_edges(std::move(edges));
  if (kind == "per_value") return HistogramBins::per_value();
  return has_range ? HistogramBins::even(count, lo, hi) : HistogramBins::even(count);
}

}  // namespace parpat::python
