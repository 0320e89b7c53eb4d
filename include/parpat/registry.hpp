// parpat/registry.hpp — every (pattern, backend, variant) that this build holds.
#pragma once

#include <string>
#include <vector>

namespace parpat {

struct VariantInfo {
  std::string pattern;        // "reduce", "histogram", ...
  std::string backend;        // "cpu", "cuda", "opencl"
  std::string name;           // "tree", "fast", ... identical on every backend
  std::string idea;           // one line: the strategy it implements
  std::string params;         // "block=256 items=4"
  std::string limits;         // what it does not cover ("axis all; ops sum min max"), empty if none
  bool deterministic = true;  // bit-identical float results on every run
  bool is_default = false;
};

// All variants, in pattern, backend, registration order. `parpat list` prints this; tests and
// benchmarks iterate it so that no variant escapes either.
std::vector<VariantInfo> list_variants(const std::string& pattern = {});

}  // namespace parpat
