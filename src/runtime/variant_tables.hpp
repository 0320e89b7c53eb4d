// One function per pattern returning its registry entries on every backend built in.
#pragma once

#include <string>
#include <vector>

#include "parpat/device.hpp"
#include "parpat/registry.hpp"

namespace parpat::detail {

// One registry entry. A backend's default variant is `parallel` on the CPU and `fast` on the
// GPU backends; a pattern with another default sets is_default itself.
VariantInfo variant_info(const char* pattern, Backend backend, const char* name, const char* idea,
                         std::string params, std::string limits = {}, bool deterministic = true);

std::vector<VariantInfo> reduce_variants();
std::vector<VariantInfo> histogram_variants();
std::vector<VariantInfo> pairwise_variants();
std::vector<VariantInfo> barrier_variants();

}  // namespace parpat::detail
