// Tuning policies (src/runtime/tuning.hpp): the narrowest matching table value wins (device over
// architecture over every device of the backend), PARPAT_TUNING overrides are checked and
// re-read when the variable changes, and every default and table value is one its field takes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "barrier/tuning.hpp"
#include "histogram/tuning.hpp"
#include "parpat/error.hpp"
#include "reduce/tuning.hpp"
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

TEST(Tuning, TheNarrowestTableValueWins) {
  const DeviceInfo h200 = cuda_device("NVIDIA H200", "sm_90");
  const DeviceInfo other_hopper = cuda_device("NVIDIA GH200-like", "sm_90");
  const DeviceInfo ampere = cuda_device("NVIDIA A100", "sm_80");
  // reduce.fast.blocks_per_cu: an H200 value (4) over the default (8).
  EXPECT_EQ(detail::tuned<detail::ReduceFastPolicy>(h200).blocks_per_cu, 4);
  EXPECT_EQ(detail::tuned<detail::ReduceFastPolicy>(ampere).blocks_per_cu, 8);
  // reduce.fast.cluster_bytes: an sm_90 value over the default 0 (no cluster elsewhere).
  EXPECT_EQ(detail::tuned<detail::ReduceFastPolicy>(other_hopper).cluster_bytes, 1 << 20);
  EXPECT_EQ(detail::tuned<detail::ReduceFastPolicy>(ampere).cluster_bytes, 0);
  // A device value wins over the default; values of another backend do not apply.
  EXPECT_EQ(detail::tuned<detail::BarrierFlipPolicy>(h200).one_level_max, 600);
  EXPECT_EQ(detail::tuned<detail::BarrierFlipPolicy>(ampere).one_level_max, 1100);
  DeviceInfo opencl_h200 = h200;
  opencl_h200.backend = Backend::opencl;
  EXPECT_EQ(detail::tuned<detail::ReduceFastPolicy>(opencl_h200).arg_blocks_per_cu, 1);
  EXPECT_EQ(detail::tuned<detail::ReduceFastPolicy>(h200).arg_blocks_per_cu, 0);
  EXPECT_EQ(detail::tuned<detail::ReduceFastPolicy>(opencl_h200).single_block_bytes, 32768);
  EXPECT_EQ(detail::tuned<detail::ReduceFastPolicy>(h200).single_block_bytes, 65536);
}

// PARPAT_TUNING overrides the table field by field, and where it names a key twice the later
// value counts (the layout tests extend a shared setting that way).
TEST(Tuning, TheEnvironmentOverridesTheTableAndTheLaterValueWins) {
  DeviceInfo info;
  info.backend = Backend::opencl;
  info.name = "some device";
  ScopedTuning tuning(
      "histogram.opencl.hot_entries=64,histogram.fast.block=96,histogram.opencl.hot_entries=2");
  EXPECT_EQ(detail::tuned<detail::HistogramOpenclPolicy>(info).hot_entries, 2);
  EXPECT_EQ(detail::tuned<detail::HistogramFastPolicy>(info).block, 96);
  EXPECT_EQ(detail::tuned<detail::HistogramFastPolicy>(info).max_passes, 4);
  EXPECT_EQ(detail::tuned<detail::HistogramFastPolicy>(info).striped_kib, 96);
}

// Every default and table value is one its field takes, no table value sets an undeclared
// field, and every key is declared once.
TEST(Tuning, EveryDefaultAndTableValueIsAValueItsFieldTakes) {
  const detail::TuningCatalog& catalog = detail::tuning_catalog();
  EXPECT_TRUE(catalog.errors.empty()) << catalog.errors.front();
  EXPECT_GT(catalog.keys.size(), 80u);
  std::set<std::string> keys;
  for (const auto& k : catalog.keys)
    EXPECT_TRUE(keys.insert(k.key).second) << k.key << " declared twice";
  EXPECT_EQ(keys.count("reduce.fast.block"), 1u);
  EXPECT_EQ(keys.count("stream.chunk_kib"), 1u);
  EXPECT_EQ(keys.count("cpu.pool.threads"), 1u);
  EXPECT_EQ(keys.count("barrier.hierarchical.cluster"), 1u);
}

// The measurements behind the tables (bench/tuning/measurements.json) name keys that exist. The
// source tree is the build's, or $PARPAT_SOURCE_DIR where the binary runs elsewhere.
TEST(Tuning, EveryMeasurementNamesADeclaredKey) {
  const char* moved = std::getenv("PARPAT_SOURCE_DIR");
  std::ifstream file(std::string(moved ? moved : PARPAT_SOURCE_DIR) +
                     "/bench/tuning/measurements.json");
  ASSERT_TRUE(file) << "bench/tuning/measurements.json";
  const nlohmann::json records = nlohmann::json::parse(file).at("records");
  std::set<std::string> declared;
  for (const auto& k : detail::tuning_catalog().keys)
    declared.insert(k.key);
  std::size_t named = 0;
  for (const auto& record : records)
    for (const auto& key : record.at("keys")) {
      EXPECT_EQ(declared.count(key.get<std::string>()), 1u) << record.at("id") << " names " << key;
      ++named;
    }
  EXPECT_GT(named, 40u);
}

// The catalog finds a default or a table value outside its field's limits, and a table value for
// a member no field declares.
struct BrokenPolicy {
  static constexpr const char* kName = "test.broken";
  int block = 100;  // not a power of two
  int items = 4;
  int undeclared = 0;
  static const std::vector<detail::Field<BrokenPolicy>>& fields() {
    static const std::vector<detail::Field<BrokenPolicy>> f = {
        {"block", &BrokenPolicy::block, detail::power_of_two(32, 1024)},
        {"items", &BrokenPolicy::items, detail::one_of({2, 4, 8})},
    };
    return f;
  }
  static const std::vector<detail::TableValue<BrokenPolicy>>& table() {
    static const std::vector<detail::TableValue<BrokenPolicy>> t = {
        {Backend::cuda, detail::Scope::device, "H200", &BrokenPolicy::items, 3},
        {Backend::cuda, detail::Scope::any, "", &BrokenPolicy::undeclared, 1},
    };
    return t;
  }
};

TEST(Tuning, TheCatalogFindsValuesOutsideTheirLimits) {
  detail::TuningCatalog catalog;
  catalog.add<BrokenPolicy>();
  ASSERT_EQ(catalog.errors.size(), 3u);
  EXPECT_NE(catalog.errors[0].find("test.broken.block: the default 100"), std::string::npos);
  EXPECT_NE(catalog.errors[1].find("test.broken.items: the table's 3 for 'H200' is not 2, 4 or 8"),
            std::string::npos)
      << catalog.errors[1];
  EXPECT_NE(catalog.errors[2].find("undeclared field"), std::string::npos);
  EXPECT_EQ(catalog.keys.size(), 2u);
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
          detail::tuned<detail::HistogramFastPolicy>(info);
        ADD_FAILURE() << "accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
        EXPECT_EQ(std::string(e.what()).rfind("PARPAT_TUNING: ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      }
    }
  }
  ScopedTuning tuning(",reduce.fast.block=512,,histogram.opencl.field_bits=5,");
  EXPECT_EQ(detail::tuned<detail::ReduceFastPolicy>(info).block, 512);
  EXPECT_EQ(detail::tuned<detail::HistogramOpenclPolicy>(info).field_bits, 5);
}

}  // namespace
}  // namespace parpat::test
