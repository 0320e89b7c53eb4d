// Shared by every test source: the devices to run on, reproducible random seeds, and running
// the parpat CLI.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "parpat/device.hpp"
#include "parpat/io.hpp"
#include "parpat/reduce.hpp"

namespace parpat::test {

// Every device of every backend built into this binary, opened. Backends that are not built
// or have no device are reported once on stderr, by name, so a skip is never silent.
// Every op of parpat::reduce, in the order of ReduceOp.
inline constexpr ReduceOp kAllReduceOps[] = {
    ReduceOp::sum,    ReduceOp::prod,      ReduceOp::min,           ReduceOp::max,
    ReduceOp::argmin, ReduceOp::argmax,    ReduceOp::mean,          ReduceOp::var,
    ReduceOp::std,    ReduceOp::nansum,    ReduceOp::nanprod,       ReduceOp::nanmin,
    ReduceOp::nanmax, ReduceOp::nanargmin, ReduceOp::nanargmax,     ReduceOp::nanmean,
    ReduceOp::nanvar, ReduceOp::nanstd,    ReduceOp::count_nonzero, ReduceOp::any,
    ReduceOp::all};

const std::vector<Device>& devices();
std::vector<Device> cuda_devices();        // the CUDA ones among them
std::string device_name(const Device& d);  // "cuda_0" for test names

// One (device, variant) pair of a pattern: what the parameterised tests run on.
struct Target {
  Device device;
  std::string variant;
};
// Every variant of `pattern` on every device of its backend, from the registry, so no variant
// escapes the tests.
std::vector<Target> variant_targets(const std::string& pattern);
// "cuda_0_fast": a test-name suffix for a target.
std::string target_name(const ::testing::TestParamInfo<Target>& info);

// A device under one PARPAT_TUNING setting. Tests that sweep many settings take one case per
// device and setting, so gtest's sharding can spread them over processes (each NVIDIA OpenCL
// setting compiles its own kernels, seconds of host time).
struct TunedDevice {
  Device device;
  std::string setting;
  std::size_t index;  // the setting's place in its list, for the test name
};
// Every device that `keep` accepts, under each setting.
std::vector<TunedDevice> tuned_devices(bool (*keep)(const Device&),
                                       const std::vector<std::string>& settings);
// The setting, where gtest prints a case's parameter.
void PrintTo(const TunedDevice& target, std::ostream* os);
// "opencl_1_setting_3": a test-name suffix for a tuned device.
std::string tuned_device_name(const ::testing::TestParamInfo<TunedDevice>& info);

// A fresh random seed per test run (PARPAT_SEED overrides); print it in failure messages.
std::uint64_t run_seed();

// Σ|x| over the values each output of a reduce folds (rows × cols of dtype t, rows row_stride
// elements apart; NaN skipped): the scale of the float-sum tolerance on mixed-sign data
// (reduce_mismatch's `magnitude`). Zeros for integer dtypes.
std::vector<double> sum_magnitudes(DType t, const std::vector<unsigned char>& host,
                                   std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                                   Axis axis);

struct CliResult {
  int status = -1;
  std::string out, err;
};
// Runs the parpat binary with `args` (shell-quoted by the caller where needed).
CliResult run_cli(const std::string& args);
// A command the CLI refuses: exit status 2, one "parpat: error: " line on stderr that names
// `fragment`, nothing on stdout.
void expect_rejected(const CliResult& r, const std::string& fragment);
// run_cli(args), refused so.
void expect_rejected(const std::string& args, const std::string& fragment);
// The --backend values a CLI test runs: cpu, and opencl where an OpenCL device (PoCL here) is
// present.
std::vector<std::string> cli_backends();
// Runs a shell command line (`cli_path()` names the parpat binary in it).
CliResult run_command(const std::string& command);
std::string cli_path();
// A fresh path in a per-process temporary directory.
std::string temp_path(const std::string& name);
bool python_numpy_available();
// Runs `python3 -c code` and returns its stdout (trimmed).
std::string run_python(const std::string& code);

// Sets PARPAT_TUNING for its lifetime and then puts back what was there (or its absence).
class ScopedTuning {
 public:
  explicit ScopedTuning(const std::string& value);
  ~ScopedTuning();
  ScopedTuning(const ScopedTuning&) = delete;
  ScopedTuning& operator=(const ScopedTuning&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

}  // namespace parpat::test
