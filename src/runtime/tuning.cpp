#include "runtime/tuning.hpp"

#include <cstdlib>
#include <string>
#include <vector>

namespace parpat::detail {

namespace {

struct Entry {
  Backend backend;
  const char* device_pattern;  // substring of the device name; "" matches any device
  const char* key;
  int value;
};

// Specific devices first: the first match wins.
const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      // Hopper: 2048 resident threads per SM; 4 blocks of 512 keep 128 KiB of loads in flight.
      {Backend::cuda, "H100", "reduce.fast.block", 512},
      {Backend::cuda, "H100", "reduce.fast.blocks_per_cu", 4},
      {Backend::cuda, "H200", "reduce.fast.block", 512},
      {Backend::cuda, "H200", "reduce.fast.blocks_per_cu", 4},
      {Backend::cuda, "", "reduce.fast.block", 256},
      {Backend::cuda, "", "reduce.fast.blocks_per_cu", 8},
      // Small inputs are latency-bound: one block without a ticket up to 32 KiB (a thread per 2
      // 16-byte loads), then blocks of 256 threads with about 2 loads each, as many as the data
      // covers, until the bandwidth-bound grid fills the device.
      {Backend::cuda, "", "reduce.fast.single_block_bytes", 32768},
      {Backend::cuda, "", "reduce.fast.single_block_items", 2},
      {Backend::cuda, "", "reduce.fast.small_block", 256},
      {Backend::cuda, "", "reduce.fast.small_items", 2},
      {Backend::cuda, "", "reduce.tree.block", 256},
      {Backend::cuda, "", "reduce.serial.items", 64},
      {Backend::cuda, "", "reduce.serial.block", 256},
      {Backend::cuda, "", "reduce.gridstride.block", 256},
      {Backend::cuda, "", "reduce.gridstride.blocks_per_cu", 8},
      {Backend::cuda, "", "reduce.atomic.block", 256},
      {Backend::cuda, "", "reduce.atomic.blocks_per_cu", 8},
      // NVIDIA's OpenCL names the device as CUDA does ("NVIDIA H100 80GB HBM3").
      {Backend::opencl, "H100", "reduce.fast.block", 512},
      {Backend::opencl, "H100", "reduce.fast.blocks_per_cu", 4},
      {Backend::opencl, "H200", "reduce.fast.block", 512},
      {Backend::opencl, "H200", "reduce.fast.blocks_per_cu", 4},
      {Backend::opencl, "", "reduce.fast.block", 256},
      {Backend::opencl, "", "reduce.fast.blocks_per_cu", 8},
      // Small inputs: one group up to 32 KiB, then about 2 vectors per work-item over as many
      // groups as that takes (at most the tuned grid).
      {Backend::opencl, "", "reduce.fast.single_block_bytes", 32768},
      {Backend::opencl, "", "reduce.fast.small_items", 2},
      // Axis rows: groups of 256, 8 per compute unit (2048 threads per SM on NVIDIA).
      {Backend::opencl, "", "reduce.fast.rows_block", 256},
      {Backend::opencl, "", "reduce.fast.rows_blocks_per_cu", 8},
      // Axis cols: 128 work-items of 16-byte strips, 8 groups per compute unit (1024 threads
      // per SM on NVIDIA, 8 loads each in flight).
      {Backend::opencl, "", "reduce.fast.cols_block", 128},
      {Backend::opencl, "", "reduce.fast.cols_blocks_per_cu", 8},
      {Backend::opencl, "", "reduce.tree.block", 256},
      {Backend::opencl, "", "reduce.serial.items", 64},
      {Backend::opencl, "", "reduce.serial.block", 256},
      {Backend::opencl, "", "reduce.gridstride.block", 256},
      {Backend::opencl, "", "reduce.gridstride.blocks_per_cu", 8},
      {Backend::opencl, "", "reduce.atomic.block", 256},
      {Backend::opencl, "", "reduce.atomic.blocks_per_cu", 8},
      {Backend::cpu, "", "reduce.parallel.chunk", 1 << 16},
      // Histogram: classic variants in blocks of 256; `fast` in blocks of 512 with up to 16 KiB
      // of shared sub-histogram replicas, at most 4 passes over slot ranges before it switches
      // to warp-aggregated global atomics.
      {Backend::cuda, "", "histogram.block", 256},
      {Backend::cuda, "", "histogram.fast.block", 512},
      {Backend::cuda, "", "histogram.fast.replica_kib", 16},
      {Backend::cuda, "", "histogram.fast.max_passes", 4},
      {Backend::opencl, "", "histogram.block", 256},
      {Backend::opencl, "", "histogram.fast.block", 256},
      {Backend::opencl, "", "histogram.fast.replica_kib", 16},
      {Backend::opencl, "", "histogram.fast.max_passes", 4},
      {Backend::opencl, "", "histogram.groups_per_cu", 8},
      {Backend::cpu, "", "histogram.parallel.private_mib", 256},
      // Pairwise `fast`: 256 threads × 8 x per thread; Hopper keeps 8 such blocks per SM.
      {Backend::cuda, "H100", "pairwise.fast.block", 256},
      {Backend::cuda, "H200", "pairwise.fast.block", 256},
      {Backend::cuda, "", "pairwise.fast.block", 256},
      {Backend::cuda, "", "pairwise.simple.block", 256},
      {Backend::opencl, "", "pairwise.fast.block", 256},
      {Backend::opencl, "", "pairwise.simple.block", 256},
      {Backend::cpu, "", "pairwise.parallel.block", 256},
      {Backend::cpu, "", "pairwise.parallel.tile", 4096},
      // Barrier `flip`: one level up to 64 blocks, then sub-words of about √n blocks (0: auto).
      {Backend::cuda, "", "barrier.flip.one_level_max", 64},
      {Backend::cuda, "", "barrier.flip.subword_blocks", 0},
  };
  return entries;
}

// A value for `key` from PARPAT_TUNING ("key=value,key=value"), for measuring other settings
// without a rebuild. Returns false when the variable does not name the key.
bool tuning_override(const std::string& key, int& value) {
  const char* env = std::getenv("PARPAT_TUNING");
  if (!env) return false;
  std::string all = env;
  std::size_t begin = 0;
  while (begin <= all.size()) {
    std::size_t end = all.find(',', begin);
    if (end == std::string::npos) end = all.size();
    std::string item = all.substr(begin, end - begin);
    std::size_t eq = item.find('=');
    if (eq != std::string::npos && item.compare(0, eq, key) == 0) {
      char* rest = nullptr;
      long parsed = std::strtol(item.c_str() + eq + 1, &rest, 10);
      if (rest && *rest == '\0' && rest != item.c_str() + eq + 1) {
        value = int(parsed);
        return true;
      }
    }
    begin = end + 1;
  }
  return false;
}

}  // namespace

int tuning(const DeviceInfo& device, const std::string& key, int fallback) {
  int overridden = 0;
  if (tuning_override(key, overridden)) return overridden;
  const Entry* generic = nullptr;
  for (const auto& e : table()) {
    if (e.backend != device.backend || key != e.key) continue;
    if (*e.device_pattern == '\0') {
      if (!generic) generic = &e;
    } else if (device.name.find(e.device_pattern) != std::string::npos) {
      return e.value;
    }
  }
  return generic ? generic->value : fallback;
}

}  // namespace parpat::detail
