// One function per pattern returning its registry entries on every backend built in.
#pragma once

#include <vector>

#include "parpat/registry.hpp"

namespace parpat::detail {

std::vector<VariantInfo> reduce_variants();
std::vector<VariantInfo> histogram_variants();
std::vector<VariantInfo> pairwise_variants();
std::vector<VariantInfo> barrier_variants();

}  // namespace parpat::detail
