// Collects the variant tables of every pattern for `parpat list`, the tests and the benchmarks.
#include "parpat/registry.hpp"

#include "runtime/variant_tables.hpp"

namespace parpat {

std::vector<VariantInfo> list_variants(const std::string& pattern) {
  std::vector<VariantInfo> all;
  for (auto* table : {&detail::reduce_variants, &detail::histogram_variants,
                      &detail::pairwise_variants, &detail::barrier_variants}) {
    for (auto& v : table()) {
      if (pattern.empty() || v.pattern == pattern) all.push_back(v);
    }
  }
  return all;
}

}  // namespace parpat
