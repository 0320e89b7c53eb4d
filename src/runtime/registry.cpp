// Collects the variant tables of every pattern for `parpat list`, the tests and the benchmarks.
#include "parpat/registry.hpp"

#include <utility>

#include "runtime/variant_tables.hpp"

namespace parpat {

namespace detail {

VariantInfo variant_info(const char* pattern, Backend backend, const char* name, const char* idea,
                         std::string params, std::string limits, bool deterministic) {
  VariantInfo v;
  v.pattern = pattern;
  v.backend = backend_name(backend);
  v.name = name;
  v.idea = idea;
  v.params = std::move(params);
  v.limits = std::move(limits);
  v.deterministic = deterministic;
  v.is_default = std::string(name) == (backend == Backend::cpu ? "parallel" : "fast");
  return v;
}

}  // namespace detail

std::vector<VariantInfo> list_variants(const std::string& pattern) {
  std::vector<VariantInfo> all;
#define PARPAT_PATTERN(name) &detail::name##_variants,
  for (auto* table : {
#include "runtime/patterns.def"
       }) {
#undef PARPAT_PATTERN
    for (auto& v : table()) {
      if (pattern.empty() || v.pattern == pattern) all.push_back(v);
    }
  }
  return all;
}

}  // namespace parpat
