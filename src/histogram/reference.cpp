// The histogram reference: every value converted to float64 and placed by a binary search over
// the float64 edges (histogram_internal.hpp's reference_slot), one at a time, in order.
#include "histogram/histogram_internal.hpp"

namespace parpat::detail {

bool histogram_dtype_supported(DType t) {
  return t == DType::uint8 || t == DType::uint16 || t == DType::int32 || t == DType::float32 ||
         t == DType::float64;
}

void histogram_reference(const void* in, const HistogramProblem& p, std::uint64_t* counts) {
  std::fill(counts, counts + p.slots(), std::uint64_t{0});
  visit_dtype(p.dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in);
    for (std::int64_t i = 0; i < p.n; ++i)
      ++counts[reference_slot(p, static_cast<double>(x[i]))];
  });
}

std::vector<std::uint32_t> slot_table(const HistogramProblem& p) {
  std::size_t values = p.dtype == DType::uint8 ? 256 : 65536;
  std::vector<std::uint32_t> table(values);
  for (std::size_t v = 0; v < values; ++v)
    table[v] = static_cast<std::uint32_t>(reference_slot(p, static_cast<double>(v)));
  return table;
}

}  // namespace parpat::detail
