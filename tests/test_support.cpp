#include "test_support.hpp"

#include "parpat/registry.hpp"

#include <unistd.h>

#include <sys/wait.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace parpat::test {

const std::vector<Device>& devices() {
  static const std::vector<Device> all = [] {
    std::vector<Device> out;
    for (Backend b : {Backend::cpu, Backend::opencl, Backend::cuda}) {
      if (!backend_built(b)) {
        std::cerr << "[parpat] backend " << backend_name(b)
                  << " is not built: its cases are skipped\n";
        continue;
      }
      auto infos = list_devices();
      int count = 0;
      for (auto& info : infos) {
        if (info.backend != b) continue;
        out.push_back(Device::open(b, info.index));
        ++count;
      }
      if (count == 0)
        std::cerr << "[parpat] backend " << backend_name(b)
                  << " has no device here: its cases are skipped\n";
    }
    return out;
  }();
  return all;
}

std::vector<Device> cuda_devices() {
  std::vector<Device> out;
  for (const Device& d : devices())
    if (d.backend() == Backend::cuda) out.push_back(d);
  return out;
}

std::string device_name(const Device& d) {
  return std::string(backend_name(d.backend())) + "_" + std::to_string(d.info().index);
}

std::vector<Target> variant_targets(const std::string& pattern) {
  std::vector<Target> out;
  for (const auto& d : devices())
    for (const auto& v : list_variants(pattern))
      if (v.backend == backend_name(d.backend())) out.push_back({d, v.name});
  return out;
}

std::string target_name(const ::testing::TestParamInfo<Target>& info) {
  std::string name = device_name(info.param.device) + "_" + info.param.variant;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

std::vector<TunedDevice> tuned_devices(bool (*keep)(const Device&),
                                       const std::vector<std::string>& settings) {
  std::vector<TunedDevice> out;
  for (const auto& d : devices())
    if (keep(d))
      for (std::size_t i = 0; i < settings.size(); ++i)
        out.push_back({d, settings[i], i});
  return out;
}

void PrintTo(const TunedDevice& target, std::ostream* os) {
  *os << '"' << target.setting << '"';
}

std::string tuned_device_name(const ::testing::TestParamInfo<TunedDevice>& info) {
  std::string name =
      device_name(info.param.device) + "_setting_" + std::to_string(info.param.index);
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

std::uint64_t run_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* env = std::getenv("PARPAT_SEED")) return std::strtoull(env, nullptr, 10);
    std::random_device rd;
    std::uint64_t s = (std::uint64_t{rd()} << 32) | rd();
    std::cerr << "[parpat] random seed " << s << " (set PARPAT_SEED to repeat)\n";
    return s;
  }();
  return seed;
}

std::vector<double> sum_magnitudes(DType t, const std::vector<unsigned char>& host,
                                   std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                                   Axis axis) {
  const std::int64_t outputs = axis == Axis::all ? 1 : axis == Axis::rows ? rows : cols;
  std::vector<double> magnitude(static_cast<std::size_t>(outputs));
  if (!is_float(t)) return magnitude;
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    const T* p = reinterpret_cast<const T*>(host.data());
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const double x = static_cast<double>(p[i * row_stride + j]);
        const std::int64_t o = axis == Axis::all ? 0 : axis == Axis::rows ? i : j;
        if (!std::isnan(x)) magnitude[static_cast<std::size_t>(o)] += std::fabs(x);
      }
  });
  return magnitude;
}

std::string temp_path(const std::string& name) {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/parpat-test-XXXXXX";
    const char* d = mkdtemp(tmpl);
    return std::string(d ? d : "/tmp");
  }();
  return dir + "/" + name;
}

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

// The parpat binary: $PARPAT_CLI, else beside the build's tests/ folder, else where it was built.
std::string cli_path() {
  if (const char* env = std::getenv("PARPAT_CLI")) return env;
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    std::string dir(exe, static_cast<std::size_t>(len));
    std::string candidate = dir.substr(0, dir.rfind('/')) + "/../parpat";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return PARPAT_CLI;
}

CliResult run_cli(const std::string& args) {
  return run_command(cli_path() + " " + args);
}

void expect_rejected(const CliResult& r, const std::string& fragment) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("parpat: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << "stderr: " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

void expect_rejected(const std::string& args, const std::string& fragment) {
  SCOPED_TRACE(args);
  expect_rejected(run_cli(args), fragment);
}

std::vector<std::string> cli_backends() {
  std::vector<std::string> out = {"cpu"};
  for (const auto& d : devices())
    if (d.backend() == Backend::opencl) {
      out.push_back("opencl");
      break;
    }
  return out;
}

CliResult run_command(const std::string& command) {
  static int counter = 0;
  std::string out = temp_path("cli" + std::to_string(counter) + ".out");
  std::string err = temp_path("cli" + std::to_string(counter++) + ".err");
  std::string cmd = command + " >" + out + " 2>" + err;
  int raw = std::system(cmd.c_str());
  CliResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

namespace {
// The first python that has numpy: the one on PATH, else the system's (Debian's python3-numpy).
const std::string& python_command() {
  static const std::string cmd = []() -> std::string {
    for (const char* candidate : {"python3", "/usr/bin/python3"}) {
      std::string probe = std::string(candidate) + " -c 'import numpy' >/dev/null 2>&1";
      if (std::system(probe.c_str()) == 0) return candidate;
    }
    return {};
  }();
  return cmd;
}
}  // namespace

bool python_numpy_available() {
  return !python_command().empty();
}

std::string run_python(const std::string& code) {
  std::string script = temp_path("snippet.py");
  std::ofstream(script) << code;
  std::string cmd = python_command() + " " + script;
  std::string output;
  if (FILE* pipe = popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf;
    while (fgets(buf.data(), buf.size(), pipe))
      output += buf.data();
    pclose(pipe);
  }
  while (!output.empty() && (output.back() == '\n' || output.back() == ' '))
    output.pop_back();
  return output;
}

ScopedTuning::ScopedTuning(const std::string& value) {
  const char* old = std::getenv("PARPAT_TUNING");
  had_ = old != nullptr;
  if (had_) old_ = old;
  setenv("PARPAT_TUNING", value.c_str(), 1);
}

ScopedTuning::~ScopedTuning() {
  if (had_)
    setenv("PARPAT_TUNING", old_.c_str(), 1);
  else
    unsetenv("PARPAT_TUNING");
}

}  // namespace parpat::test
