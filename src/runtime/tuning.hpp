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
// PARPAT_TUNING's items must each be key=value with a known key and a value that key takes
// (src/runtime/tuning.cpp lists them); otherwise tuning() throws an invalid_argument Error.
int tuning(const DeviceInfo& device, const std::string& key, int fallback);

// Throws tuning()'s error for a bad PARPAT_TUNING at once, before any key is looked up.
void check_tuning_overrides();

// Throws when an entry of the built-in table is outside the values its key takes (a test).
void check_tuning_table();

}  // namespace parpat::detail
