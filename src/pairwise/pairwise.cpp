// Pairwise dispatch: kernel names, option checks, the variant registry of every backend built in,
// and the plan object, which handles empty B itself (C is all zeros) so kernels never see it.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "pairwise/pairwise_internal.hpp"
#include "runtime/contiguous.hpp"
#include "runtime/device_impl.hpp"
#include "runtime/variant_table.hpp"
#include "runtime/variant_tables.hpp"

namespace parpat {

namespace {
constexpr const char* kKernelNames[] = {"product", "gaussian", "expression"};
}  // namespace

const char* pairwise_kernel_name(PairwiseKernel k) {
  return kKernelNames[static_cast<int>(k)];
}

PairwiseKernel parse_pairwise_kernel(const std::string& name) {
  if (name == "product") return PairwiseKernel::product;
  if (name == "gaussian") return PairwiseKernel::gaussian;
  throw_invalid("unknown pairwise kernel '" + name +
                "' (expected product or gaussian, or --expr EXPR)");
}

namespace detail {

PARPAT_DEFINE_VARIANT_TABLE(pairwise, PairwiseVariant, "variant")

std::unique_ptr<Reducer> make_sum_reducer(const Device& device, std::int64_t y) {
  bool available = false;
  for (const auto& v : list_variants("reduce"))
    available = available || v.backend == backend_name(device.backend());
  if (!available) return nullptr;
  return std::make_unique<Reducer>(device, DType::float32, std::vector<std::int64_t>{y}, 0,
                                   ReduceOptions{ReduceOp::sum, Axis::all, ""});
}

double pairwise_max_relative_error(const std::vector<float>& got,
                                   const std::vector<double>& expected,
                                   const std::vector<double>& magnitude) {
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    double scale = std::max(std::fabs(expected[i]), magnitude[i]);
    double err = std::fabs(static_cast<double>(got.at(i)) - expected[i]);
    if (std::isnan(err)) return err;
    if (scale > 0) err /= scale;
    worst = std::max(worst, err);
  }
  return worst;
}

}  // namespace detail

namespace {
std::string shortest(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// The expressions a kernel may be built around: a and b, float literals, arithmetic,
// comparisons, && || ! and ?:, parentheses and the math functions that OpenCL C and CUDA both
// have. Anything else (another name, a pointer, an index, a statement, a preprocessor line)
// would be pasted into the kernel's source, so it is refused here, with where it went wrong,
// before any compiler sees it. A recursive descent over C's precedence levels.
class ExpressionChecker {
 public:
  explicit ExpressionChecker(const std::string& text) : text_(text) { next(); }

  void check() {
    conditional();
    if (!token_.empty()) fail("unexpected '" + token_ + "'");
  }

 private:
  static bool is_function(const std::string& name) {
    static const char* const kFunctions[] = {
        "sin",   "cos",      "tan",   "asin",  "acos",   "atan",   "atan2", "sinh",
        "cosh",  "tanh",     "asinh", "acosh", "atanh",  "exp",    "exp2",  "expm1",
        "log",   "log2",     "log10", "log1p", "sqrt",   "cbrt",   "rsqrt", "fabs",
        "fmin",  "fmax",     "fmod",  "pow",   "hypot",  "floor",  "ceil",  "round",
        "trunc", "copysign", "erf",   "erfc",  "tgamma", "lgamma", "fma"};
    return std::find_if(std::begin(kFunctions), std::end(kFunctions),
                        [&](const char* f) { return name == f; }) != std::end(kFunctions);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw_invalid("pairwise expression, at character " + std::to_string(start_ + 1) + ": " + what +
                  " (expressions take a, b, float numbers, + - * /, comparisons, && || ! ?: and "
                  "math functions such as exp, sqrt, fabs, pow)");
  }

  // The next token into token_ ("" at the end): a name, a number or an operator.
  void next() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
      ++pos_;
    start_ = pos_;
    if (pos_ == text_.size()) {
      token_.clear();
      return;
    }
    auto at = [&](std::size_t i) { return i < text_.size() ? text_[i] : '\0'; };
    auto digit = [&](std::size_t i) { return std::isdigit(static_cast<unsigned char>(at(i))); };
    auto word = [&](std::size_t i) {
      return std::isalnum(static_cast<unsigned char>(at(i))) || at(i) == '_';
    };
    std::size_t end = pos_;
    if (digit(end) || (at(end) == '.' && digit(end + 1))) {
      while (digit(end))
        ++end;
      if (at(end) == '.') ++end;
      while (digit(end))
        ++end;
      if ((at(end) == 'e' || at(end) == 'E') &&
          (digit(end + 1) || ((at(end + 1) == '+' || at(end + 1) == '-') && digit(end + 2)))) {
        end += 2;
        while (digit(end))
          ++end;
      }
      if (at(end) == 'f' || at(end) == 'F') ++end;
      if (word(end)) fail("a malformed number");
    } else if (std::isalpha(static_cast<unsigned char>(at(end))) || at(end) == '_') {
      while (word(end))
        ++end;
    } else {
      static const char* const kTwo[] = {"<=", ">=", "==", "!=", "&&", "||"};
      const std::string two = text_.substr(pos_, 2);
      end = pos_ + (std::find(std::begin(kTwo), std::end(kTwo), two) != std::end(kTwo) ? 2 : 1);
      if (end == pos_ + 1 && std::string("+-*/<>!?:(),").find(at(pos_)) == std::string::npos)
        fail(std::isprint(static_cast<unsigned char>(at(pos_)))
                 ? "'" + std::string(1, at(pos_)) + "' is not part of an expression"
                 : "a character that is not part of an expression");
    }
    token_ = text_.substr(pos_, end - pos_);
    pos_ = end;
  }

  bool accept(const char* t) {
    if (token_ != t) return false;
    next();
    return true;
  }

  void expect(const char* t) {
    if (!accept(t))
      fail(token_.empty() ? std::string("missing '") + t + "'"
                          : "'" + token_ + "' where '" + t + "' belongs");
  }

  void conditional() {
    binary(0);
    if (accept("?")) {
      conditional();
      expect(":");
      conditional();
    }
  }

  // Levels of C's binary operators, loosest first.
  void binary(std::size_t level) {
    static const std::vector<std::vector<std::string>> kLevels = {
        {"||"}, {"&&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"+", "-"}, {"*", "/"}};
    if (level == kLevels.size()) return unary();
    binary(level + 1);
    const auto& ops = kLevels[level];
    while (std::find(ops.begin(), ops.end(), token_) != ops.end()) {
      next();
      binary(level + 1);
    }
  }

  void unary() {
    if (accept("-") || accept("+") || accept("!")) return unary();
    if (accept("(")) {
      conditional();
      expect(")");
      return;
    }
    if (token_.empty()) fail("the expression ends where a value belongs");
    const std::string t = token_;
    const bool number = std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '.';
    if (number || t == "a" || t == "b") return next();
    if (!std::isalpha(static_cast<unsigned char>(t[0])) && t[0] != '_')
      fail("'" + t + "' where a value belongs");
    if (!is_function(t)) fail("unknown name '" + t + "'");
    next();
    expect("(");
    conditional();
    while (accept(","))
      conditional();
    expect(")");
  }

  const std::string& text_;
  std::size_t pos_ = 0, start_ = 0;
  std::string token_;
};
}  // namespace

struct Pairwise::Impl {
  Device device;
  detail::PairwiseProblem problem;
  std::string variant;
  std::unique_ptr<detail::PairwiseKernelImpl> kernel;  // null when B is empty
  std::vector<float> zeros;                            // C when B is empty
  detail::DenseCopy dense_a, dense_b;                  // strided inputs read through these
};

Pairwise::Pairwise(const Device& device, std::int64_t x, std::int64_t y,
                   const PairwiseOptions& options)
    : impl_(new Impl{device, {}, {}, nullptr, {}, {}, {}}) {
  if (x <= 0) throw_invalid("pairwise needs a non-empty A (X = 0)");
  if (y < 0) throw_invalid("pairwise needs Y ≥ 0");
  if (options.kernel == PairwiseKernel::gaussian && !(options.h > 0 && std::isfinite(options.h)))
    throw_invalid("gaussian bandwidth h must be a positive finite number, got " +
                  shortest(options.h));
  // The kernels scale a − b by s = sqrt(log2(e) / (2h²)) in float32, which must stay finite.
  if (options.kernel == PairwiseKernel::gaussian &&
      !std::isfinite(detail::gaussian_scale(static_cast<float>(options.h))))
    throw_invalid("gaussian bandwidth h = " + shortest(options.h) +
                  " is too small for float32: its scale 1/h overflows");
  if (options.kernel == PairwiseKernel::expression) {
    if (options.expression.find_first_not_of(" \t") == std::string::npos)
      throw_invalid("the pairwise expression is empty");
    ExpressionChecker(options.expression).check();
    if (device.backend() == Backend::cpu)
      throw_invalid(
          "a custom pairwise expression needs a GPU backend (cuda or opencl): the cpu "
          "backend has only the built-in kernels product and gaussian");
  }
  if (options.threads_per_block < 0 || options.threads_per_block > 1024)
    throw_invalid("threads per block must be between 1 and 1024");
  auto& p = impl_->problem;
  p.x = x;
  p.y = y;
  p.kernel = options.kernel;
  p.h = static_cast<float>(options.h);
  p.expression = options.expression;
  p.brute_force = options.brute_force;
  p.threads_per_block = options.threads_per_block;
  const auto& variant = detail::find_pairwise_variant(device.backend(), options.variant);
  impl_->variant = variant.info.name;
  if (y == 0) {
    impl_->zeros.assign(static_cast<std::size_t>(x), 0.0f);
    return;
  }
  impl_->kernel = variant.make(device, p);
}

Pairwise::~Pairwise() = default;
Pairwise::Pairwise(Pairwise&&) noexcept = default;
Pairwise& Pairwise::operator=(Pairwise&&) noexcept = default;

std::int64_t Pairwise::x() const {
  return impl_->problem.x;
}
std::int64_t Pairwise::y() const {
  return impl_->problem.y;
}
const std::string& Pairwise::variant() const {
  return impl_->variant;
}
int Pairwise::threads_per_block() const {
  return impl_->kernel ? impl_->kernel->threads_per_block() : 0;
}
std::string Pairwise::program_binary() const {
  return impl_->kernel ? impl_->kernel->program_binary() : std::string();
}

void Pairwise::run(const Array& a, const Array& b, const Array& c, Stream stream) {
  const auto& p = impl_->problem;
  for (const Array* arr : {&a, &b, &c}) {
    if (arr->dtype() != DType::float32 || arr->ndim() != 1)
      throw_invalid("pairwise takes 1-D float32 arrays");
  }
  detail::require_contiguous(c, "pairwise's output");
  if (a.size() != p.x || c.size() != p.x || b.size() != p.y)
    throw_invalid("pairwise plan was made for X = " + std::to_string(p.x) +
                  ", Y = " + std::to_string(p.y) + ", not for these arrays");
  for (const Array* arr : {&a, &b, &c})
    if (&arr->buffer().device().impl() != &impl_->device.impl())
      throw_invalid("pairwise plan of " + impl_->device.label() +
                    " was given an array of another device");
  detail::StreamScope scope(impl_->device.impl(), stream);
  if (!impl_->kernel) {
    c.buffer().device().impl().upload(c.buffer().handle(), 0, impl_->zeros.data(),
                                      impl_->zeros.size() * sizeof(float));
    return;
  }
  impl_->kernel->run(impl_->dense_a.of(a), impl_->dense_b.of(b), c);
}

PairwiseResult pairwise(const Array& a, const Array& b, const PairwiseOptions& options) {
  auto check = [](const Array& arr, const char* name) {
    if (arr.dtype() != DType::float32)
      throw_invalid(std::string("pairwise ") + name + " must be float32, got " +
                    dtype_name(arr.dtype()));
    if (arr.ndim() != 1)
      throw_invalid(std::string("pairwise ") + name + " must be 1-D, got " +
                    std::to_string(arr.ndim()) + "-D");
  };
  check(a, "A");
  check(b, "B");
  Device device = a.device();
  if (b.device().backend() != device.backend() || &b.device().impl() != &device.impl())
    throw_invalid("pairwise A and B must be on the same device");
  Pairwise plan(device, a.size(), b.size(), options);
  Array c(device, DType::float32, {a.size()});
  PairwiseResult result;
  if (options.timed) {
    device.impl().timer_start(detail::TimerMode::events_only);
    plan.run(a, b, c);
    result.time_ms = device.impl().timer_stop_ms();
  } else {
    plan.run(a, b, c);
  }
  result.c = c.to_vector<float>();
  return result;
}

}  // namespace parpat
