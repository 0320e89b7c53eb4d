// Grid barrier: every backend × method present (DESIGN.md §2, §6). On devices whose groups run
// independently (GPUs): the stencil gives 3^steps in every element for group sizes 1024, 64 and
// 32, the stress test sees no early release, and a grid above the safe bound is refused. On
// PoCL and the CPU: spin methods are refused up front and `relaunch` gives the right answer.
// Step and round counts are drawn from the run's seed.
#include <nlohmann/json.hpp>

#include <random>

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

std::vector<Target> targets() {
  std::vector<Target> out;
  for (const auto& d : devices())
    for (const auto& v : list_variants("barrier"))
      if (v.backend == backend_name(d.backend())) out.push_back({d, v.name});
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

class BarrierTest : public ::testing::TestWithParam<Target> {};

TEST_P(BarrierTest, StencilGivesThreeToTheSteps) {
  const auto& t = GetParam();
  bool gpu = t.device.backend() != Backend::cpu && t.device.info().independent_groups;
  for (int group : {1024, 64, 32}) {
    if (t.device.backend() != Backend::cpu && group > t.device.info().max_group_size) continue;
    StencilOptions o;
    o.method = t.method;
    o.group_size = group;
    o.steps = gpu ? draw(5000, 20000, group) : draw(20, 120, group);
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
}

TEST_P(BarrierTest, StressTestSeesNoEarlyRelease) {
  const auto& t = GetParam();
  bool gpu = t.device.backend() != Backend::cpu && t.device.info().independent_groups;
  StressOptions o;
  o.method = t.method;
  o.rounds = gpu ? 20000 : draw(50, 150, 7);
  if (!runs_here(t)) {
    EXPECT_THROW(barrier_stress(t.device, o), Error);
    return;
  }
  StressResult r = barrier_stress(t.device, o);
  EXPECT_EQ(r.early_releases, 0u) << r.groups << " groups of " << r.group_size << ", " << r.rounds
                                  << " rounds, seed " << run_seed();
  EXPECT_FALSE(r.barrier_failed);
  EXPECT_GE(r.groups, 1);
}

TEST_P(BarrierTest, RefusesAGridAboveTheSafeBound) {
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
}

TEST_P(BarrierTest, LatencyIsMeasured) {
  const auto& t = GetParam();
  if (!runs_here(t)) GTEST_SKIP() << t.method << " is refused on " << t.device.label();
  int units = std::max(1, t.device.info().compute_units);
  int groups = std::min(units, barrier_max_groups(t.device, t.method, 128));
  LatencyResult r = barrier_latency(t.device, t.method, groups, 128, 50, 3);
  EXPECT_FALSE(r.barrier_failed);
  EXPECT_GE(r.us_per_barrier, 0.0);
}

INSTANTIATE_TEST_SUITE_P(AllMethods, BarrierTest, ::testing::ValuesIn(targets()), target_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BarrierTest);

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

}  // namespace
}  // namespace parpat::test
