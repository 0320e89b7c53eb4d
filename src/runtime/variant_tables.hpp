// One function per pattern (runtime/patterns.def) returning its registry entries on every
// backend built in; each pattern's dispatch defines it with PARPAT_DEFINE_VARIANT_TABLE.
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

#define PARPAT_PATTERN(name) std::vector<VariantInfo> name##_variants();
#include "runtime/patterns.def"
#undef PARPAT_PATTERN

}  // namespace parpat::detail
