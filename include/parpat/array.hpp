// parpat/array.hpp — device memory with a dtype and a shape of any number of dimensions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "parpat/device.hpp"
#include "parpat/dtype.hpp"

namespace parpat {

// Untyped device memory, freed when the last copy goes. `handle()` is what the backend works
// with: a host pointer on the CPU, a device pointer on CUDA, a cl_mem on OpenCL.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Device& device, std::size_t bytes);
  // Adopts memory the caller owns and keeps alive for as long as the Buffer (and its copies) is
  // used: a host pointer on the CPU, a CUDA device pointer on CUDA, a cl_mem on OpenCL (of the
  // device's context). parpat never frees it.
  static Buffer wrap(const Device& device, void* handle, std::size_t bytes);

  std::size_t bytes() const { return bytes_; }
  void* handle() const { return handle_.get(); }
  Device device() const { return Device(device_); }
  bool empty() const { return bytes_ == 0; }

  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;

 private:
  std::shared_ptr<detail::DeviceImpl> device_;
  std::shared_ptr<void> handle_;
  std::size_t bytes_ = 0;
};

// The strides in elements of a C-order array of `shape` (of 2-D rows `row_stride` apart, when
// row_stride is not 0): what Array::strides() gives for arrays not made by strided_view.
std::vector<std::int64_t> c_order_strides(const std::vector<std::int64_t>& shape,
                                          std::int64_t row_stride = 0);

// A 1-D array of `cols` elements (rows == 1), a C-order 2-D array of rows × cols whose rows
// start `row_stride` elements apart (row_stride ≥ cols; the default is cols), or a contiguous
// C-order N-D array (N ≥ 3), which rows() and cols() see as the 2-D array of its last axis
// (cols) by the product of the others (rows). A strided view (strided_view) has any
// non-negative element strides, as a numpy view; reduce reads it in place or through a gather,
// histogram, histogramdd and pairwise through a dense copy on its device.
class Array {
 public:
  Array() = default;
  Array(const Device& device, DType dtype, std::vector<std::int64_t> shape,
        std::int64_t row_stride = 0);
  // An array over an existing buffer (one of its own, or Buffer::wrap of the caller's memory),
  // no copy. Throws Error(invalid_argument) when the buffer is smaller than the shape needs.
  static Array view(const Buffer& buffer, DType dtype, std::vector<std::int64_t> shape,
                    std::int64_t row_stride = 0);
  // An N-D view whose element (i_0, ..., i_{N-1}) is the buffer's element Σ i_k · strides[k]
  // (strides in elements, one per axis, each ≥ 0; those of axes of length 1 are ignored), no
  // copy: a slice with a step, a slice of a middle axis, a broadcast (stride 0). Strides of a
  // C-order layout, or of 2-D rows, give the plain array of view(). Throws
  // Error(invalid_argument) for a negative stride, a stride count other than the rank, or a
  // buffer smaller than the view's reach.
  static Array strided_view(const Buffer& buffer, DType dtype, std::vector<std::int64_t> shape,
                            std::vector<std::int64_t> strides);

  // Copies `host` (laid out as this array is, row_stride included) to a new device array.
  static Array from_host(const Device& device, DType dtype, std::vector<std::int64_t> shape,
                         const void* host, std::int64_t row_stride = 0);
  template <class T>
  static Array from_vector(const Device& device, const std::vector<T>& v) {
    return from_host(device, dtype_of<T>::value, {static_cast<std::int64_t>(v.size())}, v.data());
  }

  void upload(const void* host);
  void download(void* host) const;
  template <class T>
  std::vector<T> to_vector() const {
    std::vector<T> out(static_cast<std::size_t>(storage_elements()));
    if (!out.empty()) download(out.data());
    return out;
  }

  DType dtype() const { return dtype_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::int64_t rows() const;
  std::int64_t cols() const { return shape_.empty() ? 0 : shape_.back(); }
  // Rows' distance in elements (of a strided view: cols, which means nothing there).
  std::int64_t row_stride() const { return row_stride_; }
  std::int64_t size() const { return rows() * cols(); }
  // Every axis's stride in elements, for any array (C order, 2-D rows, or a strided view).
  std::vector<std::int64_t> strides() const;
  // Whether the elements are dense in C order: no gap between rows and not a strided view.
  // Patterns other than reduce take only such arrays.
  bool contiguous() const;
  // Elements of the buffer the array reaches: (rows − 1) · row_stride + cols, or for a strided
  // view 1 + Σ (shape[k] − 1) · strides[k] (0 when empty).
  std::int64_t storage_elements() const;
  const Buffer& buffer() const { return buffer_; }
  Device device() const { return buffer_.device(); }

 private:
  void attach(const Buffer& buffer);  // as the view's memory, when it holds storage_elements()

  Buffer buffer_;
  DType dtype_ = DType::float32;
  std::vector<std::int64_t> shape_;
  std::int64_t row_stride_ = 0;
  std::vector<std::int64_t> strides_;  // a strided view's; empty for the other layouts
};

}  // namespace parpat
