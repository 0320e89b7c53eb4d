// OpenCL pairwise: the host side of pairwise.cl. A plan builds the program once, with the term
// chosen by -DPAIRWISE_KERNEL and a run-time expression spliced in front of the source as
// `#define PAIRWISE_EXPRESSION(a, b) (...)` (a -D option would need quoting the platforms
// disagree on). Build failures come back as one Error carrying the build log; --verbose prints
// the log of every build. The product shortcut runs in one launch for a short B (every group
// sums B itself, then scales its share of A); a longer B is summed with the library's reduce
// when OpenCL has one, else with one work-group, then A is scaled.
#include <algorithm>
#include <string>
#include <vector>

#include "pairwise/pairwise_internal.hpp"
#include "pairwise/tuning.hpp"
#include "parpat/error.hpp"
#include "runtime/opencl/opencl_device.hpp"

extern const char* const parpat_cl_pairwise;

namespace parpat::detail {

namespace {

struct ShapeInfo {
  const char* kernel;
  int items;        // x per work-item
  bool local_tile;  // a __local argument of one float per work-item
};

constexpr int kFastItems = 8;  // FAST_ITEMS of pairwise.cl

class OpenclPairwise final : public PairwiseKernelImpl {
 public:
  OpenclPairwise(const Device& d, const PairwiseProblem& p, ShapeInfo shape)
      : device_(d), cl_(backend_cast<OpenclDevice>(d)), p_(p), shape_(shape) {
    const PairwiseFastPolicy fast_policy = tuned<PairwiseFastPolicy>(d.info());
    tpb_ = p.threads_per_block ? p.threads_per_block
           : std::string(shape.kernel) == "pairwise_fast"
               ? fast_policy.block
               : tuned<PairwiseSimplePolicy>(d.info()).block;
    tpb_ = p.threads_per_block ? tpb_ : std::min(tpb_, d.info().max_group_size);
    if (tpb_ > d.info().max_group_size)
      throw_invalid("threads per block " + std::to_string(tpb_) + " exceeds the " +
                    std::to_string(d.info().max_group_size) + " work-items a group may hold on " +
                    d.info().name);
    int kind = p_.kernel == PairwiseKernel::product    ? 0
               : p_.kernel == PairwiseKernel::gaussian ? 1
                                                       : 2;
    sum_threads_ = 1;
    while (sum_threads_ * 2 <= std::min(256, d.info().max_group_size))
      sum_threads_ *= 2;
    options_ = "-DPAIRWISE_KERNEL=" + std::to_string(kind) +
               " -DSUM_THREADS=" + std::to_string(sum_threads_);
    if (std::string(shape_.kernel) == "pairwise_fast" && kind != 2) {
      shape_.items =
          checked_fast_items(kind == 1 ? fast_policy.gaussian_items : fast_policy.product_items);
    }
    // NVIDIA's compiler takes inline PTX: the gaussian's exp2 as one ex2.approx.ftz, as CUDA
    // emits it, where native_exp2 may add range fix-ups.
    if (kind == 1 && d.info().vendor.find("NVIDIA") != std::string::npos &&
        tuned<PairwiseOpenclPolicy>(d.info()).ptx_exp2)
      options_ += " -DPTX_EXP2=1";
    // Gaussian terms below 2^-126 are noise next to the sum; flushing them lets native_exp2 be
    // one special-function instruction on NVIDIA, without denormal fix-ups.
    if (kind == 1) options_ += " -cl-denorms-are-zero";
    base_options_ = options_;
    if (fast() && kind != 2) options_ += " -DFAST_ITEMS=" + std::to_string(shape_.items);
    source_ = parpat_cl_pairwise;
    if (p_.kernel == PairwiseKernel::expression)
      source_ = "#define PAIRWISE_EXPRESSION(a, b) (" + p_.expression + ")\n" + source_;
    if (p_.kernel == PairwiseKernel::gaussian) s_ = gaussian_scale(p_.h);
    if (p_.scaled_sum() && p_.y <= tuned<PairwiseShortcutPolicy>(d.info()).group_sum_max_y) {
      group_sum_ = cl_.kernel("pairwise.cl", source_, options_, "pairwise_scale_by_group_sum");
      const long long wanted = (p_.x + sum_threads_ * 4ll - 1) / (sum_threads_ * 4ll);
      group_sum_groups_ = static_cast<int>(
          std::clamp<long long>(wanted, 1, 2ll * std::max(1, d.info().compute_units)));
      return;
    }
    if (p_.scaled_sum()) {
      sum_reducer_ = make_sum_reducer(d, p_.y);
      sum_ = Buffer(d, sizeof(float));
      scale_ = cl_.kernel("pairwise.cl", source_, options_, "pairwise_scale");
      if (!sum_reducer_) sum_b_ = cl_.kernel("pairwise.cl", source_, options_, "pairwise_sum_b");
      return;
    }
    const int tuned_tpb = tpb_;
    std::size_t limit = fit_kernel(tuned_tpb);
    if (fast()) {
      const int threads_per_cu = fast_policy.split_threads_per_cu;
      slices_ = y_slices(p_.x, p_.y, tpb_, shape_.items, d.info().compute_units, threads_per_cu);
      // B split into slices: X is small, so fewer x per work-item (more work-items, fewer
      // slices) where a split width is tuned.
      const int split_items = kind == 2 ? 0 : fast_policy.split_items;
      if (slices_.count > 1 && split_items != 0 && split_items != shape_.items) {
        shape_.items = checked_fast_items(split_items);
        options_ = base_options_ + " -DFAST_ITEMS=" + std::to_string(shape_.items);
        limit = fit_kernel(tuned_tpb);
        slices_ = y_slices(p_.x, p_.y, tpb_, shape_.items, d.info().compute_units, threads_per_cu);
      }
      if (slices_.count > 1) {
        partial_ = Buffer(d, std::size_t(slices_.count) * std::size_t(p_.x) * sizeof(float));
        combine_ = fast_policy.combine_in_kernel != 0;
        if (combine_) {
          const long long per_group = static_cast<long long>(tpb_) * shape_.items;
          std::vector<cl_uint> zeros(static_cast<std::size_t>((p_.x + per_group - 1) / per_group));
          tickets_ = Buffer(d, zeros.size() * sizeof(cl_uint));
          tickets_.upload(zeros.data(), tickets_.bytes());
        } else {
          sum_slices_ = cl_.kernel(what(), source_, options_, "pairwise_sum_slices");
        }
      }
    }
    if (static_cast<std::size_t>(tpb_) > limit)
      throw_invalid("threads per block " + std::to_string(tpb_) + " exceeds the " +
                    std::to_string(limit) + " this kernel allows on " + d.info().name);
  }

  int threads_per_block() const override { return tpb_; }

  bool fast() const { return std::string(shape_.kernel) == "pairwise_fast"; }

  const char* what() const {
    return p_.kernel == PairwiseKernel::expression ? "the pairwise expression" : "pairwise.cl";
  }

  // Builds (or finds) the kernel for options_, sets tpb_ from `tuned_tpb` when the caller gave
  // none (fitting the kernel and the problem) and returns the most work-items a group of the
  // kernel may hold.
  std::size_t fit_kernel(int tuned_tpb) {
    kernel_ = cl_.kernel(what(), source_, options_, shape_.kernel);
    std::size_t limit = 0;
    try {
      limit = kernel_.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(cl_.device());
    } catch (const cl::Error& e) {
      rethrow_opencl(e);
    }
    if (!p_.threads_per_block)
      tpb_ = block_that_fills(std::min(tuned_tpb, static_cast<int>(limit)), p_.x, shape_.items,
                              device_.info().compute_units);
    return limit;
  }

  void run(const Array& a, const Array& b, const Array& c) override {
    cl_mem A = as_mem(a.buffer().handle()), B = as_mem(b.buffer().handle()),
           C = as_mem(c.buffer().handle());
    cl_long X = p_.x, Y = p_.y;
    try {
      if (group_sum_()) {
        set_args(group_sum_, A, B, C, X, Y);
        cl_.launch(group_sum_, static_cast<std::size_t>(group_sum_groups_) * sum_threads_,
                   sum_threads_);
        return;
      }
      if (p_.scaled_sum()) {
        cl_mem sum = as_mem(sum_.handle());
        if (sum_reducer_) {
          sum_reducer_->run(b, sum_, Buffer());
        } else {
          set_args(sum_b_, B, Y, sum);
          cl_.launch(sum_b_, sum_threads_, sum_threads_);
        }
        set_args(scale_, A, sum, C, X);
        std::size_t groups = static_cast<std::size_t>((X + 255) / 256);
        cl_.launch(scale_, groups * 256, 256);
        return;
      }
      set_args(kernel_, A, B, C, X, Y, s_);
      if (shape_.local_tile) kernel_.setArg(6, cl::Local(tpb_ * sizeof(float)));
      long long per_group = static_cast<long long>(tpb_) * shape_.items;
      std::size_t groups = static_cast<std::size_t>((X + per_group - 1) / per_group);
      if (!fast()) {
        cl_.launch(kernel_, groups * tpb_, tpb_);
        return;
      }
      // Arguments the launch never reads (no slices, or no tickets) get C in their place.
      cl_mem partial = slices_.count > 1 ? as_mem(partial_.handle()) : C;
      cl_mem tickets = combine_ ? as_mem(tickets_.handle()) : C;
      const cl_long length = slices_.length;
      const cl_int combine = combine_ ? 1 : 0;
      kernel_.setArg(6, sizeof length, &length);
      kernel_.setArg(7, sizeof partial, &partial);
      kernel_.setArg(8, sizeof combine, &combine);
      kernel_.setArg(9, sizeof tickets, &tickets);
      cl_.launch(kernel_, cl::NDRange(groups * tpb_, static_cast<std::size_t>(slices_.count)),
                 cl::NDRange(static_cast<std::size_t>(tpb_), 1));
      if (sum_slices_()) {
        set_args(sum_slices_, partial, static_cast<cl_int>(slices_.count), X, C);
        std::size_t sum_groups = static_cast<std::size_t>((X + 255) / 256);
        cl_.launch(sum_slices_, sum_groups * 256, 256);
      }
    } catch (const cl::Error& e) {
      rethrow_opencl(e);
    }
  }

  std::string program_binary() const override {
    cl_.kernel("pairwise.cl", source_, options_, shape_.kernel);
    return cl_.program_binary(source_, options_);
  }

 private:
  Device device_;
  OpenclDevice& cl_;
  PairwiseProblem p_;
  ShapeInfo shape_;
  YSlices slices_{1, 1};
  Buffer partial_;        // slices_.count rows of X partial results when B is split
  bool combine_ = false;  // the last group of each column adds the rows (else sum_slices_)
  Buffer tickets_;        // one per column of groups, back to zero after every launch
  cl::Kernel sum_slices_;
  int tpb_ = 256, sum_threads_ = 256;
  float s_ = 1.0f;
  std::string source_, options_, base_options_;  // base: without FAST_ITEMS
  cl::Kernel kernel_;
  cl::Kernel scale_;
  cl::Kernel group_sum_;  // the product shortcut in one launch (a short B)
  int group_sum_groups_ = 1;
  cl::Kernel sum_b_;
  std::unique_ptr<Reducer> sum_reducer_;
  Buffer sum_;
};

template <int Shape>
std::unique_ptr<PairwiseKernelImpl> make(const Device& d, const PairwiseProblem& p) {
  static const ShapeInfo shapes[] = {
      {"pairwise_naive", 1, false},     {"pairwise_local", 1, true},
      {"pairwise_vec4", 4, false},      {"pairwise_vec8", 8, false},
      {"pairwise_local_vec8", 8, true}, {"pairwise_fast", kFastItems, false}};
  return std::make_unique<OpenclPairwise>(d, p, shapes[Shape]);
}

}  // namespace

std::vector<PairwiseVariant> opencl_pairwise_variants() {
  auto info = [](const char* name, const char* idea, const char* params) {
    return variant_info("pairwise", Backend::opencl, name, idea, params);
  };
  return {
      {info("naive", "one x per work-item, B from global memory", "block=256"), make<0>},
      {info("local", "tiles of B in local memory, one x per work-item", "block=256 tile=block"),
       make<1>},
      {info("vec4", "4 x per work-item, A and C as float4", "block=256 items=4"), make<2>},
      {info("vec8", "8 x per work-item, A and C as float8", "block=256 items=8"), make<3>},
      {info("local-vec8", "tiles of B in local memory, 8 x per work-item", "block=256 items=8"),
       make<4>},
      {info("fast",
            "8 strided x per work-item in registers, B tiles as float4 local-memory broadcasts, "
            "32 independent FMA chains per load; gaussian: 1 exp2 in 4 as an FMA polynomial",
            "block=256 items=8 or 16 (tuned; 4 when B is split) tile=1024"),
       make<5>},
  };
}

}  // namespace parpat::detail
