// The distributed command line: `mpirun -n 2 parpat ...` (when mpirun and the MPI engine are
// built; the cases skip by name otherwise; GPU ranks of GPUs of their own over NCCL) and `parpat
// ... --devices`, against the same command on one rank: integer sums, arg indices and histograms
// identical, float sums, weighted histograms and pairwise within the contract; rank 0 alone prints;
// a failure on one rank (a missing file, another op) is one line and exit status 2 on every rank.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>

#include "parpat/communicator.hpp"
#include "parpat/error.hpp"
#include "parpat/io.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

bool mpi_available() {
  static const bool ok = [] {
    std::string plugin = cli_path();
    plugin = plugin.substr(0, plugin.rfind('/')) + "/libparpat_mpi.so";
    return std::system("mpirun --version >/dev/null 2>&1") == 0 &&
           access(plugin.c_str(), R_OK) == 0;
  }();
  return ok;
}

// mpirun with `ranks` processes of `args` (root and more ranks than cores allowed, as in CI).
std::string mpirun(int ranks, const std::string& args) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
         "OMPI_MCA_rmaps_base_oversubscribe=1 "
         "PARPAT_COLLECTIVE_TIMEOUT_S=60 mpirun -n " +
         std::to_string(ranks) + " " + cli_path() + " " + args;
}

// The engine `ranks` MPI ranks on `backend` report: NCCL when each rank has a GPU of its own
// (the ranks of this host take its GPUs in turn) and NCCL loads, MPI otherwise.
std::string mpi_engine(const std::string& backend, int ranks) {
  const std::vector<Device> gpus = cuda_devices();
  if (backend != "cuda" || static_cast<int>(gpus.size()) < ranks) return "mpi";
  try {
    nccl_communicators({gpus[0]});
    return "nccl";
  } catch (const Error&) {
    return "mpi";
  }
}

// parpat's error lines in `err` (mpirun adds a paragraph of its own about the exit status).
int errors_in(const std::string& err) {
  int n = 0;
  for (std::size_t at = err.find("parpat: error: "); at != std::string::npos;
       at = err.find("parpat: error: ", at + 1))
    ++n;
  return n;
}

class CliRanks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::mt19937_64 rng(run_seed());
    std::normal_distribution<double> normal(0, 1);
    std::vector<float> f(300007);
    for (auto& x : f)
      x = static_cast<float>(normal(rng));
    std::vector<std::int32_t> i(1001 * 37);
    for (auto& x : i)
      x = static_cast<std::int32_t>(rng() % 2001) - 1000;
    std::uniform_real_distribution<double> uniform(-1, 2);
    std::vector<double> w(f.size());
    for (auto& x : w)
      x = uniform(rng);
    floats_ = temp_path("ranks_f32.npy");
    ints_ = temp_path("ranks_i32.npy");
    weights_ = temp_path("ranks_w64.npy");
    write_npy(floats_, DType::float32, {static_cast<std::int64_t>(f.size())}, f.data());
    write_npy(weights_, DType::float64, {static_cast<std::int64_t>(w.size())}, w.data());
    write_npy(ints_, DType::int32, {1001, 37}, i.data());
  }

  static nlohmann::json json_of(const CliResult& r) {
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    try {
      return nlohmann::json::parse(r.out);  // one object: rank 0 alone printed
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what() << " in: " << r.out;
    }
    return {};
  }

  // The same command alone and over ranks (`run` makes the command line of `args`).
  void expect_same_answers(const std::function<std::string(const std::string&)>& run,
                           const std::string& backend, int ranks, const std::string& engine) {
    for (const std::string& args :
         {"reduce --op sum --axis cols " + ints_, "reduce --op argmax " + floats_,
          "reduce --op min --axis rows " + ints_, "histogram --bins 50 " + floats_,
          "histogram --bins 7 --range -2 2 " + floats_}) {
      SCOPED_TRACE(args + " on " + backend);
      const std::string full = args + " --backend " + backend + " --json";
      nlohmann::json alone = json_of(run_cli(full));
      nlohmann::json spread = json_of(run_command(run(full)));
      if (HasFailure()) return;
      EXPECT_EQ(spread["ranks"], ranks);
      EXPECT_EQ(spread["engine"], engine);
      for (const char* key : {"result", "index", "counts", "underflow", "overflow", "range"})
        EXPECT_EQ(spread.contains(key) ? spread[key] : nullptr,
                  alone.contains(key) ? alone[key] : nullptr)
            << key;
    }
    // A float sum: within the contract (the ranks' partials add in float64).
    nlohmann::json a =
        json_of(run_cli("reduce --op sum --json --backend " + backend + " " + floats_));
    nlohmann::json b =
        json_of(run_command(run("reduce --op sum --json --backend " + backend + " " + floats_)));
    EXPECT_NEAR(a["result"].get<double>(), b["result"].get<double>(), 1e-6 * 300007 * 0.8);
    // A weighted histogram: each bin's float64 sum within the reordered additions' rounding.
    const std::string weighted = "histogram --bins 20 --range -3 3 --json --backend " + backend +
                                 " --weights " + weights_ + " " + floats_;
    nlohmann::json wa = json_of(run_cli(weighted));
    nlohmann::json wb = json_of(run_command(run(weighted)));
    if (HasFailure()) return;
    EXPECT_EQ(wb["weighted"], true);
    ASSERT_EQ(wb["sums"].size(), wa["sums"].size());
    for (std::size_t i = 0; i < wa["sums"].size(); ++i)
      EXPECT_NEAR(wa["sums"][i].get<double>(), wb["sums"][i].get<double>(), 1e-12 * 2 * 300007)
          << "bin " << i;
  }

  static std::string floats_, ints_, weights_;
};
std::string CliRanks::floats_, CliRanks::ints_, CliRanks::weights_;

TEST_F(CliRanks, MpirunGivesTheAnswerOfOneRank) {
  if (!mpi_available()) GTEST_SKIP() << "mpirun or libparpat_mpi.so missing";
  std::vector<std::string> backends = {"cpu", "opencl"};
  if (!cuda_devices().empty()) backends.push_back("cuda");
  for (const std::string& backend : backends)
    for (int ranks : {2, 3})
      expect_same_answers([ranks](const std::string& a) { return mpirun(ranks, a); }, backend,
                          ranks, mpi_engine(backend, ranks));
}

TEST_F(CliRanks, DevicesGiveTheAnswerOfOneRank) {
  expect_same_answers(
      [](const std::string& a) { return cli_path() + " " + a + " --devices cpu,cpu,cpu"; }, "cpu",
      3, "threads");
  expect_same_answers(
      [](const std::string& a) { return cli_path() + " " + a + " --devices opencl:0,cpu"; }, "cpu",
      2, "threads");
}

// Pairwise split along X (X ≥ Y) and along Y: rank 0 writes the C of one rank, within the
// pattern's tolerance.
TEST_F(CliRanks, PairwiseOverRanksWritesTheAnswerOfOneRank) {
  std::mt19937_64 rng(run_seed() + 1);
  std::uniform_real_distribution<double> u(-1, 1);
  auto vector_file = [&](const std::string& name, std::int64_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v)
      x = static_cast<float>(u(rng));
    const std::string path = temp_path(name);
    write_npy(path, DType::float32, {n}, v.data());
    return path;
  };
  const std::string b = vector_file("ranks_b.npy", 1000);
  std::vector<std::pair<std::string, std::string>> runs = {
      {"--devices cpu,cpu", "threads"}, {"--devices opencl:0,cpu,cpu", "threads"}};
  if (mpi_available()) runs.push_back({"mpi", "mpi"});
  for (auto [a, split] : {std::pair{vector_file("ranks_a_long.npy", 3001), "x"},
                          std::pair{vector_file("ranks_a_short.npy", 100), "y"}})
    for (const auto& [how, engine] : runs) {
      SCOPED_TRACE("split " + std::string(split) + ", " + how);
      const std::string alone_c = temp_path("ranks_c_alone.npy"),
                        spread_c = temp_path("ranks_c_spread.npy");
      const std::string args =
          "pairwise --kernel gaussian --h 0.5 --backend cpu --json " + a + " " + b + " -o ";
      json_of(run_cli(args + alone_c));
      const std::string spread = args + spread_c;
      nlohmann::json j = json_of(
          run_command(how == "mpi" ? mpirun(2, spread) : cli_path() + " " + spread + " " + how));
      if (HasFailure()) return;
      EXPECT_EQ(j["engine"], engine);
      EXPECT_EQ(j["split"], split);
      HostArray want = read_npy(alone_c), got = read_npy(spread_c);
      ASSERT_EQ(got.shape, want.shape);
      const auto* w = reinterpret_cast<const float*>(want.data.data());
      const auto* g = reinterpret_cast<const float*>(got.data.data());
      for (std::int64_t k = 0; k < want.size(); ++k)
        ASSERT_NEAR(g[k], w[k], 1e-4 * std::abs(w[k])) << "C[" << k << "]";
    }
}

TEST_F(CliRanks, AFailureOnOneRankIsOneLineAndStatus2OnEveryRank) {
  if (!mpi_available()) GTEST_SKIP() << "mpirun or libparpat_mpi.so missing";
  const std::string missing = temp_path("no_such_file.npy");
  // Two programs in one job (MPMD): rank 1 names a missing file, or another op.
  CliResult r = run_command(mpirun(1, "reduce --op sum --backend cpu " + floats_) + " : -n 1 " +
                            cli_path() + " reduce --op sum --backend cpu " + missing);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("parpat: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  EXPECT_EQ(errors_in(r.err), 1) << r.err;
  r = run_command(mpirun(1, "reduce --op sum --backend cpu " + floats_) + " : -n 1 " + cli_path() +
                  " reduce --op max --backend cpu " + floats_);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("rank 1 was given another call than rank 0"), std::string::npos) << r.err;
  EXPECT_EQ(errors_in(r.err), 1) << r.err;
}

TEST_F(CliRanks, BadDevicesAreOneLineAndStatus2) {
  for (const char* devices : {"cpu:7", "gpu:0", "cpu:x", ",", "cuda:0,cpu:3"}) {
    CliResult r = run_cli(std::string("reduce --op sum --devices ") + devices + " " + floats_);
    EXPECT_EQ(r.status, 2) << devices;
    EXPECT_EQ(r.out, "") << devices;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << devices << ": " << r.err;
  }
}

}  // namespace
}  // namespace parpat::test
