// parpat/float16.hpp — the 16-bit floats: IEEE binary16 (numpy's float16) and bfloat16 (the
// upper half of a float32, as ml_dtypes, torch and DLPack define it), held as their bits.
// Widening to float or double is exact; narrowing from double rounds once, to nearest even,
// overflowing to ±inf, NaN staying NaN. Usable in CUDA device code as well.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define PARPAT_HOST_DEVICE __host__ __device__
#else
#define PARPAT_HOST_DEVICE
#endif

namespace parpat {

namespace detail {

PARPAT_HOST_DEVICE inline std::uint64_t bits_of_double(double v) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(v));
#else
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
#endif
}

PARPAT_HOST_DEVICE inline float float_of_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
#endif
}

// The bits of a binary float of kExpBits exponent and kMantBits fraction bits (1 + kExpBits +
// kMantBits = 16) nearest to v, ties to even.
template <int kExpBits, int kMantBits>
PARPAT_HOST_DEVICE std::uint16_t round_to_bits16(double v) {
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  constexpr std::uint32_t kInf = ((1u << kExpBits) - 1) << kMantBits;
  const std::uint64_t bits = bits_of_double(v);
  const auto sign = static_cast<std::uint32_t>(bits >> 48) & 0x8000u;
  const int exp = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t frac = bits & ((std::uint64_t(1) << 52) - 1);
  if (exp == 0x7ff)
    return static_cast<std::uint16_t>(sign | kInf | (frac ? 1u << (kMantBits - 1) : 0));
  const int e = exp - 1023;  // double subnormals are far below every 16-bit float's range
  if (exp == 0 || e < 1 - kBias - kMantBits - 1) return static_cast<std::uint16_t>(sign);
  if (e > kBias) return static_cast<std::uint16_t>(sign | kInf);
  const std::uint64_t significand = frac | (std::uint64_t(1) << 52);
  // Normal results keep kMantBits fraction bits; subnormal ones shift further right, by how far e
  // lies below the smallest normal exponent, and carry no implicit bit.
  const int shift = 52 - kMantBits + (e < 1 - kBias ? 1 - kBias - e : 0);
  const std::uint64_t kept = significand >> shift;
  const std::uint64_t rest = significand & ((std::uint64_t(1) << shift) - 1);
  const std::uint64_t half = std::uint64_t(1) << (shift - 1);
  const std::uint32_t up = rest > half || (rest == half && (kept & 1)) ? 1 : 0;
  // A carry out of the fraction moves into the exponent (up to inf), as the encoding intends.
  const std::uint32_t magnitude =
      e < 1 - kBias ? static_cast<std::uint32_t>(kept) + up
                    : (static_cast<std::uint32_t>(e + kBias) << kMantBits) +
                          (static_cast<std::uint32_t>(kept) & ((1u << kMantBits) - 1)) + up;
  return static_cast<std::uint16_t>(sign | magnitude);
}

// binary16 bits → float (exact).
PARPAT_HOST_DEVICE inline float float16_bits_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  // The conversion unit: one instruction, exact for every binary16 (subnormals included).
  float v;
  asm("cvt.f32.f16 %0, %1;" : "=f"(v) : "h"(h));
  return v;
#else
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, frac = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: frac · 2^-24, exact in float
    const float magnitude = static_cast<float>(frac) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  const std::uint32_t magnitude =
      exp == 0x1f ? 0x7f800000u | (frac << 13) : ((exp + 112) << 23) | (frac << 13);
  return float_of_bits(sign | magnitude);
#endif
}

}  // namespace detail

// IEEE binary16, numpy's float16.
struct float16 {
  std::uint16_t bits = 0;

  constexpr float16() = default;
  PARPAT_HOST_DEVICE explicit float16(double v) : bits(detail::round_to_bits16<5, 10>(v)) {}
  PARPAT_HOST_DEVICE explicit operator float() const { return detail::float16_bits_to_float(bits); }
  PARPAT_HOST_DEVICE explicit operator double() const { return static_cast<float>(*this); }
  static constexpr float16 from_bits(std::uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
};

// bfloat16: a float32's sign, exponent and top 7 fraction bits.
struct bfloat16 {
  std::uint16_t bits = 0;

  constexpr bfloat16() = default;
  PARPAT_HOST_DEVICE explicit bfloat16(double v) : bits(detail::round_to_bits16<8, 7>(v)) {}
  PARPAT_HOST_DEVICE explicit operator float() const {
    return detail::float_of_bits(static_cast<std::uint32_t>(bits) << 16);
  }
  PARPAT_HOST_DEVICE explicit operator double() const { return static_cast<float>(*this); }
  static constexpr bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

// Whether T is one of the 16-bit floats above; is_float_type: those or a C++ floating type.
template <class T>
inline constexpr bool is_float16_type = false;
template <>
inline constexpr bool is_float16_type<float16> = true;
template <>
inline constexpr bool is_float16_type<bfloat16> = true;
template <class T>
inline constexpr bool is_float_type = std::is_floating_point_v<T> || is_float16_type<T>;

}  // namespace parpat
