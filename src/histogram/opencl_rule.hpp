// What the OpenCL histogram kernels share on the host: binding kernel arguments, and the bin
// rule of a problem on one device (RULE of histogram_rules.cl, the table, edges or thresholds
// it reads, its build options and its arguments).
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>

#include "histogram/histogram_internal.hpp"
#include "histogram/opencl_layout.hpp"
#include "runtime/opencl/opencl_device.hpp"

namespace parpat::detail {

// One kernel argument: cl_mem handles by size and address (the C++ bindings refuse raw
// pointers), cl::Local sizes and scalars through the bindings.
template <class T>
void set_arg(cl::Kernel& k, cl_uint index, const T& value) {
  if constexpr (std::is_pointer_v<T>) {
    k.setArg(index, sizeof(T), &value);
  } else {
    k.setArg(index, value);
  }
}

// Binds args to the arguments from `first` on; returns the index after the last.
template <class... Args>
cl_uint set_args_from(cl::Kernel& k, cl_uint first, const Args&... args) {
  (set_arg(k, first++, args), ...);
  return first;
}

// The work-group size of kernel k: `wanted`, or fewer where the device or the kernel's
// registers allow fewer.
inline std::size_t group_size_for(cl::Kernel& k, OpenclDevice& cl, std::size_t wanted) {
  try {
    return std::min({wanted, static_cast<std::size_t>(cl.info().max_group_size),
                     k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(cl.device())});
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

// Whether the problem's dtype is read as the bits that index a value → slot table (bool and the
// 1- and 2-byte integers).
bool table_rule(const HistogramProblem& p);

// The bin rule of a problem on one device: RULE of histogram_rules.cl (the value → slot table
// of 1- and 2-byte input — or the merge table of `fast` counting 1-byte input per value — the
// even rule, explicit edges, and for `fast` the float rule of float32 and 16- and 32-bit
// integers, Even16Rule, Float64EvenRule and IntegerShiftRule), the table, edges or thresholds it
// reads, its build options and its kernel arguments.
class ClBinRule {
 public:
  // `fast`: the rules of the fast variants may be taken. `count_values`: `fast` counts the
  // input's values themselves and reads the merge table (1-byte input) or, for 16-bit input,
  // `window`'s rows and their slots instead. `rows`: the kernel counts rows
  // (histogram_rules.cl's slot_of_row), so a value table holds each value's row.
  ClBinRule(const Device& d, const HistogramProblem& p, bool fast, bool count_values,
            bool rows = false, const ValueWindow* window = nullptr);
  // -DT, -DVEC, -DRULE, -DINT64_ATOMICS, -DFLOAT_EDGES, -DINT32_FLOAT, -DDTYPE16, -DEVEN16_HI,
  // -DHI_ROW and -DVALUE_WINDOW of histogram_rules.cl.
  std::string options() const;
  // The rows a `fast` kernel places values in: the slots, one more with Even16Rule's hi row.
  std::uint32_t rows() const {
    return id_ == 4 ? even16_.rows() : static_cast<std::uint32_t>(p_.slots());
  }
  // Binds the rule's parameters from argument `first` on; returns the next argument index.
  cl_uint bind(cl::Kernel& k, cl_uint first) const;
  std::size_t temp_bytes() const { return aux_.bytes(); }

 private:
  // DTYPE16 of histogram_rules.cl: how RULE 4 decodes 16-bit input.
  int dtype16() const;
  template <class V>
  void upload(const std::vector<V>& values) {
    aux_ = Buffer(device_, values.size() * sizeof(V));
    aux_.upload(values.data(), aux_.bytes());
  }

  Device device_;
  HistogramProblem p_;
  EvenRule even_;
  FloatEvenRule float_rule_;    // usable only for `fast` on float32 input with even bins
  Even16Rule even16_;           // `fast` on 16-bit input
  Float64EvenRule float64_;     // `fast` on float64
  IntegerShiftRule int_shift_;  // `fast`: 4- and 8-byte integers, power-of-two bin widths
  int id_ = 0;                  // RULE of histogram_rules.cl
  bool float_edges_ = false;    // RULE 3 settles against the float64 edges, not thresholds
  int int32_float_ = 0;         // INT32_FLOAT of histogram_rules.cl: RULE 3 on int (1), uint (2)
  bool values16_ = false;       // 16-bit input counted per value: the window's parameters too
  bool value_window_ = false;   // VALUE_WINDOW of histogram_rules.cl: rows other than the bits
  cl_uint4 window_{};           // the window's base, rows, above_end and nan_end
  Buffer aux_;  // value → slot (or merge-cell) table, explicit edges or float thresholds
};

}  // namespace parpat::detail
