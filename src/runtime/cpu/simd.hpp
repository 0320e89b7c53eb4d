// Vector lanes for the CPU kernels, written once with the GCC/Clang vector extensions. A kernel
// body is an always-inline function over these types; it is instantiated twice, in a function
// built for AVX2 (PARPAT_CPU_AVX2) and in a baseline function, and cpu_has_avx2() picks one at
// run time. The same binary therefore runs on any x86-64 and uses 256-bit lanes where they exist.
// Vectors are passed by reference only: a 32-byte vector argument or return value would change
// the calling convention between the two builds.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#define PARPAT_CPU_AVX2 __attribute__((target("avx2,fma")))
#else
#define PARPAT_CPU_AVX2
#endif
#define PARPAT_CPU_INLINE inline __attribute__((always_inline))

namespace parpat::detail::simd {

using F4 = float __attribute__((vector_size(16)));
using F8 = float __attribute__((vector_size(32)));
using D4 = double __attribute__((vector_size(32)));
using I8 = std::int32_t __attribute__((vector_size(32)));
using U8 = std::uint32_t __attribute__((vector_size(32)));
using L4 = std::int64_t __attribute__((vector_size(32)));

// Lanes of T in one 32-byte vector, and the integer vector that a comparison of two V yields.
template <class T>
struct Lanes;
template <>
struct Lanes<float> {
  using V = F8;
  using Mask = I8;
  static constexpr int kWidth = 8;
};
template <>
struct Lanes<double> {
  using V = D4;
  using Mask = L4;
  static constexpr int kWidth = 4;
};

template <class V, class T>
PARPAT_CPU_INLINE void load(V& v, const T* p) {
  std::memcpy(&v, p, sizeof v);
}

// Whether any lane of an integer vector is non-zero (one OR over its four 64-bit words).
template <class M>
PARPAT_CPU_INLINE bool any(const M& m) {
  std::uint64_t words[sizeof(M) / 8];
  std::memcpy(words, &m, sizeof words);
  std::uint64_t bits = 0;
  for (std::uint64_t w : words)
    bits |= w;
  return bits != 0;
}

// Whether the AVX2 builds run (asked once): the processor has AVX2 and FMA, and PARPAT_NO_AVX2
// is unset or 0 (tests set it to check the baseline builds on any machine).
inline bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = [] {
    const char* off = std::getenv("PARPAT_NO_AVX2");
    if (off && std::strcmp(off, "0") != 0) return false;
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace parpat::detail::simd
