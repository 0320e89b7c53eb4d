// Grid barrier: every backend × method present (DESIGN.md §2, §6). On devices whose groups run
// independently (GPUs): the stencil gives 3^steps in every element for group sizes 1024, 64 and
// 32, the stress test sees no early release, and a grid above the safe bound is refused. On
// PoCL and the CPU: spin methods are refused up front and `relaunch` gives the right answer.
// Step and round counts are drawn from the run's seed.
//
// A CUDA kernel that faults leaves a sticky error: every later CUDA call of the process fails.
// The first backend error on a device is therefore recorded, and every later test on that
// device is skipped naming the method that broke it, so the failure is reported once, against
// the method that caused it. With PARPAT_SANITIZE_RUN=1 (compute-sanitizer runs, which slow
// every access down by orders of magnitude) the GPU step, round and barrier counts shrink to a
// few dozen so that each tool finishes within about a minute:
//   PARPAT_SANITIZE_RUN=1 compute-sanitizer --tool memcheck build/tests/test_barrier
//     --gtest_filter='*cuda_0_*'
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <map>
#include <random>
#include <utility>

#include "barrier/barrier_internal.hpp"
#include "parpat/barrier.hpp"
#include "parpat/error.hpp"
#include "parpat/registry.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

struct Target {
  Device device;
  std::string method;
};

// The cluster method (`hierarchical`, CUDA's distributed shared memory and hardware cluster
// barrier) is instantiated separately, after all the others, so that a fault of it cannot take
// the other methods' results down with it.
bool uses_clusters(const std::string& method) {
  return method == "hierarchical";
}

std::vector<Target> targets(bool clustered) {
  std::vector<Target> out;
  for (const auto& d : devices())
    for (const auto& v : list_variants("barrier"))
      if (v.backend == backend_name(d.backend()) && uses_clusters(v.name) == clustered)
        out.push_back({d, v.name});
  return out;
}

std::string target_name(const ::testing::TestParamInfo<Target>& info) {
  std::string name = device_name(info.param.device) + "_" + info.param.method;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// Whether the method may run on the device; spin methods need independent groups.
bool runs_here(const Target& t) {
  return t.method == "relaunch" || t.device.info().independent_groups;
}

std::int64_t draw(std::int64_t lo, std::int64_t hi, std::uint64_t salt) {
  std::mt19937_64 rng(run_seed() ^ salt);
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

bool sanitize_run() {
  const char* v = std::getenv("PARPAT_SANITIZE_RUN");
  return v != nullptr && std::string(v) == "1";
}

// Device label -> the first backend failure seen on it.
std::map<std::string, std::string>& broken_devices() {
  static std::map<std::string, std::string> broken;
  return broken;
}

class BarrierTest : public ::testing::TestWithParam<Target> {
 protected:
  void SetUp() override {
    const auto& t = GetParam();
    auto it = broken_devices().find(t.device.label());
    if (it != broken_devices().end())
      GTEST_SKIP() << t.method << " not run: " << t.device.label()
                   << " is unusable after an earlier failure: " << it->second;
  }

  // Runs `body`; a backend error fails this test and marks the device broken for later tests.
  template <class F>
  void guarded(F&& body) {
    const auto& t = GetParam();
    try {
      body();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::backend) throw;
      broken_devices().emplace(t.device.label(), e.what());
      FAIL() << t.method << " on " << t.device.label() << ": " << e.what();
    }
  }
};

TEST_P(BarrierTest, StencilGivesThreeToTheSteps) {
  guarded([&] {
    const auto& t = GetParam();
    bool gpu = t.device.backend() != Backend::cpu && t.device.info().independent_groups;
    for (int group : {1024, 64, 32}) {
      if (t.device.backend() != Backend::cpu && group > t.device.info().max_group_size) continue;
      StencilOptions o;
      o.method = t.method;
      o.group_size = group;
      o.steps = !gpu             ? draw(20, 120, group)
                : sanitize_run() ? draw(10, 40, group)
                                 : draw(5000, 20000, group);
      if (!runs_here(t)) {
        try {
          barrier_stencil(t.device, o);
          ADD_FAILURE() << t.method << " ran on " << t.device.label()
                        << ", whose groups do not progress independently";
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::unsupported);
          EXPECT_NE(std::string(e.what()).find("relaunch"), std::string::npos) << e.what();
        }
        continue;
      }
      StencilResult r = barrier_stencil(t.device, o);
      EXPECT_FALSE(r.barrier_failed) << "group " << group << " seed " << run_seed();
      EXPECT_TRUE(r.all_equal) << "group " << group << " seed " << run_seed();
      EXPECT_EQ(r.value, detail::stencil_expected(o.steps))
          << "group " << group << ", " << o.steps << " steps, seed " << run_seed();
      EXPECT_TRUE(r.correct);
      EXPECT_EQ(r.groups, 2048 / group);
    }
  });
}

TEST_P(BarrierTest, StressTestSeesNoEarlyRelease) {
  guarded([&] {
    const auto& t = GetParam();
    bool gpu = t.device.backend() != Backend::cpu && t.device.info().independent_groups;
    StressOptions o;
    o.method = t.method;
    o.rounds = !gpu ? draw(50, 150, 7) : sanitize_run() ? 50 : 20000;
    if (!runs_here(t)) {
      EXPECT_THROW(barrier_stress(t.device, o), Error);
      return;
    }
    StressResult r = barrier_stress(t.device, o);
    EXPECT_EQ(r.early_releases, 0u) << r.groups << " groups of " << r.group_size << ", " << r.rounds
                                    << " rounds, seed " << run_seed();
    EXPECT_FALSE(r.barrier_failed);
    EXPECT_GE(r.groups, 1);
  });
}

TEST_P(BarrierTest, RefusesAGridAboveTheSafeBound) {
  guarded([&] {
    const auto& t = GetParam();
    if (t.method == "relaunch") {
      EXPECT_GE(barrier_max_groups(t.device, t.method, 64), 1 << 20);
      return;
    }
    if (!runs_here(t)) {
      EXPECT_THROW(barrier_max_groups(t.device, t.method, 64), Error);
      return;
    }
    int largest = barrier_max_groups(t.device, t.method, 64);
    ASSERT_GE(largest, 1);
    StencilOptions o;
    o.method = t.method;
    o.group_size = 64;
    o.work_items = (largest + 1) * 64;
    o.steps = 1;
    try {
      barrier_stencil(t.device, o);
      ADD_FAILURE() << "a grid of " << largest + 1 << " groups was launched";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("largest safe grid is " + std::to_string(largest)),
                std::string::npos)
          << e.what();
    }
  });
}

// A launch that passes many barriers takes longer than the same launch with none, and the
// difference per barrier is a plausible barrier time (below 10 ms; 1 s under a sanitizer).
TEST_P(BarrierTest, LatencyGrowsWithTheBarriers) {
  guarded([&] {
    const auto& t = GetParam();
    if (!runs_here(t)) GTEST_SKIP() << t.method << " is refused on " << t.device.label();
    int units = std::max(1, t.device.info().compute_units);
    int groups = std::min(units, barrier_max_groups(t.device, t.method, 128));
    const int barriers = sanitize_run() ? 20 : 400;
    LatencyResult r =
        barrier_latency(t.device, t.method, groups, 128, barriers, sanitize_run() ? 1 : 3);
    EXPECT_FALSE(r.barrier_failed);
    EXPECT_GE(r.empty_ms, 0.0);  // relaunch launches nothing for no barriers
    EXPECT_GT(r.barriers_ms, r.empty_ms) << barriers << " barriers took no longer than none";
    EXPECT_GT(r.us_per_barrier, 0.0);
    EXPECT_LT(r.us_per_barrier, sanitize_run() ? 1e6 : 1e4);  // a sanitizer serialises threads
  });
}

INSTANTIATE_TEST_SUITE_P(AllMethods, BarrierTest, ::testing::ValuesIn(targets(false)), target_name);
INSTANTIATE_TEST_SUITE_P(ClusterMethods, BarrierTest, ::testing::ValuesIn(targets(true)),
                         target_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BarrierTest);

// Every alternative that PARPAT_TUNING can select for `flip` and `hierarchical` on CUDA (they are
// swept for speed on the GPU, so each must be right): the stencil at 1024- and 32-item groups
// and a stress test, under each setting in turn.
TEST(BarrierTuning, EveryCudaKnobSettingIsCorrect) {
  const std::vector<std::pair<std::string, std::string>> settings = {
      {"flip", "barrier.flip.red_arrivals_max=0"},
      {"flip", "barrier.flip.red_arrivals_max=1000000"},
      {"flip", "barrier.flip.warp_arrivals_block_max=0"},
      {"flip", "barrier.flip.warp_arrivals_block_max=1024,barrier.flip.red_arrivals_max=0"},
      {"flip", "barrier.flip.one_level_max=1"},
      {"flip",
       "barrier.flip.one_level_max=1,barrier.flip.red_arrivals_max=0,barrier.flip.subword_blocks="
       "3"},
      {"flip", "barrier.flip.one_level_max=1,barrier.flip.warp_arrivals_block_max=1024"},
      {"flip",
       "barrier.flip.poll_sleep_ns=100,barrier.flip.poll_sleep_from=0,barrier.flip.poll_check_"
       "every=4"},
      {"flip", "barrier.flip.release_lines_from=0,barrier.flip.release_lines=1"},
      {"flip",
       "barrier.flip.release_lines_from=0,barrier.flip.release_lines=5,barrier.flip.warp_arrivals_"
       "block_max=1024"},
      {"flip", "barrier.flip.release_lines_from=0,barrier.flip.one_level_max=1"},
      {"flip",
       "barrier.flip.release_lines_from=0,barrier.flip.release_lines=3,barrier.flip.warp_"
       "arrivals_block_max=0"},
      {"flip", "barrier.flip.release_lines_from=1000000"},
      {"flip", "barrier.flip.poll_delay_from=0,barrier.flip.poll_delay_cycles=300"},
      {"flip",
       "barrier.flip.poll_delay_from=0,barrier.flip.warp_arrivals_block_max=1024,barrier.flip.one_"
       "level_max=1"},
      {"flip", "barrier.flip.table_from=0,barrier.flip.table_max=1000000"},
      {"flip",
       "barrier.flip.table_from=0,barrier.flip.table_max=1000000,barrier.flip.table_rows_from=0,"
       "barrier.flip.arrivals_per_row=1,barrier.flip.table_rows_max=16,barrier.flip.arrivals_"
       "per_column=1,barrier.flip.table_columns_max=16,barrier.flip.table_stride_lines=1,"
       "barrier.flip.table_poll_delay=0"},
      {"flip",
       "barrier.flip.table_from=0,barrier.flip.table_max=1000000,barrier.flip.warp_arrivals_"
       "block_max=1024,barrier.flip.table_rows_from=0,barrier.flip.arrivals_per_row=5,"
       "barrier.flip.table_columns=3"},
      {"flip",
       "barrier.flip.table_from=0,barrier.flip.table_max=1000000,barrier.flip.warp_arrivals_"
       "block_max=0,barrier.flip.table_rows_from=0,barrier.flip.arrivals_per_row=3,barrier.flip."
       "table_columns=5,"
       "barrier.flip.table_stride_lines=7"},
      {"flip",
       "barrier.flip.table_from=0,barrier.flip.table_max=1000000,barrier.flip.table_rows_from="
       "1000000,barrier.flip.table_columns=1,barrier.flip.table_columns_max=1"},
      {"hierarchical", "barrier.flip.red_arrivals_max=0"},
      {"hierarchical", "barrier.flip.red_arrivals_max=1000000"},
      {"hierarchical", "barrier.hierarchical.cluster=2"},
      {"hierarchical", "barrier.hierarchical.cluster=16"},
      {"hierarchical", "barrier.flip.poll_delay_from=0"},
  };
  bool any = false;
  for (const auto& d : devices()) {
    if (d.backend() != Backend::cuda) continue;
    if (broken_devices().count(d.label())) continue;
    any = true;
    for (const auto& [method, tuning] : settings) {
      ScopedTuning scoped(tuning);
      SCOPED_TRACE(method + " with PARPAT_TUNING=" + tuning + ", seed " +
                   std::to_string(run_seed()));
      try {
        for (int group : {1024, 32}) {
          StencilOptions o;
          o.method = method;
          o.group_size = group;
          o.steps = sanitize_run() ? 20 : draw(1000, 3000, group);
          StencilResult r = barrier_stencil(d, o);
          EXPECT_TRUE(r.correct) << "group " << group << ", " << o.steps << " steps";
        }
        StressOptions so;
        so.method = method;
        so.rounds = sanitize_run() ? 20 : 3000;
        StressResult r = barrier_stress(d, so);
        EXPECT_EQ(r.early_releases, 0u) << r.groups << " groups";
        EXPECT_FALSE(r.barrier_failed);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::unsupported) continue;  // e.g. no clusters on this GPU
        if (e.kind() == ErrorKind::backend) broken_devices().emplace(d.label(), e.what());
        FAIL() << e.what();
      }
    }
  }
  if (!any) GTEST_SKIP() << "no CUDA device: the tuned CUDA barrier paths need a GPU";
}

// `hierarchical` on a grid that is one thread-block cluster meets in the cluster's hardware
// barrier alone: the stress test on such grids (2, 4 and 8 blocks).
TEST(BarrierCluster, OneClusterGridSeesNoEarlyRelease) {
  bool any = false;
  for (const auto& d : devices()) {
    if (d.backend() != Backend::cuda) continue;
    if (broken_devices().count(d.label())) continue;
    for (auto [groups, size] : {std::pair{2, 1024}, std::pair{4, 256}, std::pair{8, 128}}) {
      StressOptions o;
      o.method = "hierarchical";
      o.groups = groups;
      o.group_size = size;
      o.rounds = sanitize_run() ? 20 : 20000;
      try {
        StressResult r = barrier_stress(d, o);
        any = true;
        EXPECT_EQ(r.groups, groups);
        EXPECT_EQ(r.early_releases, 0u) << groups << " groups of " << size;
        EXPECT_FALSE(r.barrier_failed);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::unsupported) break;  // no clusters on this GPU
        if (e.kind() == ErrorKind::backend) broken_devices().emplace(d.label(), e.what());
        FAIL() << e.what();
      }
    }
  }
  if (!any) GTEST_SKIP() << "no CUDA device with thread-block clusters";
}

TEST(BarrierDispatch, RejectsBadRequests) {
  for (const auto& d : devices()) {
    StencilOptions o;
    o.method = "relaunch";
    o.work_items = 100;
    o.group_size = 64;
    EXPECT_THROW(barrier_stencil(d, o), Error) << d.label();
    o.method = "no-such-method";
    o.work_items = 128;
    EXPECT_THROW(barrier_stencil(d, o), Error) << d.label();
  }
}

TEST(BarrierDispatch, DefaultFallsBackToRelaunchWithoutIndependentGroups) {
  for (const auto& d : devices()) {
    if (d.info().independent_groups) continue;
    StencilOptions o;
    o.steps = 30;
    StencilResult r = barrier_stencil(d, o);
    EXPECT_EQ(r.method, "relaunch") << d.label();
    EXPECT_TRUE(r.correct) << d.label();
  }
}

TEST(BarrierDispatch, OpenclHelperForUsersKernels) {
  for (const auto& d : devices()) {
    if (d.backend() != Backend::opencl) {
      EXPECT_THROW(opencl_grid_barrier_groups(d, 64), Error) << d.label();
      continue;
    }
    EXPECT_NE(std::string(opencl_grid_barrier_source()).find("bool parpat_grid_sync("),
              std::string::npos);
    if (!d.info().independent_groups) {
      try {
        opencl_grid_barrier_groups(d, 64);
        ADD_FAILURE() << "a spin barrier was allowed on " << d.label();
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::unsupported) << e.what();
      }
      continue;
    }
    int groups = opencl_grid_barrier_groups(d, 64, 1024);
    EXPECT_GE(groups, d.info().compute_units) << d.label();
    EXPECT_LE(groups, opencl_grid_barrier_groups(d, 64)) << d.label();
  }
}

TEST(BarrierCli, StencilJsonAndRefusal) {
  CliResult r = run_cli("barrier --backend cpu --steps 40 --no-sweep --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pattern"], "barrier");
  ASSERT_FALSE(j["stencil"].empty());
  for (auto& row : j["stencil"]) {
    EXPECT_TRUE(row["correct"].get<bool>()) << row.dump();
    EXPECT_EQ(row["value"].get<std::uint32_t>(), detail::stencil_expected(40));
  }
  for (const auto& d : devices()) {
    if (d.backend() != Backend::opencl || d.info().independent_groups) continue;
    CliResult refused = run_cli("barrier --backend opencl --device " +
                                std::to_string(d.info().index) + " --method flip --steps 10");
    EXPECT_EQ(refused.status, 2);
    EXPECT_NE(refused.err.find("relaunch"), std::string::npos) << refused.err;
  }
  CliResult unknown = run_cli("barrier --backend cpu --method nonsense --no-sweep");
  EXPECT_EQ(unknown.status, 2);
}

TEST(BarrierCli, LatencyOnlyForAListOfMethods) {
  CliResult r =
      run_cli("barrier --backend cpu --method relaunch,relaunch --no-stencil --barriers 3 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["stencil"].empty());
  ASSERT_FALSE(j["latency"].empty());
  for (auto& row : j["latency"]) {
    EXPECT_EQ(row["method"], "relaunch");
    EXPECT_FALSE(row["barrier_failed"].get<bool>()) << row.dump();
  }
  EXPECT_FALSE(j.contains("floor")) << "the fence probe is CUDA's";
  CliResult empty = run_cli("barrier --backend cpu --method , --no-stencil");
  EXPECT_EQ(empty.status, 2);
}

// On CUDA the latency sweep reports, from the same run, the two costs under every barrier.
TEST(BarrierCli, CudaLatencyReportsTheFenceAndTheRoundTrip) {
  bool any = false;
  for (const auto& d : devices()) {
    if (d.backend() != Backend::cuda) continue;
    any = true;
    CliResult r = run_cli("barrier --backend cuda --device " + std::to_string(d.info().index) +
                          " --method flip,cg --no-stencil --barriers 10 --json");
    ASSERT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.contains("floor")) << r.out;
    double fence = j["floor"]["release_fence_us"].get<double>();
    double trip = j["floor"]["l2_round_trip_us"].get<double>();
    EXPECT_GT(fence, 0.0);
    EXPECT_LT(fence, 100.0);
    EXPECT_GT(trip, 0.0);
    EXPECT_LT(trip, 100.0);
  }
  if (!any) GTEST_SKIP() << "no CUDA device";
}

}  // namespace
}  // namespace parpat::test
