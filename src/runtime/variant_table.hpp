// A pattern's variants on every backend built in, collected once: what its dispatch finds by
// (backend, name) and what `parpat list`, the tests and the benchmarks iterate. A pattern's
// dispatch file registers with one line,
//   PARPAT_DEFINE_VARIANT_TABLE(histogram, HistogramVariant, "variant")
// which defines histogram_variants() (its registry entries) and find_histogram_variant(); its
// backends provide cpu_histogram_variants() and, when built, cuda_/opencl_histogram_variants().
// The build defines PARPAT_PATTERN_HAS_CUDA / _OPENCL on the dispatch file when the pattern's
// folder has that backend and the backend is built.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "parpat/device.hpp"
#include "parpat/error.hpp"
#include "parpat/registry.hpp"

namespace parpat::detail {

// Variant: any struct with a VariantInfo `info` (name, backend, is_default, ...).
template <class Variant>
class VariantTable {
 public:
  using Collect = std::vector<Variant> (*)();

  // `noun` names a variant in messages ("variant", "method").
  VariantTable(const char* pattern, const char* noun, std::initializer_list<Collect> backends)
      : pattern_(pattern), noun_(noun) {
    for (Collect collect : backends)
      for (auto& v : collect())
        variants_.push_back(std::move(v));
  }

  const std::vector<Variant>& all() const { return variants_; }

  std::vector<VariantInfo> infos() const {
    std::vector<VariantInfo> out;
    for (const auto& v : variants_)
      out.push_back(v.info);
    return out;
  }

  // The variant `name` of `backend` (an empty name: the backend's default), or
  // Error(invalid_argument) naming the ones that exist.
  const Variant& find(Backend backend, const std::string& name) const {
    std::string known;
    for (const auto& v : variants_) {
      if (v.info.backend != backend_name(backend)) continue;
      if (v.info.name == name || (name.empty() && v.info.is_default)) return v;
      known += (known.empty() ? "" : ", ") + v.info.name;
    }
    throw_invalid("unknown " + pattern_ + " " + noun_ + " '" + name + "' on backend " +
                  backend_name(backend) + " (available: " + (known.empty() ? "none" : known) + ")");
  }

 private:
  std::string pattern_, noun_;
  std::vector<Variant> variants_;
};

}  // namespace parpat::detail

#ifdef PARPAT_PATTERN_HAS_CUDA
#define PARPAT_AND_CUDA_VARIANTS(pattern) , cuda_##pattern##_variants
#else
#define PARPAT_AND_CUDA_VARIANTS(pattern)
#endif
#ifdef PARPAT_PATTERN_HAS_OPENCL
#define PARPAT_AND_OPENCL_VARIANTS(pattern) , opencl_##pattern##_variants
#else
#define PARPAT_AND_OPENCL_VARIANTS(pattern)
#endif

// Defines, in parpat::detail, pattern_variant_table(), pattern_variants() and
// find_pattern_variant() for a pattern whose backends provide <backend>_pattern_variants().
#define PARPAT_DEFINE_VARIANT_TABLE(pattern, Variant, noun)                                      \
  const VariantTable<Variant>& pattern##_variant_table() {                                       \
    static const VariantTable<Variant> table(#pattern, noun,                                     \
                                             {cpu_##pattern##_variants PARPAT_AND_CUDA_VARIANTS( \
                                                 pattern) PARPAT_AND_OPENCL_VARIANTS(pattern)}); \
    return table;                                                                                \
  }                                                                                              \
  std::vector<VariantInfo> pattern##_variants() {                                                \
    return pattern##_variant_table().infos();                                                    \
  }                                                                                              \
  const Variant& find_##pattern##_variant(Backend backend, const std::string& name) {            \
    return pattern##_variant_table().find(backend, name);                                        \
  }
