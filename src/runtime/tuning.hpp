// Tuning as data: block sizes and strategy thresholds per device, with defaults, looked up by
// key ("reduce.fast.block"). Kernels read these instead of scattering constants in code.
#pragma once

#include <string>

#include "parpat/device.hpp"

namespace parpat::detail {

// The value of `key` for `device`: PARPAT_TUNING's value for it if the environment variable
// names it ("reduce.fast.block=256,histogram.fast.block=1024"), else the first table entry whose
// backend matches and whose name pattern occurs in the device name, else the entry with an empty
// pattern, else `fallback`.
int tuning(const DeviceInfo& device, const std::string& key, int fallback);

}  // namespace parpat::detail
