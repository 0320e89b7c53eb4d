// What the joint histogram's dispatch (joint.cpp) and its backends (cpu_joint.cpp,
// cuda_joint.cu, opencl_joint.cpp) share: the resolved problem, the exact rule and the kernel
// interface.
//
// Kernels count into slots: the bins in C order (bin (i0, ..., iD−1) at
// ((i0·B1 + i1)·B2 + ...)), then one slot for the samples in no bin.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "parpat/histogramdd.hpp"

namespace parpat::detail {

struct JointProblem {
  DType dtype = DType::float32;
  std::int64_t n = 0;
  // true: one (N, D) array, coordinate d of sample i at element i·D + d; false: D arrays.
  bool interleaved = true;
  std::vector<HistogramProblem> axes;  // one per dimension (dtype and n as above)
  bool weighted = false;
  DType weights = DType::float64;

  int dims() const { return static_cast<int>(axes.size()); }
  std::int64_t bins() const {
    std::int64_t b = 1;
    for (const auto& a : axes)
      b *= a.bins;
    return b;
  }
  std::int64_t slots() const { return bins() + 1; }
};

// The samples as kernels see them: `coordinates` holds the one (N, D) buffer, or D buffers.
struct JointInput {
  std::vector<const Buffer*> coordinates;
  const Buffer* weights = nullptr;
};

// One backend's joint histogram bound to one problem: run() enqueues the counts (slots()
// uint64) or, for a weighted problem, the float64 sums (slots() doubles) into `out`, zeroed first.
class JointKernel {
 public:
  virtual ~JointKernel() = default;
  virtual void run(const JointInput& in, const Buffer& out) = 0;
};

std::unique_ptr<JointKernel> make_cpu_joint(const Device& device, const JointProblem& p);
std::unique_ptr<JointKernel> make_cuda_joint(const Device& device, const JointProblem& p);
std::unique_ptr<JointKernel> make_opencl_joint(const Device& device, const JointProblem& p);

// Coordinate d of sample i as a float64.
inline double joint_coordinate(const JointProblem& p, const std::vector<const void*>& in,
                               std::int64_t i, int d) {
  const std::int64_t index = p.interleaved ? i * p.dims() + d : i;
  const void* base = p.interleaved ? in[0] : in[static_cast<std::size_t>(d)];
  return visit_dtype(p.dtype, [&](auto t) {
    return static_cast<double>(static_cast<const decltype(t)*>(base)[index]);
  });
}

// The reference: the slot of every sample by reference_slot per dimension, counted (or its
// weight added, in input order) one at a time. `out` holds slots() uint64 or doubles.
void joint_histogram_reference(const JointProblem& p, const std::vector<const void*>& in,
                               const void* weights, void* out);

}  // namespace parpat::detail
