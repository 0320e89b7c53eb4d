// CUDA joint histogram `fast` (cuda/kernels_joint.cuh): the launch plan. Counts go to
// lane-striped 32-bit shared counters with as many columns (up to 32) as histogram.fast.striped_kib
// allows, to packed 16-bit shared counters where 32-bit ones do not fit (256 × 256 bins), or to
// the global counts beyond that; weighted sums to lane-striped float64 shared sums or the global
// sums. 2-D samples of 4- and 8-byte types are read as 16-byte vectors where every coordinate
// array is 16-byte aligned. The grid fills the device at the occupancy the shared memory allows.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "histogram/cuda/kernels_joint.cuh"
#include "histogram/joint.hpp"
#include "histogram/tuning.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {

namespace {

template <class T>
class CudaJoint final : public JointKernel {
 public:
  CudaJoint(const Device& d, const JointProblem& p) : cuda_(backend_cast<CudaDevice>(d)), p_(p) {
    cuda_.activate();
    samples_.dims = p.dims();
    samples_.interleaved = p.interleaved;
    samples_.n = p.n;
    samples_.outside = unsigned(p.bins());
    std::vector<double> edges;  // every explicit axis's edges, one after another
    for (int a = 0; a < p.dims(); ++a) {
      const HistogramProblem& axis = p.axes[std::size_t(a)];
      JointAxisDevice& dev = samples_.axes[a];
      dev.bins = unsigned(axis.bins);
      if (axis.even) {
        dev.even = even_rule_device(axis);
        if (std::is_same_v<T, float>) dev.quick = FloatEvenRule(axis, kIeeeSubnormals);
      } else {
        edge_offsets_[a] = edges.size();
        edges.insert(edges.end(), axis.edges.begin(), axis.edges.end());
      }
    }
    if (!edges.empty()) {
      edges_ = Buffer(d, edges.size() * sizeof(double));
      edges_.upload(edges.data(), edges_.bytes());
      for (int a = 0; a < p.dims(); ++a)
        if (!p.axes[std::size_t(a)].even)
          samples_.axes[a].edges = static_cast<const double*>(edges_.handle()) + edge_offsets_[a];
    }
    plan(d.info());
  }

  void run(const JointInput& in, const Buffer& out) override {
    cuda_.activate();
    cudaStream_t st = cuda_.stream();
    const std::size_t slots = std::size_t(p_.slots());
    PARPAT_CUDA(cudaMemsetAsync(out.handle(), 0, slots * 8, st));
    JointSamples<T> s = samples_;
    bool aligned = true;
    for (std::size_t d = 0; d < in.coordinates.size(); ++d) {
      s.coords[d] = static_cast<const T*>(in.coordinates[d]->handle());
      aligned &= reinterpret_cast<std::uintptr_t>(s.coords[d]) % 16 == 0;
    }
    const bool pairs = sizeof(T) >= 4 && p_.dims() == 2 && aligned;
    if (p_.weighted) {
      const bool f32 = p_.weights == DType::float32;
      auto* sums = static_cast<double*>(out.handle());
      if (shared_)
        joint_weighted_kernel<T, true><<<blocks_, block_, shared_, st>>>(
            s, in.weights->handle(), f32, unsigned(slots), columns_, sums);
      else
        joint_weighted_kernel<T, false>
            <<<blocks_, block_, 0, st>>>(s, in.weights->handle(), f32, unsigned(slots), 1, sums);
      check_launch("joint_weighted_kernel");
      return;
    }
    auto* counts = static_cast<unsigned long long*>(out.handle());
    switch (sink_) {
      case JointSink::striped:
        joint_count_kernel<T, JointSink::striped>
            <<<blocks_, block_, shared_, st>>>(s, pairs, unsigned(slots), columns_, vote_, counts);
        break;
      case JointSink::packed:
        joint_count_kernel<T, JointSink::packed>
            <<<blocks_, block_, shared_, st>>>(s, pairs, unsigned(slots), 1, true, counts);
        break;
      case JointSink::global:
        joint_count_kernel<T, JointSink::global>
            <<<blocks_, block_, 0, st>>>(s, pairs, unsigned(slots), 1, true, counts);
        break;
    }
    check_launch("joint_count_kernel");
  }

 private:
  const void* kernel() const {
    if (p_.weighted)
      return shared_ ? reinterpret_cast<const void*>(&joint_weighted_kernel<T, true>)
                     : reinterpret_cast<const void*>(&joint_weighted_kernel<T, false>);
    switch (sink_) {
      case JointSink::striped:
        return reinterpret_cast<const void*>(&joint_count_kernel<T, JointSink::striped>);
      case JointSink::packed:
        return reinterpret_cast<const void*>(&joint_count_kernel<T, JointSink::packed>);
      default:
        return reinterpret_cast<const void*>(&joint_count_kernel<T, JointSink::global>);
    }
  }

  // Shared counters or sums and their columns, then the block and the grid.
  void plan(const DeviceInfo& info) {
    const HistogramFastPolicy policy = tuned<HistogramFastPolicy>(info);
    const std::size_t budget =
        std::min<std::size_t>(info.local_memory, std::size_t(policy.shared_kib) << 10);
    const std::size_t striped =
        std::min<std::size_t>(budget, std::size_t(policy.striped_kib) << 10);
    const std::size_t slots = std::size_t(p_.slots());
    const std::size_t row = slots * (p_.weighted ? sizeof(double) : sizeof(unsigned));
    if (row <= budget) {
      sink_ = JointSink::striped;
      while (columns_ < 32 && int(columns_ * 2) <= policy.max_columns &&
             row * columns_ * 2 <= striped)
        columns_ *= 2;
      shared_ = row * columns_;
    } else if (!p_.weighted && policy.packed && (slots + 1) / 2 * 4 <= budget) {
      sink_ = JointSink::packed;
      shared_ = (slots + 1) / 2 * 4;
    } else {
      sink_ = JointSink::global;
    }
    vote_ = int(columns_) < policy.vote_below_columns;
    const void* k = kernel();
    if (shared_ > (48u << 10))
      PARPAT_CUDA(
          cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_)));
    cudaFuncAttributes attr{};
    PARPAT_CUDA(cudaFuncGetAttributes(&attr, k));
    block_ = std::min(policy.block, attr.maxThreadsPerBlock) / 32 * 32;
    int per_sm = 0;
    PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, block_, shared_));
    const long long most = std::max<long long>(1, (p_.n + block_ - 1) / block_);
    blocks_ = int(std::max(
        1ll, std::min((long long)std::max(per_sm, 1) * cuda_.props().multiProcessorCount, most)));
    // 32-bit shared counters of one block must not wrap.
    blocks_ =
        int(std::max<long long>(blocks_, (p_.n + kMaxValuesPerBlock - 1) / kMaxValuesPerBlock));
  }

  CudaDevice& cuda_;
  JointProblem p_;
  JointSamples<T> samples_{};
  std::size_t edge_offsets_[kMaxHistogramDims] = {};
  Buffer edges_;  // the explicit axes' edges
  JointSink sink_ = JointSink::global;
  unsigned columns_ = 1;
  bool vote_ = true;
  std::size_t shared_ = 0;
  int block_ = 256, blocks_ = 1;
};

}  // namespace

std::unique_ptr<JointKernel> make_cuda_joint(const Device& d, const JointProblem& p) {
  return visit_dtype(p.dtype, [&](auto t) -> std::unique_ptr<JointKernel> {
    return std::make_unique<CudaJoint<decltype(t)>>(d, p);
  });
}

}  // namespace parpat::detail
