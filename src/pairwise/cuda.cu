// CUDA pairwise: the host side of the kernels in pairwise_kernels.cuh. A plan picks the kernel
// of its variant for the built-in terms (instantiated below) or, for a run-time expression,
// compiles the same kernel text with NVRTC around `#define PAIRWISE_EXPRESSION(a, b)` and loads
// it as a library through the runtime API (no driver library is linked). The product shortcut
// runs in one launch for a short B (every block sums B itself, then scales its share of A); a
// longer B is summed with the library's reduce when CUDA has one, else with one block, then A is
// scaled.
#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>

#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "pairwise/pairwise_internal.hpp"
#include "pairwise/pairwise_kernels.cuh"
#include "pairwise/tuning.hpp"
#include "parpat/error.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda/cuda_device.hpp"
#include "runtime/loaded_library.hpp"

extern const char* const parpat_cl_pairwise_kernels;

namespace parpat::detail {

namespace {

enum class Shape { naive, local, vec4, vec8, local_vec8, fast };

struct ShapeInfo {
  const char* kernel;  // template name in pairwise_kernels.cuh
  int items;           // x per thread
  bool shared_tile;    // dynamic shared memory of one float per thread
};

ShapeInfo shape_info(Shape s) {
  switch (s) {
    case Shape::naive:
      return {"pairwise_naive", 1, false};
    case Shape::local:
      return {"pairwise_local", 1, true};
    case Shape::vec4:
      return {"pairwise_vec4", 4, false};
    case Shape::vec8:
      return {"pairwise_vec8", 8, false};
    case Shape::local_vec8:
      return {"pairwise_local_vec8", 8, true};
    case Shape::fast:
      break;
  }
  return {"pairwise_fast", kFastItems, false};
}

template <class F>
const void* builtin_kernel(Shape s, int items) {
  switch (s) {
    case Shape::naive:
      return reinterpret_cast<const void*>(&pairwise_naive<F>);
    case Shape::local:
      return reinterpret_cast<const void*>(&pairwise_local<F>);
    case Shape::vec4:
      return reinterpret_cast<const void*>(&pairwise_vec4<F>);
    case Shape::vec8:
      return reinterpret_cast<const void*>(&pairwise_vec8<F>);
    case Shape::local_vec8:
      return reinterpret_cast<const void*>(&pairwise_local_vec8<F>);
    case Shape::fast:
      break;
  }
  return items == 16  ? reinterpret_cast<const void*>(&pairwise_fast<F, 16>)
         : items == 4 ? reinterpret_cast<const void*>(&pairwise_fast<F, 4>)
                      : reinterpret_cast<const void*>(&pairwise_fast<F, 8>);
}

// NVRTC, loaded on first use: binaries that never compile an expression start on machines
// without the NVRTC library, and no static NVRTC is needed at link time.
struct Nvrtc {
#define PARPAT_NVRTC_FUNCTIONS(X) \
  X(nvrtcGetErrorString)          \
  X(nvrtcCreateProgram)           \
  X(nvrtcDestroyProgram)          \
  X(nvrtcAddNameExpression)       \
  X(nvrtcCompileProgram)          \
  X(nvrtcGetProgramLogSize)       \
  X(nvrtcGetProgramLog)           \
  X(nvrtcGetPTXSize)              \
  X(nvrtcGetPTX)                  \
  X(nvrtcGetLoweredName)
  PARPAT_NVRTC_FUNCTIONS(PARPAT_LIBRARY_MEMBER)
  std::string missing;  // why NVRTC could not be loaded; empty when it was
};

const Nvrtc& nvrtc() {
  static const Nvrtc api = [] {
    Nvrtc n;
    std::string major = std::to_string(CUDART_VERSION / 1000);
    // The loader's search path first, then the toolkit's usual homes.
    std::vector<std::string> names = {"libnvrtc.so." + major, "libnvrtc.so"};
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* home = std::getenv(env))
        names.push_back(std::string(home) + "/lib64/libnvrtc.so." + major);
    names.push_back("/usr/local/cuda/lib64/libnvrtc.so." + major);
    void* lib = open_first_library(names);
    if (!lib) {
      n.missing = "the NVRTC library (libnvrtc.so." + major + ") was not found";
      return n;
    }
#define PARPAT_NVRTC_BIND(name) bind_function(lib, #name, n.name, n.missing, "the NVRTC library");
    PARPAT_NVRTC_FUNCTIONS(PARPAT_NVRTC_BIND)
#undef PARPAT_NVRTC_BIND
    return n;
  }();
  if (!api.missing.empty())
    throw Error(ErrorKind::unsupported, "run-time CUDA compilation needs NVRTC, but " + api.missing,
                "cuda", "dlopen");
  return api;
}
#undef PARPAT_NVRTC_FUNCTIONS

void nvrtc_check(nvrtcResult status, const char* call) {
  if (status != NVRTC_SUCCESS)
    throw Error(ErrorKind::backend,
                std::string(call) + " failed: " + nvrtc().nvrtcGetErrorString(status), "cuda", call,
                static_cast<int>(status));
}

// PTX of the kernel `name_expression` ("pairwise_fast<GaussianTerm>") from the embedded kernel
// text after `prelude`, for `device`'s architecture, and the kernel's mangled name.
struct CompiledKernel {
  std::string ptx, lowered_name;
};

CompiledKernel nvrtc_compile(const CudaDevice& device, const std::string& prelude,
                             const std::string& name_expression, const std::string& what) {
  const Nvrtc& api = nvrtc();
  std::string source = prelude + parpat_cl_pairwise_kernels;
  nvrtcProgram program;
  nvrtc_check(
      api.nvrtcCreateProgram(&program, source.c_str(), "pairwise_kernels.cu", 0, nullptr, nullptr),
      "nvrtcCreateProgram");
  struct Destroy {
    const Nvrtc& api;
    nvrtcProgram* p;
    ~Destroy() { api.nvrtcDestroyProgram(p); }
  } destroy{api, &program};
  nvrtc_check(api.nvrtcAddNameExpression(program, name_expression.c_str()),
              "nvrtcAddNameExpression");
  std::string arch = "--gpu-architecture=compute_" + std::to_string(device.props().major) +
                     std::to_string(device.props().minor);
  const char* options[] = {arch.c_str(), "--std=c++17", "-default-device"};
  nvrtcResult status = api.nvrtcCompileProgram(program, 3, options);
  std::size_t log_size = 0;
  api.nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 1) api.nvrtcGetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  if (verbose() && !log.empty())
    std::cerr << "[cuda] NVRTC log of " << what << " (" << arch << "):\n" << log << "\n";
  if (status != NVRTC_SUCCESS)
    throw Error(ErrorKind::invalid_argument,
                "CUDA (NVRTC) compilation of " + what + " failed: " + log, "cuda",
                "nvrtcCompileProgram", static_cast<int>(status));
  CompiledKernel out;
  std::size_t ptx_size = 0;
  nvrtc_check(api.nvrtcGetPTXSize(program, &ptx_size), "nvrtcGetPTXSize");
  out.ptx.assign(ptx_size, '\0');
  nvrtc_check(api.nvrtcGetPTX(program, out.ptx.data()), "nvrtcGetPTX");
  while (!out.ptx.empty() && out.ptx.back() == '\0')
    out.ptx.pop_back();  // c_str() terminates it again for the loader
  const char* lowered = nullptr;
  nvrtc_check(api.nvrtcGetLoweredName(program, name_expression.c_str(), &lowered),
              "nvrtcGetLoweredName");
  out.lowered_name = lowered;
  return out;
}

// A compiled expression kernel, loaded once per process and device: like the OpenCL program
// cache, so plans for the same expression do not recompile it.
struct LoadedExpression {
  std::string ptx;
  cudaKernel_t kernel = nullptr;
};

const LoadedExpression& load_expression(const CudaDevice& device, const std::string& prelude,
                                        const std::string& name_expression,
                                        const std::string& what) {
  static std::mutex mutex;
  static std::map<std::string, LoadedExpression> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::string key = std::to_string(device.ordinal()) + '\n' + name_expression + '\n' + prelude;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  CompiledKernel compiled = nvrtc_compile(device, prelude, name_expression, what);
  LoadedExpression loaded;
  loaded.ptx = std::move(compiled.ptx);
  cudaLibrary_t library = nullptr;
  PARPAT_CUDA(
      cudaLibraryLoadData(&library, loaded.ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  PARPAT_CUDA(cudaLibraryGetKernel(&loaded.kernel, library, compiled.lowered_name.c_str()));
  return cache.emplace(key, std::move(loaded)).first->second;
}

class CudaPairwise final : public PairwiseKernelImpl {
 public:
  CudaPairwise(const Device& d, const PairwiseProblem& p, Shape shape)
      : device_(d), cuda_(backend_cast<CudaDevice>(d)), p_(p), shape_(shape) {
    cuda_.activate();
    const PairwiseFastPolicy fast = tuned<PairwiseFastPolicy>(d.info());
    tpb_ = p.threads_per_block                    ? p.threads_per_block
           : shape != Shape::fast                 ? tuned<PairwiseSimplePolicy>(d.info()).block
           : p.kernel == PairwiseKernel::gaussian ? fast.gaussian_block
                                                  : fast.block;
    items_ = shape_info(shape).items;
    if (shape == Shape::fast && p_.kernel != PairwiseKernel::expression) {
      items_ = checked_fast_items(p_.kernel == PairwiseKernel::gaussian ? fast.gaussian_items
                                                                        : fast.product_items);
    }
    if (p_.scaled_sum() && p_.y <= tuned<PairwiseShortcutPolicy>(d.info()).group_sum_max_y) {
      const long long wanted = (p_.x + kGroupSumThreads * 4ll - 1) / (kGroupSumThreads * 4ll);
      group_sum_blocks_ = static_cast<unsigned>(
          std::clamp<long long>(wanted, 1, 2ll * std::max(1, d.info().compute_units)));
      return;
    }
    if (p_.scaled_sum()) {
      sum_reducer_ = make_sum_reducer(d, p_.y);
      sum_ = Buffer(d, sizeof(float));
      return;
    }
    if (p_.kernel == PairwiseKernel::expression) {
      const LoadedExpression& loaded = load_expression(
          cuda_, expression_prelude(), name_expression(), "the expression '" + p_.expression + "'");
      ptx_ = loaded.ptx;
      kernel_ = reinterpret_cast<const void*>(loaded.kernel);
    } else if (p_.kernel == PairwiseKernel::gaussian) {
      gaussian_.s = gaussian_scale(p_.h);
    }
    const int tuned_tpb = tpb_;
    int max_tpb = fit_kernel(tuned_tpb);
    if (shape_ == Shape::fast) {
      const int threads_per_cu = fast.split_threads_per_cu;
      slices_ = y_slices(p_.x, p_.y, tpb_, items_, d.info().compute_units, threads_per_cu);
      // B split into slices: X is small, so fewer x per thread (more threads, fewer slices)
      // where a split width is tuned.
      const int split_items = p_.kernel == PairwiseKernel::expression ? 0 : fast.split_items;
      if (slices_.count > 1 && split_items != 0 && split_items != items_) {
        items_ = checked_fast_items(split_items);
        max_tpb = fit_kernel(tuned_tpb);
        slices_ = y_slices(p_.x, p_.y, tpb_, items_, d.info().compute_units, threads_per_cu);
      }
      if (slices_.count > 1) {
        partial_ = Buffer(d, std::size_t(slices_.count) * std::size_t(p_.x) * sizeof(float));
        if (fast.combine_in_kernel) {
          const long long per_block = static_cast<long long>(tpb_) * items_;
          std::vector<unsigned> zeros(static_cast<std::size_t>((p_.x + per_block - 1) / per_block));
          tickets_ = Buffer(d, zeros.size() * sizeof(unsigned));
          tickets_.upload(zeros.data(), tickets_.bytes());
        }
      }
    }
    if (tpb_ > max_tpb)
      throw_invalid("threads per block " + std::to_string(tpb_) + " exceeds the " +
                    std::to_string(max_tpb) + " this kernel allows on " + device_.info().name);
  }

  int threads_per_block() const override { return tpb_; }

  void run(const Array& a, const Array& b, const Array& c) override {
    cuda_.activate();
    auto* A = static_cast<const float*>(a.buffer().handle());
    auto* B = static_cast<const float*>(b.buffer().handle());
    auto* C = static_cast<float*>(c.buffer().handle());
    long long X = p_.x, Y = p_.y;
    auto* sum = static_cast<float*>(sum_.handle());
    if (group_sum_blocks_) {
      pairwise_scale_by_group_sum<<<group_sum_blocks_, kGroupSumThreads, 0, cuda_.stream()>>>(
          A, B, C, X, Y);
      check_launch("pairwise_scale_by_group_sum");
      return;
    }
    if (p_.scaled_sum()) {
      if (sum_reducer_) {
        sum_reducer_->run(b, sum_, Buffer());
      } else {
        pairwise_sum_b<<<1, kSumThreads, 0, cuda_.stream()>>>(B, Y, sum);
        check_launch("pairwise_sum_b");
      }
      unsigned blocks = static_cast<unsigned>((X + 255) / 256);
      pairwise_scale<<<blocks, 256, 0, cuda_.stream()>>>(A, sum, C, X);
      check_launch("pairwise_scale");
      return;
    }
    ShapeInfo info = shape_info(shape_);
    long long per_block = static_cast<long long>(tpb_) * items_;
    dim3 grid(static_cast<unsigned>((X + per_block - 1) / per_block));
    void* term = p_.kernel == PairwiseKernel::gaussian ? static_cast<void*>(&gaussian_)
                                                       : static_cast<void*>(&product_);
    std::size_t shared = info.shared_tile ? tpb_ * sizeof(float) : 0;
    if (shape_ != Shape::fast) {
      void* args[] = {&A, &B, &C, &X, &Y, term};
      PARPAT_CUDA(cudaLaunchKernel(kernel_, grid, dim3(tpb_), args, shared, cuda_.stream()));
      return;
    }
    grid.y = static_cast<unsigned>(slices_.count);
    long long length = slices_.length;
    auto* partial = static_cast<float*>(partial_.handle());
    auto* tickets = static_cast<unsigned*>(tickets_.handle());
    void* args[] = {&A, &B, &C, &X, &Y, term, &length, &partial, &tickets};
    PARPAT_CUDA(cudaLaunchKernel(kernel_, grid, dim3(tpb_), args, shared, cuda_.stream()));
    if (slices_.count > 1 && tickets == nullptr) {
      unsigned blocks = static_cast<unsigned>((X + 255) / 256);
      pairwise_sum_slices<<<blocks, 256, 0, cuda_.stream()>>>(partial, slices_.count, X, C);
      check_launch("pairwise_sum_slices");
    }
  }

  // PTX of the kernel this plan runs; the built-in terms are compiled through NVRTC from the
  // same text on request.
  std::string program_binary() const override {
    if (!ptx_.empty()) return ptx_;
    if (p_.scaled_sum())
      throw_invalid("the product shortcut runs no pairwise kernel; use --brute-force");
    std::string term = p_.kernel == PairwiseKernel::gaussian ? "GaussianTerm" : "ProductTerm";
    if (shape_ == Shape::fast) term += ", " + std::to_string(items_);
    return nvrtc_compile(cuda_, "", std::string(shape_info(shape_).kernel) + "<" + term + ">",
                         "pairwise kernels")
        .ptx;
  }

 private:
  std::string expression_prelude() const {
    return "#define PAIRWISE_EXPRESSION(a, b) (" + p_.expression + ")\n#line 1\n";
  }
  std::string name_expression() const {
    return std::string(shape_info(shape_).kernel) + "<ExpressionTerm>";
  }

  // Picks the built-in kernel for items_ (an expression's kernel is already loaded), sets tpb_
  // from `tuned_tpb` when the caller gave none (fitting the kernel and the problem) and returns
  // the most threads per block the kernel allows.
  int fit_kernel(int tuned_tpb) {
    if (p_.kernel == PairwiseKernel::gaussian)
      kernel_ = builtin_kernel<GaussianTerm>(shape_, items_);
    else if (p_.kernel == PairwiseKernel::product)
      kernel_ = builtin_kernel<ProductTerm>(shape_, items_);
    cudaFuncAttributes attr{};
    PARPAT_CUDA(cudaFuncGetAttributes(&attr, kernel_));
    if (!p_.threads_per_block)
      tpb_ = block_that_fills(std::min(tuned_tpb, attr.maxThreadsPerBlock), p_.x, items_,
                              device_.info().compute_units);
    return attr.maxThreadsPerBlock;
  }

  Device device_;
  CudaDevice& cuda_;
  PairwiseProblem p_;
  Shape shape_;
  int tpb_ = 256;
  int items_ = 1;  // x per thread
  YSlices slices_{1, 1};
  Buffer partial_;  // slices_.count rows of X partial results when B is split
  Buffer tickets_;  // one per column of blocks when the last of each adds the rows (else empty)
  const void* kernel_ = nullptr;
  std::string ptx_;
  GaussianTerm gaussian_{1.0f};
  ProductTerm product_;
  unsigned group_sum_blocks_ = 0;  // the product shortcut in one launch (a short B); 0: not
  std::unique_ptr<Reducer> sum_reducer_;
  Buffer sum_;
};

template <Shape S>
std::unique_ptr<PairwiseKernelImpl> make(const Device& d, const PairwiseProblem& p) {
  return std::make_unique<CudaPairwise>(d, p, S);
}

}  // namespace

std::vector<PairwiseVariant> cuda_pairwise_variants() {
  auto info = [](const char* name, const char* idea, const char* params) {
    return variant_info("pairwise", Backend::cuda, name, idea, params);
  };
  return {
      {info("naive", "one x per thread, B from global memory", "block=256"), make<Shape::naive>},
      {info("local", "tiles of B in shared memory, one x per thread", "block=256 tile=block"),
       make<Shape::local>},
      {info("vec4", "4 x per thread, A and C as float4", "block=256 items=4"), make<Shape::vec4>},
      {info("vec8", "8 x per thread, A and C as 2×float4", "block=256 items=8"), make<Shape::vec8>},
      {info("local-vec8", "tiles of B in shared memory, 8 x per thread", "block=256 items=8"),
       make<Shape::local_vec8>},
      {info("fast",
            "8 strided x per thread in registers, B tiles as float4 shared-memory broadcasts, "
            "32 independent FMA chains per load; gaussian: 1 exp2 in 4 as an FMA polynomial",
            "block=256 items=8 or 16 (tuned; 4 when B is split) tile=1024"),
       make<Shape::fast>},
  };
}

}  // namespace parpat::detail
