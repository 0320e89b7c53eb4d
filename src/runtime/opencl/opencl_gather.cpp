// The strided gather on OpenCL: gather.cl, one program per item width; a plan keeps its kernel
// object with the layout bound, and each run binds the buffers and launches on the calling
// thread's queue over a grid of at most 32 groups (of up to 256) per compute unit.
#include <algorithm>
#include <memory>

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

class OpenclGather final : public Gather {
 public:
  OpenclGather(OpenclDevice& cl, const GatherLayout& layout, std::size_t item_bytes)
      : cl_(cl), n_(layout.elements()) {
    kernel_ = cl.kernel("gather.cl", parpat_cl_gather,
                        std::string("-DGATHER_ITEM=") + item_type(item_bytes), "strided_gather");
    GatherArgs g{layout.ndim, {}, {}};
    for (int d = 0; d < layout.ndim; ++d) {
      g.shape[d] = layout.shape[static_cast<std::size_t>(d)];
      g.strides[d] = layout.strides[static_cast<std::size_t>(d)];
    }
    kernel_.setArg(2, sizeof g, &g);
    const cl_long n = n_;
    kernel_.setArg(3, sizeof n, &n);
    group_ = std::clamp<std::int64_t>(cl.info().max_group_size, 1, 256);
    groups_ = std::min<std::int64_t>((n_ + group_ - 1) / group_,
                                     std::int64_t{std::max(cl.info().compute_units, 1)} * 32);
  }

  void run(const void* src, void* dst) override {
    if (n_ == 0) return;
    const cl_mem in = as_mem(const_cast<void*>(src)), out = as_mem(dst);
    kernel_.setArg(0, sizeof in, &in);
    kernel_.setArg(1, sizeof out, &out);
    cl_.launch(kernel_, static_cast<std::size_t>(groups_ * group_),
               static_cast<std::size_t>(group_));
  }

 private:
  OpenclDevice& cl_;
  std::int64_t n_, group_ = 1, groups_ = 1;
  cl::Kernel kernel_;
};

}  // namespace

std::unique_ptr<Gather> OpenclDevice::make_gather(const GatherLayout& layout,
                                                  std::size_t item_bytes) {
  return std::make_unique<OpenclGather>(*this, layout, item_bytes);
}

}  // namespace parpat::detail
