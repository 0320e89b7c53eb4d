// Pairwise: every backend × variant × kernel present against the float64 reference (DESIGN.md
// §2, §6) on fresh random inputs in [−1, 1]: max relative error ≤ 1e-4 with Y up to 2^16, X and
// Y not multiples of 4, 8 or the block size, X or Y = 1, several block sizes; run-time
// expressions on the GPU backends; bad input through the library and the CLI.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>

#include "pairwise/pairwise_internal.hpp"
#include "parpat/array.hpp"
#include "parpat/error.hpp"
#include "parpat/io.hpp"
#include "parpat/pairwise.hpp"
#include "parpat/registry.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

constexpr double kTolerance = 1e-4;

std::vector<Target> targets() {
  return variant_targets("pairwise");
}

std::vector<float> uniform(std::int64_t n, std::mt19937_64& rng) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v)
    x = static_cast<float>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
  return v;
}

bool is_gpu(const Device& d) {
  return d.backend() != Backend::cpu;
}

// Runs the plan on the target and returns C.
std::vector<float> run_on(const Target& t, const std::vector<float>& a, const std::vector<float>& b,
                          const PairwiseOptions& options) {
  Array av = Array::from_vector(t.device, a);
  Array bv(t.device, DType::float32, {static_cast<std::int64_t>(b.size())});
  if (!b.empty()) bv.upload(b.data());
  Array cv(t.device, DType::float32, {static_cast<std::int64_t>(a.size())});
  Pairwise plan(t.device, static_cast<std::int64_t>(a.size()), static_cast<std::int64_t>(b.size()),
                options);
  plan.run(av, bv, cv);
  return cv.to_vector<float>();
}

// Whether run-time compilation is missing on this device (CUDA without the NVRTC library): the
// expression cases are then skipped with the reason, never silently.
std::string compiler_missing(const Device& d) {
  try {
    Pairwise(d, 1, 1, {PairwiseKernel::expression, 1, "a * b", "", false, 0});
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::unsupported) return e.what();
  }
  return {};
}

class PairwiseTest : public ::testing::TestWithParam<Target> {
 protected:
  // C of the target against the float64 reference of a built-in kernel.
  void check(std::int64_t x, std::int64_t y, PairwiseOptions options, std::mt19937_64& rng) {
    options.variant = GetParam().variant;
    auto a = uniform(x, rng), b = uniform(y, rng);
    detail::PairwiseProblem p;
    p.x = x;
    p.y = y;
    p.kernel = options.kernel;
    p.h = static_cast<float>(options.h);
    std::vector<double> expected(static_cast<std::size_t>(x)), magnitude(expected.size());
    detail::pairwise_reference(a.data(), b.data(), p, expected.data());
    detail::pairwise_magnitude(a.data(), b.data(), p, magnitude.data());
    SCOPED_TRACE(std::string(pairwise_kernel_name(options.kernel)) +
                 " h=" + std::to_string(options.h) + (options.brute_force ? " brute force" : "") +
                 " X=" + std::to_string(x) + " Y=" + std::to_string(y) +
                 " tpb=" + std::to_string(options.threads_per_block) + ", seed " +
                 std::to_string(run_seed()));
    auto got = run_on(GetParam(), a, b, options);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(x));
    double err = detail::pairwise_max_relative_error(got, expected, magnitude);
    EXPECT_LE(err, kTolerance);
  }

  // Sizes that stress every remainder path: X or Y = 1, X and Y odd around 4, 8 and the
  // block sizes, a tail tile shorter than the `fast` tile of 1024.
  std::vector<std::pair<std::int64_t, std::int64_t>> sizes() const {
    bool serial = GetParam().variant == "serial";
    std::vector<std::pair<std::int64_t, std::int64_t>> s = {
        {1, 1}, {1, 1031}, {1029, 1}, {3, 5}, {37, 2053}, {1031, 263}, {2059, 1029}};
    if (!serial) s.push_back({4111, 3});
    return s;
  }
};

// The shortcut both ways on the GPU backends: the library's reduce then a scale, and one launch
// whose every block sums B itself (B up to 2^16 values here).
TEST_P(PairwiseTest, ProductShortcutMatchesReference) {
  std::mt19937_64 rng(run_seed());
  for (const char* max_y : {"0", "65536"}) {
    ScopedTuning tuning(std::string("pairwise.shortcut.group_sum_max_y=") + max_y);
    SCOPED_TRACE(std::string("group_sum_max_y=") + max_y);
    for (auto [x, y] : sizes())
      check(x, y, {PairwiseKernel::product, 1.0, "", "", false, 0}, rng);
    check(3001, (1 << 16) - 3, {PairwiseKernel::product, 1.0, "", "", false, 0}, rng);
  }
}

TEST_P(PairwiseTest, ProductBruteForceMatchesReference) {
  std::mt19937_64 rng(run_seed() + 1);
  for (auto [x, y] : sizes())
    check(x, y, {PairwiseKernel::product, 1.0, "", "", true, 0}, rng);
}

TEST_P(PairwiseTest, GaussianMatchesReference) {
  std::mt19937_64 rng(run_seed() + 2);
  for (auto [x, y] : sizes())
    for (double h : {0.25, 1.0})
      check(x, y, {PairwiseKernel::gaussian, h, "", "", false, 0}, rng);
}

// A narrow bandwidth: a − b must be formed before the scale 1/h, or the rounding of a·s and b·s
// alone is a relative error of about 3e-7 / h in each term (1.4e-4 at h = 0.001).
TEST_P(PairwiseTest, GaussianOfNarrowBandwidthMatchesReference) {
  std::mt19937_64 rng(run_seed() + 12);
  for (double h : {1e-3, 3e-4})
    check(257, 4099, {PairwiseKernel::gaussian, h, "", "", false, 0}, rng);
}

// Y = 2^16 − 3: the longest sums the contract covers keep float32 accuracy.
TEST_P(PairwiseTest, LongSumsStayWithinTolerance) {
  std::mt19937_64 rng(run_seed() + 3);
  std::int64_t x = GetParam().variant == "serial" ? 5 : 77;
  check(x, (1 << 16) - 3, {PairwiseKernel::product, 1.0, "", "", true, 0}, rng);
  check(x, (1 << 16) - 3, {PairwiseKernel::gaussian, 0.3, "", "", false, 0}, rng);
}

TEST_P(PairwiseTest, BlockSizes) {
  if (!is_gpu(GetParam().device)) GTEST_SKIP() << "the CPU backend has no block size";
  std::mt19937_64 rng(run_seed() + 4);
  int max_group = GetParam().device.info().max_group_size;
  for (int tpb : {32, 64, 96, 1000, 1024}) {
    if (tpb > max_group) continue;
    try {
      check(3001, 1100, {PairwiseKernel::product, 1.0, "", "", true, tpb}, rng);
      check(517, 2100, {PairwiseKernel::gaussian, 0.5, "", "", false, tpb}, rng);
    } catch (const Error& e) {
      // A compiled kernel may hold fewer work-items than the device's group limit (its
      // registers decide; NVIDIA's OpenCL reports 256 here). Asking for more must be refused
      // cleanly, naming the limit; sizes up to 256 must always run.
      EXPECT_GT(tpb, 256) << e.what();
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("exceeds"), std::string::npos) << e.what();
    }
  }
}

// One plan, built once, runs again on new data (its workspaces are reused, not rebuilt).
TEST_P(PairwiseTest, PlanRunsAgainOnNewData) {
  const Target& t = GetParam();
  std::mt19937_64 rng(run_seed() + 8);
  const std::int64_t x = 999, y = 1027;
  for (auto kernel : {PairwiseKernel::product, PairwiseKernel::gaussian}) {
    Pairwise plan(t.device, x, y, {kernel, 0.5, "", t.variant, kernel == PairwiseKernel::product});
    detail::PairwiseProblem p;
    p.x = x;
    p.y = y;
    p.kernel = kernel;
    p.h = 0.5f;
    for (int round = 0; round < 2; ++round) {
      auto a = uniform(x, rng), b = uniform(y, rng);
      Array av = Array::from_vector(t.device, a), bv = Array::from_vector(t.device, b);
      Array cv(t.device, DType::float32, {x});
      plan.run(av, bv, cv);
      std::vector<double> expected(x), magnitude(x);
      detail::pairwise_reference(a.data(), b.data(), p, expected.data());
      detail::pairwise_magnitude(a.data(), b.data(), p, magnitude.data());
      EXPECT_LE(detail::pairwise_max_relative_error(cv.to_vector<float>(), expected, magnitude),
                kTolerance)
          << pairwise_kernel_name(kernel) << " round " << round << ", seed " << run_seed();
    }
    Array wrong(t.device, DType::float32, {x + 1});
    Array bv(t.device, DType::float32, {y}), cv(t.device, DType::float32, {x});
    EXPECT_THROW(plan.run(wrong, bv, cv), Error) << "a plan runs only on its own extents";
  }
}

// Deterministic: one plan run on B, on another B' and on B again gives the same bits for B
// both times, into fresh outputs (a ticket left behind by one launch would have the next one
// add slices before they are written, and B' leaves other values in them); and `fast` gives the
// same bits whether the slices of B are added in the launch or by a second kernel. X is small
// enough for `fast` to split B on every device.
TEST_P(PairwiseTest, RepeatedRunsAreBitIdentical) {
  const Target& t = GetParam();
  std::mt19937_64 rng(run_seed() + 9);
  const std::int64_t x = 1000, y = 3001;
  auto a = uniform(x, rng);
  Array av = Array::from_vector(t.device, a);
  Array b = Array::from_vector(t.device, uniform(y, rng));
  Array other_b = Array::from_vector(t.device, uniform(y, rng));
  const std::vector<float> poison(static_cast<std::size_t>(x), std::nanf(""));
  for (auto kernel : {PairwiseKernel::product, PairwiseKernel::gaussian}) {
    const PairwiseOptions options{kernel, 0.5, "", t.variant, true, 0};
    auto run = [&](Pairwise& plan, const Array& bv) {
      Array cv = Array::from_vector(t.device, poison);
      plan.run(av, bv, cv);
      return cv.to_vector<float>();
    };
    std::vector<std::vector<float>> results;  // B, B', B for each way of adding the slices
    for (const char* combine : {"1", "0"}) {
      ScopedTuning tuning(std::string("pairwise.fast.combine_in_kernel=") + combine);
      Pairwise plan(t.device, x, y, options);
      for (const Array* bv : {&b, &other_b, &b})
        results.push_back(run(plan, *bv));
    }
    const auto bytes = static_cast<std::size_t>(x) * sizeof(float);
    for (std::size_t i : {2, 3, 5})
      EXPECT_EQ(0, std::memcmp(results[0].data(), results[i].data(), bytes))
          << pairwise_kernel_name(kernel) << ": run " << i << " differs from run 0, seed "
          << run_seed();
    EXPECT_EQ(0, std::memcmp(results[1].data(), results[4].data(), bytes))
        << pairwise_kernel_name(kernel) << ": B' differs between the two ways, seed " << run_seed();
    EXPECT_NE(0, std::memcmp(results[0].data(), results[1].data(), bytes));
    EXPECT_TRUE(
        std::none_of(results[0].begin(), results[0].end(), [](float c) { return std::isnan(c); }))
        << pairwise_kernel_name(kernel) << ": C was not written everywhere";
  }
}

TEST_P(PairwiseTest, EmptyBGivesZeros) {
  std::mt19937_64 rng(run_seed() + 5);
  for (auto kernel : {PairwiseKernel::product, PairwiseKernel::gaussian})
    for (bool brute : {false, true}) {
      auto got =
          run_on(GetParam(), uniform(13, rng), {}, {kernel, 0.5, "", GetParam().variant, brute, 0});
      EXPECT_EQ(got, std::vector<float>(13, 0.0f));
    }
}

TEST_P(PairwiseTest, BadInputIsRejected) {
  const Target& t = GetParam();
  auto expect_invalid = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << what << " must be an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << what << ": " << e.what();
    }
  };
  PairwiseOptions gaussian{PairwiseKernel::gaussian, 1.0, "", t.variant, false, 0};
  expect_invalid([&] { Pairwise(t.device, 0, 5, gaussian); }, "X = 0");
  for (double h : {0.0, -1.0, std::nan("")}) {
    gaussian.h = h;
    expect_invalid([&] { Pairwise(t.device, 5, 5, gaussian); }, "h = " + std::to_string(h));
  }
  Array ints = Array::from_vector(t.device, std::vector<std::int32_t>{1, 2, 3});
  Array floats = Array::from_vector(t.device, std::vector<float>{1, 2, 3});
  expect_invalid([&] { pairwise(ints, floats); }, "int32 A");
  expect_invalid([&] { pairwise(floats, ints); }, "int32 B");
  Array matrix(t.device, DType::float32, {2, 2});
  expect_invalid([&] { pairwise(matrix, floats); }, "2-D A");
  expect_invalid(
      [&] {
        pairwise(floats, floats, {PairwiseKernel::product, 1, "", "nope"});
      },
      "an unknown variant");
  if (!is_gpu(t.device)) {
    expect_invalid(
        [&] {
          pairwise(floats, floats, {PairwiseKernel::expression, 1, "a*b", t.variant});
        },
        "an expression on the CPU");
  }
}

// Run-time expressions, on GPU backends: compiled kernels against the expression in float64.
TEST_P(PairwiseTest, ExpressionsMatchTheirFloat64Form) {
  const Target& t = GetParam();
  if (!is_gpu(t.device)) GTEST_SKIP() << "expressions need a GPU backend";
  if (auto why = compiler_missing(t.device); !why.empty()) GTEST_SKIP() << why;
  // `size` bounds the float32 rounding of one term: the sum of the magnitudes of what the
  // expression adds, so that cancellation inside a term (a * b against 0.25f * a) is not
  // mistaken for an error of the kernel.
  struct Case {
    const char* text;
    std::function<double(double, double)> f;
    std::function<double(double, double)> size;
  };
  const Case cases[] = {
      {"a * b - 0.25f * a + b * b", [](double a, double b) { return a * b - 0.25 * a + b * b; },
       [](double a, double b) { return std::fabs(a * b) + std::fabs(0.25 * a) + b * b; }},
      {"sqrt(a * a + b * b + 1.0f)",
       [](double a, double b) { return std::sqrt(a * a + b * b + 1); },
       [](double a, double b) { return std::sqrt(a * a + b * b + 1); }},
  };
  std::mt19937_64 rng(run_seed() + 6);
  for (const auto& c : cases)
    for (auto [x, y] : sizes()) {
      SCOPED_TRACE(std::string(c.text) + " X=" + std::to_string(x) + " Y=" + std::to_string(y) +
                   ", seed " + std::to_string(run_seed()));
      auto a = uniform(x, rng), b = uniform(y, rng);
      std::vector<double> expected(a.size()), magnitude(a.size());
      for (std::size_t i = 0; i < a.size(); ++i)
        for (float bj : b) {
          expected[i] += c.f(a[i], bj);
          magnitude[i] += c.size(a[i], bj);
        }
      auto got = run_on(t, a, b, {PairwiseKernel::expression, 1, c.text, t.variant, false, 0});
      EXPECT_LE(detail::pairwise_max_relative_error(got, expected, magnitude), kTolerance);
    }
}

TEST_P(PairwiseTest, ExpressionThatDoesNotCompileIsOneClearError) {
  const Target& t = GetParam();
  if (!is_gpu(t.device)) GTEST_SKIP() << "expressions need a GPU backend";
  if (auto why = compiler_missing(t.device); !why.empty()) GTEST_SKIP() << why;
  try {
    Pairwise(t.device, 10, 10, {PairwiseKernel::expression, 1, "pow(a) + b", t.variant});
    ADD_FAILURE() << "a broken expression must be an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("failed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pow"), std::string::npos)
        << "the message carries the build log: " << e.what();
  }
}

// An expression is pasted into a kernel's source, so only expressions in a and b get there:
// anything else is refused by where it goes wrong, on every backend, before a compiler runs.
TEST_P(PairwiseTest, ExpressionsOutsideTheGrammarAreRefused) {
  const Target& t = GetParam();
  const std::pair<const char*, const char*> cases[] = {
      {"a*", "character 3: the expression ends where a value belongs"},
      {"(a", "missing ')'"},
      {"a + b)", "unexpected ')'"},
      {"undefined_fn(a)", "unknown name 'undefined_fn'"},
      {"b[0]", "'[' is not part of an expression"},
      {"a ? b : ", "ends where a value belongs"},
      {"a*b)\n#include \"/etc/passwd\"\n(a", "unexpected ')'"},
      {"printf(\"x\")", "unknown name 'printf'"},
      {"*(&a+1000000000)", "'*' where a value belongs"},
      {"({ while(1); a; })", "'{' is not part of an expression"},
      {"a +* b", "character 4: '*' where a value belongs"},
      {"1x", "a malformed number"},
      {"a;b", "';' is not part of an expression"},
      {"a\nb", "not part of an expression"},
  };
  for (const auto& [text, fragment] : cases) {
    SCOPED_TRACE(text);
    try {
      Pairwise(t.device, 10, 10, {PairwiseKernel::expression, 1, text, t.variant});
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("pairwise expression, at character ", 0), 0u)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, PairwiseTest, ::testing::ValuesIn(targets()), target_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PairwiseTest);

// How `fast` splits B: the slices cover B exactly, each starts 16-byte aligned (the kernels load
// B as float4 from every slice's start), small X fills the device and large X is never split.
TEST(PairwiseSlices, CoverBAlignedAndOnlyWhenXIsSmall) {
  for (long long x : {1ll, 37ll, 1ll << 14, 1ll << 20})
    for (long long y : {1ll, 3ll, 129ll, 1031ll, 4096ll, 65533ll})
      for (int tpb : {64, 256, 1024}) {
        auto s = detail::y_slices(x, y, tpb, 16, 132);
        SCOPED_TRACE("x=" + std::to_string(x) + " y=" + std::to_string(y) +
                     " tpb=" + std::to_string(tpb));
        ASSERT_GE(s.count, 1);
        EXPECT_GE(s.length * s.count, y);
        EXPECT_LT(s.length * (s.count - 1), std::max(y, 1ll));
        if (s.count > 1) EXPECT_EQ(s.length % 4, 0);
      }
  EXPECT_EQ(detail::y_slices(1ll << 20, 1ll << 14, 256, 16, 132).count, 1);
  EXPECT_EQ(detail::y_slices(1ll << 20, 1ll << 14, 1024, 8, 132).count, 1);
  auto small = detail::y_slices(1ll << 14, 1ll << 12, 64, 16, 132);
  EXPECT_EQ(small.length, detail::kSliceQuantum) << "16 blocks of 64 want every slice they can get";
  EXPECT_EQ(small.count, (1 << 12) / detail::kSliceQuantum);
}
// The CLI: results in the output file, --json, and every bad input is exit status 2 with one
// line on stderr.
class PairwiseCli : public ::testing::Test {
 protected:
  static std::string save(const std::string& name, DType t, std::vector<std::int64_t> shape,
                          const void* data) {
    std::string path = temp_path(name);
    write_npy(path, t, shape, data);
    return path;
  }
  static void expect_one_line_error(const CliResult& r, const std::string& what) {
    EXPECT_EQ(r.status, 2) << what << ": " << r.err;
    ASSERT_FALSE(r.err.empty()) << what;
    EXPECT_EQ(r.err.rfind("parpat: error: ", 0), 0u) << what << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << what << ": " << r.err;
  }
};

TEST_F(PairwiseCli, WritesCAndJson) {
  std::mt19937_64 rng(run_seed() + 7);
  auto a = uniform(101, rng), b = uniform(77, rng);
  std::string pa = save("a.npy", DType::float32, {101}, a.data());
  std::string pb = save("b.npy", DType::float32, {77}, b.data());
  std::string pc = temp_path("c.npy");
  for (const char* kernel :
       {"--kernel product", "--kernel product --brute-force", "--kernel gaussian --h 0.5"}) {
    for (const auto& d : devices()) {
      std::string args = std::string("pairwise ") + kernel + " --backend " +
                         backend_name(d.backend()) + " --json " + pa + " " + pb + " -o " + pc;
      CliResult r = run_cli(args);
      ASSERT_EQ(r.status, 0) << args << ": " << r.err;
      auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["pattern"], "pairwise");
      EXPECT_EQ(j["x"], 101);
      EXPECT_EQ(j["y"], 77);
      HostArray c = read_npy(pc);
      ASSERT_EQ(c.dtype, DType::float32);
      ASSERT_EQ(c.shape, std::vector<std::int64_t>{101});
      detail::PairwiseProblem p;
      p.x = 101;
      p.y = 77;
      p.kernel = std::string(kernel).find("gaussian") != std::string::npos
                     ? PairwiseKernel::gaussian
                     : PairwiseKernel::product;
      p.h = 0.5f;
      std::vector<double> expected(101), magnitude(101);
      detail::pairwise_reference(a.data(), b.data(), p, expected.data());
      detail::pairwise_magnitude(a.data(), b.data(), p, magnitude.data());
      std::vector<float> got(c.as<float>(), c.as<float>() + 101);
      EXPECT_LE(detail::pairwise_max_relative_error(got, expected, magnitude), kTolerance) << args;
    }
  }
}

TEST_F(PairwiseCli, EmptyBGivesZeros) {
  std::vector<float> a = {0.5f, -1.0f, 2.0f};
  std::string pa = save("a3.npy", DType::float32, {3}, a.data());
  std::string pe = save("empty.npy", DType::float32, {0}, nullptr);
  std::string pc = temp_path("c3.npy");
  CliResult r = run_cli("pairwise --kernel gaussian --backend cpu " + pa + " " + pe + " -o " + pc);
  ASSERT_EQ(r.status, 0) << r.err;
  HostArray c = read_npy(pc);
  ASSERT_EQ(c.size(), 3);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(c.as<float>()[i], 0.0f);
}

TEST_F(PairwiseCli, BadInputIsExitStatusTwo) {
  std::vector<float> a = {0.5f, -1.0f, 2.0f};
  std::vector<std::int32_t> ints = {1, 2, 3};
  std::string pa = save("ok.npy", DType::float32, {3}, a.data());
  std::string pi = save("ints.npy", DType::int32, {3}, ints.data());
  std::string pm = save("matrix.npy", DType::float32, {3, 1}, a.data());
  std::string pe = save("empty_a.npy", DType::float32, {0}, nullptr);
  std::string pc = temp_path("bad_c.npy");
  std::string io = " -o " + pc;
  const std::pair<std::string, std::string> cases[] = {
      {"--kernel product " + pi + " " + pa + io, "int32 A"},
      {"--kernel product " + pa + " " + pi + io, "int32 B"},
      {"--kernel product " + pm + " " + pa + io, "2-D A"},
      {"--kernel product " + pe + " " + pa + io, "empty A"},
      {"--kernel gaussian --h 0 " + pa + " " + pa + io, "h = 0"},
      {"--kernel gaussian --h -2 " + pa + " " + pa + io, "h < 0"},
      {"--kernel gaussian --h 1e-100 " + pa + " " + pa + io, "h too small for float32"},
      {"--kernel product --backend cpu --device -1 " + pa + " " + pa + io, "a negative device"},
      {"--kernel cosine " + pa + " " + pa + io, "an unknown kernel"},
      {pa + " " + pa + io, "no kernel"},
      {"--kernel product --expr 'a*b' " + pa + " " + pa + io, "--kernel and --expr"},
      {"--expr 'a*b' --backend cpu " + pa + " " + pa + io, "an expression on the CPU"},
      {"--kernel product " + temp_path("missing.npy") + " " + pa + io, "a missing file"},
      {"--kernel product --variant nope --backend cpu " + pa + " " + pa + io, "unknown variant"},
  };
  for (const auto& [args, what] : cases)
    expect_one_line_error(run_cli("pairwise " + args), what);
  for (const auto& d : devices()) {
    if (!is_gpu(d)) continue;
    CliResult r = run_cli("pairwise --expr 'a +* b' --backend " +
                          std::string(backend_name(d.backend())) + " " + pa + " " + pa + io);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("parpat: error: "), std::string::npos) << r.err;
  }
}

TEST_F(PairwiseCli, DumpBinaryWritesTheProgram) {
  std::vector<float> a = {0.5f, -1.0f, 2.0f};
  std::string pa = save("dump_a.npy", DType::float32, {3}, a.data());
  bool any = false;
  for (const auto& d : devices()) {
    if (!is_gpu(d)) continue;
    if (auto why = compiler_missing(d); !why.empty()) {
      std::cerr << "[parpat] " << d.label() << ": " << why << "\n";
      continue;
    }
    any = true;
    std::string out = temp_path(std::string("program_") + backend_name(d.backend()) + ".bin");
    CliResult r =
        run_cli("pairwise --expr 'a*b + 1.0f' --backend " + std::string(backend_name(d.backend())) +
                " --dump-binary " + out + " " + pa + " " + pa + " -o " + temp_path("dump_c.npy"));
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream in(out, std::ios::binary | std::ios::ate);
    EXPECT_GT(static_cast<long>(in.tellg()), 0) << "empty program dump for " << d.label();
    expect_one_line_error(
        run_cli("pairwise --expr 'a*b + 1.0f' --backend " + std::string(backend_name(d.backend())) +
                " --dump-binary " + temp_path("no/such/dir/program.bin") + " " + pa + " " + pa +
                " -o " + temp_path("dump_c.npy")),
        "an unwritable dump");
  }
  if (!any) GTEST_SKIP() << "no GPU backend device here";
}

}  // namespace
}  // namespace parpat::test
