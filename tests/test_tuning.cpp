// The tuning table (src/runtime/tuning.cpp): the narrowest matching entry wins (device over
// architecture over every device of the backend), PARPAT_TUNING overrides are checked and
// re-read when the variable changes, and every entry of the table is a value its key takes.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "parpat/error.hpp"
#include "runtime/tuning.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

DeviceInfo cuda_device(const std::string& name, const std::string& architecture) {
  DeviceInfo d;
  d.backend = Backend::cuda;
  d.name = name;
  d.vendor = "NVIDIA";
  d.architecture = architecture;
  return d;
}

TEST(Tuning, TheNarrowestEntryWins) {
  const DeviceInfo h200 = cuda_device("NVIDIA H200", "sm_90");
  const DeviceInfo other_hopper = cuda_device("NVIDIA GH200-like", "sm_90");
  const DeviceInfo ampere = cuda_device("NVIDIA A100", "sm_80");
  // reduce.fast.block: H100 and H200 entries (512) over the backend's (256).
  EXPECT_EQ(detail::tuning(h200, "reduce.fast.block", -1), 512);
  EXPECT_EQ(detail::tuning(ampere, "reduce.fast.block", -1), 256);
  // reduce.fast.cluster_bytes: an sm_90 entry over the backend's 0 (no cluster elsewhere).
  EXPECT_EQ(detail::tuning(other_hopper, "reduce.fast.cluster_bytes", -1), 1 << 20);
  EXPECT_EQ(detail::tuning(ampere, "reduce.fast.cluster_bytes", -1), 0);
  // A device entry wins over the backend's, whatever their order in the table.
  EXPECT_EQ(detail::tuning(h200, "barrier.flip.one_level_max", -1), 600);
  EXPECT_EQ(detail::tuning(ampere, "barrier.flip.one_level_max", -1), 1100);
}

TEST(Tuning, AnUndeclaredKeyIsAProgrammingError) {
  EXPECT_THROW(detail::tuning(cuda_device("x", ""), "reduce.fast.no_such_knob", 1),
               std::logic_error);
}

// PARPAT_TUNING overrides the tuning table key by key, and where it names a key twice the later
// value counts (the layout tests below extend a shared setting that way).
TEST(Tuning, TheEnvironmentOverridesTheTableAndTheLaterValueWins) {
  DeviceInfo info;
  info.backend = Backend::opencl;
  info.name = "some device";
  ScopedTuning tuning(
      "histogram.opencl.hot_entries=64,histogram.fast.block=96,histogram.opencl.hot_entries=2");
  EXPECT_EQ(detail::tuning(info, "histogram.opencl.hot_entries", 256), 2);
  EXPECT_EQ(detail::tuning(info, "histogram.fast.block", 0), 96);
  EXPECT_EQ(detail::tuning(info, "histogram.fast.max_passes", 0), 4);
  EXPECT_THROW(detail::tuning(info, "no.such.key", 7), std::logic_error);
}

TEST(Tuning, EveryTableEntryIsAValueItsKeyTakes) {
  EXPECT_NO_THROW(detail::check_tuning_table());
}

// A malformed item, an unknown key or a value its key does not take is refused, by name and with
// the values the key takes, before any kernel sees it; empty items are skipped.
TEST(Tuning, ABadOverrideIsRefusedWithTheValuesTheKeyTakes) {
  DeviceInfo info;
  info.backend = Backend::opencl;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"reduce.fast.block=-1", "reduce.fast.block takes a power of two from 32 to 1024"},
      {"reduce.fast.block=4294967295", "a power of two from 32 to 1024"},
      {"reduce.fast.block=99999999999999999999", "a power of two from 32 to 1024"},
      {"reduce.fast.block=96", "a power of two from 32 to 1024"},
      {"histogram.fast.block=100", "a multiple of 32 from 32 to 1024"},
      {"histogram.opencl.field_bits=7", "0, 4, 5, 8 or 16"},
      {"pairwise.parallel.tile=0", "an integer from 1 to"},
      {"reduce.fast.block=abc", "'reduce.fast.block=abc'"},
      {"reduce.fast.block=", "'reduce.fast.block='"},
      {"reduce.fast.block=256x", "'reduce.fast.block=256x'"},
      {"x", "'x' is not key=value"},
      {"=5", "'=5' is not key=value"},
      {"reduce.fast.blok=256", "unknown key 'reduce.fast.blok'"},
      {"reduce.fast.block=256,cpu.pool.threads=-3", "cpu.pool.threads takes"},
  };
  for (const auto& [setting, fragment] : bad) {
    SCOPED_TRACE(setting);
    ScopedTuning tuning(setting);
    for (int call = 0; call < 2; ++call) {
      try {
        if (call == 0)
          detail::check_tuning_overrides();
        else
          detail::tuning(info, "histogram.fast.max_passes", 0);
        ADD_FAILURE() << "accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
        EXPECT_EQ(std::string(e.what()).rfind("PARPAT_TUNING: ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      }
    }
  }
  ScopedTuning tuning(",reduce.fast.block=512,,histogram.opencl.field_bits=5,");
  EXPECT_EQ(detail::tuning(info, "reduce.fast.block", 0), 512);
  EXPECT_EQ(detail::tuning(info, "histogram.opencl.field_bits", 0), 5);
}

}  // namespace
}  // namespace parpat::test
