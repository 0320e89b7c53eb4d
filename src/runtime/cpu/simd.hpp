// Vector lanes for the CPU kernels, written once with the GCC/Clang vector extensions. A kernel
// body is an always-inline function template over the vector width; it is instantiated twice, at
// 32 bytes in a function built for AVX2 (PARPAT_CPU_AVX2) and at 16 bytes in a baseline function,
// and cpu_has_avx2() picks one at run time. The same binary therefore runs on any x86-64 and uses
// 256-bit lanes where they exist.
// Vectors are passed by reference only: a 32-byte vector argument or return value would change
// the calling convention between the two builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#define PARPAT_CPU_AVX2 __attribute__((target("avx2,fma")))
#else
#define PARPAT_CPU_AVX2
#endif
#define PARPAT_CPU_INLINE inline __attribute__((always_inline))

namespace parpat::detail::simd {

// Vector widths of the two builds: AVX2 registers, and the SSE2 registers every x86-64 has.
constexpr int kAvx2Bytes = 32, kBaselineBytes = 16;

template <class T, int kBytes>
struct VectorOf {
  typedef T type __attribute__((vector_size(kBytes)));
};
// kBytes / sizeof(T) lanes of T.
template <class T, int kBytes>
using Vec = typename VectorOf<T, kBytes>::type;

// Lanes of T in a kBytes vector, and the integer vector that a comparison of two of them yields.
template <class T, int kBytes>
struct Lanes {
  using V = Vec<T, kBytes>;
  using Mask = Vec<std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>, kBytes>;
  static constexpr int kWidth = kBytes / sizeof(T);
};

template <class V, class T>
PARPAT_CPU_INLINE void load(V& v, const T* p) {
  std::memcpy(&v, p, sizeof v);
}

// Every lane of v set to x (a broadcast; 0 + x would turn −0.0 into +0.0).
template <class V, class T>
PARPAT_CPU_INLINE void splat(V& v, T x) {
  for (std::size_t j = 0; j < sizeof(V) / sizeof(T); ++j)
    v[j] = x;
}

// Whether any lane of an integer vector is non-zero (one OR over its 64-bit words).
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
