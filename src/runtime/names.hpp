// Enums named by a table of lower-case words (dtypes, backends, ops, axes): the name of a value
// and the value of a name, with one error text that lists the words a name may be.
#pragma once

#include <cstddef>
#include <string>

#include "parpat/error.hpp"

namespace parpat::detail {

// "a, b or c"
template <std::size_t N>
std::string word_list(const char* const (&words)[N]) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i)
    out += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + words[i];
  return out;
}

// The enum value whose word is `name`; Error(invalid_argument) "unknown WHAT 'name' (expected
// ...)" otherwise. The enum's values are 0, 1, ... in the order of `words`.
template <class Enum, std::size_t N>
Enum parse_word(const char* const (&words)[N], const std::string& name, const char* what) {
  for (std::size_t i = 0; i < N; ++i)
    if (name == words[i]) return static_cast<Enum>(i);
  throw_invalid("unknown " + std::string(what) + " '" + name + "' (expected " + word_list(words) +
                ")");
}

}  // namespace parpat::detail
