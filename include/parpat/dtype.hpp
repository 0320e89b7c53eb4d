// parpat/dtype.hpp — element types, named as numpy names them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "parpat/float16.hpp"

namespace parpat {

// numpy's numeric types; `boolean` is numpy's bool (one byte, 0 or 1); float16 is IEEE binary16
// and bfloat16 the 16-bit float of ml_dtypes, torch and DLPack (parpat/float16.hpp).
enum class DType {
  boolean,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float32,
  float64,
  float16,
  bfloat16
};

std::size_t dtype_size(DType t);
const char* dtype_name(DType t);             // "bool", "uint8", "float32", ...
DType parse_dtype(const std::string& name);  // throws Error(invalid_argument) when unknown
bool is_float(DType t);                      // float16, bfloat16, float32, float64
bool is_signed_integer(DType t);

// Maps a C++ element type to its DType at compile time.
template <class T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::boolean;
};
template <>
struct dtype_of<std::int8_t> {
  static constexpr DType value = DType::int8;
};
template <>
struct dtype_of<std::int16_t> {
  static constexpr DType value = DType::int16;
};
template <>
struct dtype_of<std::uint8_t> {
  static constexpr DType value = DType::uint8;
};
template <>
struct dtype_of<std::uint16_t> {
  static constexpr DType value = DType::uint16;
};
template <>
struct dtype_of<std::int32_t> {
  static constexpr DType value = DType::int32;
};
template <>
struct dtype_of<std::uint32_t> {
  static constexpr DType value = DType::uint32;
};
template <>
struct dtype_of<std::int64_t> {
  static constexpr DType value = DType::int64;
};
template <>
struct dtype_of<std::uint64_t> {
  static constexpr DType value = DType::uint64;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::float32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::float64;
};
template <>
struct dtype_of<float16> {
  static constexpr DType value = DType::float16;
};
template <>
struct dtype_of<bfloat16> {
  static constexpr DType value = DType::bfloat16;
};

// Calls f(T{}) with the C++ type of `t`; the generic lambda picks its instantiation from it.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::boolean:
      return f(bool{});
    case DType::int8:
      return f(std::int8_t{});
    case DType::uint8:
      return f(std::uint8_t{});
    case DType::int16:
      return f(std::int16_t{});
    case DType::uint16:
      return f(std::uint16_t{});
    case DType::int32:
      return f(std::int32_t{});
    case DType::uint32:
      return f(std::uint32_t{});
    case DType::int64:
      return f(std::int64_t{});
    case DType::uint64:
      return f(std::uint64_t{});
    case DType::float32:
      return f(float{});
    case DType::float16:
      return f(float16{});
    case DType::bfloat16:
      return f(bfloat16{});
    case DType::float64:
      break;
  }
  return f(double{});
}

}  // namespace parpat
