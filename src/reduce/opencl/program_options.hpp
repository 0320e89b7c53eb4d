// The OpenCL reduce program for (dtype, op) on a device: the block and grid sizes of the tuning
// table, and the -D options (the element, accumulator and result types, the identity and the
// operator's macros of reduce_ops.cl), the same for every variant. Also which accumulators fit
// the atomic variant's compare-and-swap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>

#include "parpat/dtype.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/tuning.hpp"
#include "runtime/opencl/opencl_device.hpp"

namespace parpat::detail::opencl_reduce {

inline constexpr std::size_t kVectorBytes = 16;
// The largest accumulator: the Moments of the moment ops, four doubles.
inline constexpr std::size_t kMaxAccBytes = 32;

// float16 and bfloat16: stored as their bits, computed in float (reduce_ops.cl's WIDEN).
inline bool is_float16(DType t) {
  return t == DType::float16 || t == DType::bfloat16;
}

inline bool is_sum_or_prod(ReduceOp op) {
  return op == ReduceOp::sum || op == ReduceOp::prod;
}

// The op the kernels run: on integer input (no NaN) a nan-op is its plain op.
inline ReduceOp kernel_op(DType t, ReduceOp op) {
  return is_float(t) ? op : plain_reduce_op(op);
}

// Bytes of the accumulator the kernels use for (dtype, op) on this device.
inline std::size_t acc_bytes(DType t, ReduceOp op, const DeviceInfo& device) {
  if (is_arg_op(op)) return 16;
  if (!is_basic_reduce_op(op)) return 32;  // atomics never take these
  if (is_sum_or_prod(op)) return is_float(t) && !device.fp64 ? 4 : 8;
  return is_float16(t) ? sizeof(float) : dtype_size(t);
}

inline const char* highest(DType t) {
  switch (t) {
    case DType::boolean:
      return "1";
    case DType::int8:
      return "CHAR_MAX";
    case DType::uint8:
      return "UCHAR_MAX";
    case DType::int16:
      return "SHRT_MAX";
    case DType::uint16:
      return "USHRT_MAX";
    case DType::int32:
      return "INT_MAX";
    case DType::uint32:
      return "UINT_MAX";
    case DType::int64:
      return "LONG_MAX";
    case DType::uint64:
      return "ULONG_MAX";
    default:
      return "INFINITY";
  }
}

inline const char* lowest(DType t) {
  switch (t) {
    case DType::int8:
      return "CHAR_MIN";
    case DType::int16:
      return "SHRT_MIN";
    case DType::int32:
      return "INT_MIN";
    case DType::int64:
      return "LONG_MIN";
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::float64:
      return "-INFINITY";
    default:
      return "0";
  }
}

// The atomic variant merges through a compare-and-swap on the accumulator's bits: 4 bytes with
// core atomics, 8 with cl_khr_int64_base_atomics. Arg pairs and uint8 min/max do not fit.
inline bool atomic_fits(DType t, ReduceOp op, const DeviceInfo& device) {
  if (is_arg_op(op)) return false;
  std::size_t bytes = acc_bytes(t, op, device);
  return bytes == 4 || (bytes == 8 && device.int64_atomics);
}

// Largest power of two ≤ the tuned `block` and the device's group limit.
inline std::size_t block_size(const DeviceInfo& device, int block) {
  auto limit = static_cast<std::size_t>(std::min(block, std::max(device.max_group_size, 1)));
  std::size_t b = 1;
  while (b * 2 <= limit)
    b *= 2;
  return b;
}

struct Tunables {
  std::size_t tree_block, serial_block, serial_items, gridstride_block, gridstride_groups,
      atomic_block, atomic_groups, fast_block, fast_groups, fast_arg_groups, fast_rows_block,
      fast_rows_groups, fast_rows_grid, fast_cols_block, fast_cols_groups;
  std::int64_t fast_small_items, fast_single_block_bytes;
};

inline Tunables tunables(const DeviceInfo& d) {
  Tunables t;
  const auto cus = static_cast<std::size_t>(std::max(d.compute_units, 1));
  const auto per_cu = [&](int groups) { return cus * static_cast<std::size_t>(groups); };
  const ReduceSerialPolicy serial = tuned<ReduceSerialPolicy>(d);
  const ReduceGridStridePolicy gridstride = tuned<ReduceGridStridePolicy>(d);
  const ReduceAtomicPolicy atomic = tuned<ReduceAtomicPolicy>(d);
  const ReduceFastPolicy fast = tuned<ReduceFastPolicy>(d);
  t.tree_block = block_size(d, tuned<ReduceTreePolicy>(d).block);
  t.serial_block = block_size(d, serial.block);
  t.serial_items = static_cast<std::size_t>(serial.items);
  t.gridstride_block = block_size(d, gridstride.block);
  t.gridstride_groups = per_cu(gridstride.blocks_per_cu);
  t.atomic_block = block_size(d, atomic.block);
  t.atomic_groups = per_cu(atomic.blocks_per_cu);
  t.fast_block = block_size(d, fast.block);
  t.fast_groups = per_cu(fast.blocks_per_cu);
  t.fast_arg_groups = per_cu(fast.arg_blocks_per_cu ? fast.arg_blocks_per_cu : fast.blocks_per_cu);
  t.fast_rows_block = block_size(d, fast.rows_block);
  t.fast_rows_groups = per_cu(std::max(fast.rows_blocks_per_cu, 1));
  t.fast_rows_grid = per_cu(fast.rows_grid_per_cu);
  t.fast_cols_block = block_size(d, fast.cols_block);
  t.fast_cols_groups = per_cu(fast.cols_blocks_per_cu);
  t.fast_small_items = fast.small_items;
  t.fast_single_block_bytes = fast.single_block_bytes;
  return t;
}

// The -D options of the ops beyond the six basic ones (fast only), after kernel_op: the nan
// forms of float input, count_nonzero, and the moment ops, which report raw Moments for a
// streamed chunk and otherwise the statistic with ddof built in (and numpy's NaN for
// n − ddof ≤ 0 when s.op is a nan form, even of integer input, whose kernel op is the plain one).
inline std::string extra_op_options(const ReduceShape& s, ReduceOp op, const char* elem,
                                    bool fp64) {
  const DType t = s.dtype;
  std::string o;
  if (const auto stat = statistic_of(op)) {
    o += " -DMOMENTS -DIDENTITY=IDENTITY_MOMENTS";
    o += op == ReduceOp::mean || op == ReduceOp::nanmean ? " -DMEAN_ONLY" : "";
    o += is_nan_reduce_op(op) ? " -DSKIP_NAN" : "";
    if (s.raw_moments) return o + " -DRES=moments -DRESULT=RESULT_RAW";
    char ddof[64];
    std::snprintf(ddof, sizeof ddof, "%.17g", s.ddof);
    return o +
           " -DRES=" + (is_float16(t) ? "double" : opencl_type_name(reduce_result_dtype(t, op))) +
           " -DRESULT=RESULT_STATISTIC -DSTATISTIC=" + std::to_string(static_cast<int>(*stat)) +
           " -DDDOF=" + ddof + (is_nan_reduce_op(s.op) ? " -DNAN_STATISTIC" : "");
  }
  if (op == ReduceOp::count_nonzero)
    return " -DACC=ulong -DRES=long -DIDENTITY=IDENTITY_SCALAR -DIDENTITY_VALUE=0"
           " -DLOAD=LOAD_NONZERO -DCOMBINE=COMBINE_SUM -DRESULT=RESULT_BITS";
  if (op == ReduceOp::any || op == ReduceOp::all)
    return std::string(
               " -DACC=uint -DRES=uchar -DIDENTITY=IDENTITY_SCALAR -DLOAD=LOAD_NONZERO"
               " -DRESULT=RESULT_CAST") +
           (op == ReduceOp::any ? " -DIDENTITY_VALUE=0 -DCOMBINE=COMBINE_OR"
                                : " -DIDENTITY_VALUE=1 -DCOMBINE=COMBINE_AND");
  if (op == ReduceOp::nansum || op == ReduceOp::nanprod) {
    const bool sum = op == ReduceOp::nansum;
    const char* acc = fp64 ? "double" : "float";
    return std::string(" -DACC=") + acc + " -DRES=" + (is_float16(t) ? acc : elem) +
           " -DIDENTITY=IDENTITY_SCALAR -DRESULT=RESULT_CAST -DIDENTITY_VALUE=" +
           (sum ? "0 -DLOAD=LOAD_NANSUM -DCOMBINE=COMBINE_SUM"
                : "1 -DLOAD=LOAD_NANPROD -DCOMBINE=COMBINE_PROD");
  }
  if (op == ReduceOp::nanmin || op == ReduceOp::nanmax)
    return std::string(" -DACC=") + elem + " -DRES=" + elem +
           " -DIDENTITY=IDENTITY_SCALAR -DLOAD=LOAD_SCALAR -DRESULT=RESULT_CAST "
           "-DIDENTITY_VALUE=NAN" +
           (op == ReduceOp::nanmin ? " -DCOMBINE=COMBINE_NANMIN" : " -DCOMBINE=COMBINE_NANMAX");
  // nanargmin, nanargmax
  return std::string(" -DARG_OP -DNAN_ARG -DRES=") + elem +
         " -DIDENTITY=IDENTITY_ARG -DLOAD=LOAD_NANARG -DRESULT=RESULT_ARG -DIDENTITY_VALUE=NAN" +
         (op == ReduceOp::nanargmin ? " -DCOMBINE=COMBINE_NANARGMIN -DARG_MIN"
                                    : " -DCOMBINE=COMBINE_NANARGMAX");
}

// The -D options of the program for (dtype, op) on `device`: the same for every variant.
inline std::string build_options(const ReduceShape& s, const DeviceInfo& device) {
  const DType t = s.dtype;
  const ReduceOp op = kernel_op(t, s.op);
  const char* elem = is_float16(t) ? "float" : opencl_type_name(t);
  bool fp64 = device.fp64;
  std::string o =
      std::string("-DELEM=") + elem + " -DVW=" + std::to_string(kVectorBytes / dtype_size(t));
  if (!is_float(t)) o += " -DINTEGER_INPUT";
  if (is_float16(t)) {
    const char* kind = t == DType::float16 ? "FLOAT16" : "BFLOAT16";
    o += std::string(" -D") + kind + "_INPUT";
    if (reduce_result_dtype(t, s.op) == t && !(statistic_of(op) && s.raw_moments))
      o += std::string(" -D") + kind + "_RESULT";
  }
  const bool wide = is_sum_or_prod(op) || op == ReduceOp::nansum || op == ReduceOp::nanprod;
  if (t == DType::float64 || (is_float(t) && wide && fp64) || statistic_of(op)) o += " -DUSE_FP64";
  if (!is_basic_reduce_op(op)) {
    o += extra_op_options(s, op, elem, fp64);
  } else if (is_arg_op(op)) {
    o += " -DARG_OP -DRES=" + std::string(elem) + " -DIDENTITY=IDENTITY_ARG -DLOAD=LOAD_ARG" +
         " -DRESULT=RESULT_ARG -DIDENTITY_VALUE=" +
         (op == ReduceOp::argmin ? highest(t) : lowest(t)) +
         (op == ReduceOp::argmin ? " -DCOMBINE=COMBINE_ARGMIN -DARG_MIN"
                                 : " -DCOMBINE=COMBINE_ARGMAX");
  } else if (is_sum_or_prod(op)) {
    std::string acc = is_float(t) ? (fp64 ? "double" : "float") : "ulong";
    std::string res = is_float16(t)          ? acc
                      : is_float(t)          ? elem
                      : is_signed_integer(t) ? "long"
                                             : "ulong";
    o += " -DACC=" + acc + " -DRES=" + res + " -DIDENTITY=IDENTITY_SCALAR -DLOAD=LOAD_SCALAR" +
         (op == ReduceOp::sum ? " -DIDENTITY_VALUE=0 -DCOMBINE=COMBINE_SUM"
                              : " -DIDENTITY_VALUE=1 -DCOMBINE=COMBINE_PROD") +
         (res == "long" ? " -DRESULT=RESULT_BITS" : " -DRESULT=RESULT_CAST");
    if (dtype_size(t) <= 2 && !is_float(t) && op == ReduceOp::sum)
      o += is_signed_integer(t) ? " -DPRESUM=int" : " -DPRESUM=uint";
  } else {
    o += std::string(" -DACC=") + elem + " -DRES=" + elem +
         " -DIDENTITY=IDENTITY_SCALAR -DLOAD=LOAD_SCALAR -DRESULT=RESULT_CAST -DIDENTITY_VALUE=" +
         (op == ReduceOp::min ? highest(t) : lowest(t)) +
         (op == ReduceOp::min ? " -DCOMBINE=COMBINE_MIN -DEXTREME_MIN"
                              : " -DCOMBINE=COMBINE_MAX -DEXTREME_MAX");
  }
  if (atomic_fits(t, op, device)) {
    if (acc_bytes(t, op, device) == 8)
      o += " -DACC_BITS=ulong -DATOMIC_64";
    else
      o += " -DACC_BITS=uint";
  }
  Tunables k = tunables(device);
  o += " -DTREE_BLOCK=" + std::to_string(k.tree_block) +
       " -DSERIAL_BLOCK=" + std::to_string(k.serial_block) +
       " -DSERIAL_ITEMS=" + std::to_string(k.serial_items) +
       " -DGRIDSTRIDE_BLOCK=" + std::to_string(k.gridstride_block) +
       " -DATOMIC_BLOCK=" + std::to_string(k.atomic_block) +
       " -DFAST_BLOCK=" + std::to_string(k.fast_block) +
       " -DFAST_ROWS_BLOCK=" + std::to_string(k.fast_rows_block) +
       " -DFAST_COLS_BLOCK=" + std::to_string(k.fast_cols_block);
  return o;
}

}  // namespace parpat::detail::opencl_reduce
