// The OpenCL histogram's bin rule on a device (opencl_rule.hpp).
#include "histogram/opencl_rule.hpp"

#include <cmath>

#include "histogram/tuning.hpp"

namespace parpat::detail {

namespace {

// The element type the kernels read: bool, int8 and int16 as the unsigned integer of their width
// (their bits index the value → slot table), the other dtypes as themselves.
const char* cl_type(DType t) {
  if (is_table_dtype(t)) return dtype_size(t) == 1 ? "uchar" : "ushort";
  return opencl_type_name(t);
}

// The value → merge-cell table of the fast kernel's 1-byte path: table[v] is the cell value v is
// merged into, table[256 + cell] the slot of the cell, one cell per distinct slot, so a group
// adds each slot to the global counts once however many values share it.
std::vector<std::uint32_t> merge_table(const HistogramProblem& p) {
  std::vector<std::uint32_t> slots = slot_table(p), table(512, 0);
  std::uint32_t cells = 0;
  for (std::uint32_t v = 0; v < 256; ++v) {
    std::uint32_t cell = 0;
    while (cell < cells && table[256 + cell] != slots[v])
      ++cell;
    if (cell == cells) table[256 + cells++] = slots[v];
    table[v] = cell;
  }
  return table;
}

// Whether the device's float arithmetic keeps subnormals: Even16Rule's host check assumes it
// (a flushed bfloat16 subnormal, or product, could cross an edge at 0).
bool keeps_subnormals(const Device& d) {
  try {
    return (backend_cast<OpenclDevice>(d).device().getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() &
            CL_FP_DENORM) != 0;
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

// The row of each value of a 16-bit table type (slot_table's slots in row order).
std::vector<std::uint32_t> row_table(const HistogramProblem& p) {
  std::vector<std::uint32_t> table = slot_table(p);
  for (std::uint32_t& s : table)
    s = static_cast<std::uint32_t>(row_of_slot(s, p.bins));
  return table;
}

}  // namespace

bool table_rule(const HistogramProblem& p) {
  return is_table_dtype(p.dtype);
}

ClBinRule::ClBinRule(const Device& d, const HistogramProblem& p, bool fast, bool count_values,
                     bool rows, const ValueWindow* window)
    : device_(d), p_(p), even_(p) {
  const auto& info = d.info();
  // `fast` places float32 values and 16-bit integers (each exactly a float) in float arithmetic
  // where the rule's bound holds: fewer instructions than a load from the 256 KiB value table;
  // and 32-bit integers where the float64 edges can place those beyond 2^24 (up to
  // histogram.fast.int_float_max_bins bins). The float rule settles values near an edge against
  // the float64 edges (a few float64 operations, no table load) where the device has them, and
  // takes float32 and bfloat16 over power-of-two widths from 0 as exact (no value near an edge
  // at all) where the device keeps subnormals, as CUDA does.
  const bool fp64_edges = info.fp64 && tuned<HistogramOpenclPolicy>(info).float_edges;
  const bool int32 = (p.dtype == DType::int32 || p.dtype == DType::uint32) &&
                     p.bins <= tuned<HistogramFastPolicy>(info).int_float_max_bins;
  const bool float_input = p.dtype == DType::float32 || dtype_size(p.dtype) == 2 ||
                           p.dtype == DType::int16 || (int32 && fp64_edges);
  // Exact rules without a correction where they hold: 16-bit input (checked for every value),
  // 4- and 8-byte integers with power-of-two bin widths; float64 in float64 arithmetic, and so 4-
  // and 8-byte integers that no other rule takes (each converted to float64, as numpy converts it)
  // up to int_float_max_bins bins, past which integer data sits on edges too often.
  if (fast && p.even && dtype_size(p.dtype) == 2 && !count_values && keeps_subnormals(d))
    even16_ = Even16Rule(p);
  if (fast && p.even) int_shift_ = IntegerShiftRule(p);
  if (fast && float_input && p.even && !count_values)
    float_rule_ = FloatEvenRule(p, keeps_subnormals(d));
  const bool wide_integer = !is_float(p.dtype) && dtype_size(p.dtype) >= 4 && !int_shift_.usable &&
                            !float_rule_.usable &&
                            p.bins <= tuned<HistogramFastPolicy>(info).int_float_max_bins;
  if (fast && p.even && info.fp64 && (p.dtype == DType::float64 || wide_integer))
    float64_ = Float64EvenRule(p);
  id_ = even16_.usable       ? 4
        : float64_.usable    ? 5
        : int_shift_.usable  ? 6
        : float_rule_.usable ? 3
        : table_rule(p)      ? 0
        : p.even             ? 1
                             : 2;
  float_edges_ = id_ == 3 && fp64_edges;
  int32_float_ = id_ == 3 && int32 ? (p.dtype == DType::int32 ? 1 : 2) : 0;
  if (count_values && dtype_size(p.dtype) == 1) {
    upload(merge_table(p));
  } else if (count_values) {
    if (!window) throw_invalid("16-bit input counted per value needs its window");
    values16_ = true;
    value_window_ = !window->by_bits;
    window_ = {{window->base, window->rows, window->above_end, window->nan_end}};
    upload(window->slots);
  } else if (id_ == 0) {
    upload(rows ? row_table(p) : slot_table(p));
  } else if (id_ == 2) {
    upload(p.edges);
  } else if (id_ == 3 && !float_edges_) {
    upload(float_thresholds(p));
  }
}

int ClBinRule::dtype16() const {
  switch (p_.dtype) {
    case DType::uint16:
      return 1;
    case DType::int16:
      return 2;
    case DType::float16:
      return 3;
    case DType::bfloat16:
      return 4;
    default:
      return 0;
  }
}

std::string ClBinRule::options() const {
  return std::string("-DT=") + cl_type(p_.dtype) +
         " -DVEC=" + std::to_string(16 / dtype_size(p_.dtype)) + " -DRULE=" + std::to_string(id_) +
         " -DINT64_ATOMICS=" + (device_.info().int64_atomics ? "1" : "0") +
         " -DFLOAT_EDGES=" + (float_edges_ ? "1" : "0") +
         " -DINT32_FLOAT=" + std::to_string(int32_float_) +
         " -DDTYPE16=" + std::to_string(dtype16()) +
         " -DEVEN16_HI=" + (id_ == 4 && !std::isnan(even16_.hi) ? "1" : "0") +
         " -DHI_ROW=" + (id_ == 4 && even16_.hi_row ? "1" : "0") +
         " -DVALUE_WINDOW=" + (value_window_ ? "1" : "0");
}

cl_uint ClBinRule::bind(cl::Kernel& k, cl_uint first) const {
  switch (id_) {
    case 0:
      set_arg(k, first, as_mem(aux_.handle()));
      if (!values16_) return first + 1;
      set_arg(k, first + 1, window_);
      return first + 2;
    case 1:
      set_args_from(k, first, static_cast<cl_long>(even_.bins), even_.lo, even_.hi, even_.step,
                    even_.norm);
      return first + 5;
    case 3:
      set_args_from(k, first, float_rule_.lo_up, float_rule_.hi_down, float_rule_.lo,
                    float_rule_.norm, float_rule_.delta, static_cast<cl_int>(float_rule_.bins));
      if (float_edges_) {
        set_args_from(k, first + 6, even_.lo, even_.step, even_.hi);
        return first + 9;
      }
      set_arg(k, first + 6, as_mem(aux_.handle()));
      return first + 7;
    case 4:
      set_args_from(k, first, even16_.scale, even16_.fraction, even16_.low, even16_.high,
                    even16_.shift, even16_.hi, static_cast<cl_int>(even16_.bins),
                    static_cast<cl_int>(even16_.whole));
      return first + 8;
    case 5:
      set_args_from(k, first, float64_.lo, float64_.norm, float64_.delta,
                    static_cast<cl_int>(float64_.bins), even_.hi, even_.step);
      return first + 6;
    case 6:
      set_args_from(k, first, static_cast<cl_int>(int_shift_.lo),
                    static_cast<cl_int>(int_shift_.hi), static_cast<cl_int>(int_shift_.bins),
                    static_cast<cl_int>(int_shift_.left), static_cast<cl_int>(int_shift_.right),
                    static_cast<cl_int>(int_shift_.below), static_cast<cl_int>(int_shift_.above));
      return first + 7;
    default:
      set_args_from(k, first, as_mem(aux_.handle()), static_cast<cl_long>(p_.bins));
      return first + 2;
  }
}

}  // namespace parpat::detail
