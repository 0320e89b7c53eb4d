// The strided gather on OpenCL: gather.cl, one program per item width, launched on the calling
// thread's queue over a grid of at most 32 groups (of up to 256) per compute unit.
#include <algorithm>

#include "runtime/opencl/opencl_device.hpp"

extern const char* const parpat_cl_gather;

namespace parpat::detail {

namespace {

// gather.cl's gather_layout.
struct GatherArgs {
  cl_long ndim;
  cl_long shape[kMaxGatherDims];
  cl_long strides[kMaxGatherDims];
};

const char* item_type(std::size_t item_bytes) {
  switch (item_bytes) {
    case 1:
      return "uchar";
    case 2:
      return "ushort";
    case 4:
      return "uint";
    case 8:
      return "ulong";
    default:
      throw Error(ErrorKind::invalid_argument,
                  "gather takes items of 1, 2, 4 or 8 bytes, not " + std::to_string(item_bytes));
  }
}

}  // namespace

void OpenclDevice::gather(const void* src, void* dst, const GatherLayout& layout,
                          std::size_t item_bytes) {
  const std::int64_t n = layout.elements();
  if (n == 0) return;
  cl::Kernel k = kernel("gather.cl", parpat_cl_gather,
                        std::string("-DGATHER_ITEM=") + item_type(item_bytes), "strided_gather");
  GatherArgs g{layout.ndim, {}, {}};
  for (int d = 0; d < layout.ndim; ++d) {
    g.shape[d] = layout.shape[static_cast<std::size_t>(d)];
    g.strides[d] = layout.strides[static_cast<std::size_t>(d)];
  }
  set_args(k, as_mem(const_cast<void*>(src)), as_mem(dst), g, static_cast<cl_long>(n));
  const std::int64_t group = std::clamp<std::int64_t>(info().max_group_size, 1, 256);
  const std::int64_t groups = std::min<std::int64_t>(
      (n + group - 1) / group, static_cast<std::int64_t>(std::max(info().compute_units, 1)) * 32);
  launch(k, static_cast<std::size_t>(groups * group), static_cast<std::size_t>(group));
}

}  // namespace parpat::detail
