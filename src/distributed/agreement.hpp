// How the ranks of a distributed call stay in step: after each local step every rank reports
// whether it failed (and what the call was), so that a failure or a mismatch stops every rank at
// the same point instead of leaving the others waiting in a collective.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "io/source.hpp"
#include "parpat/communicator.hpp"

namespace parpat::detail {

// One collective: when `failed` holds an exception on any rank, every rank throws the lowest
// failing rank's Error (its kind and message; call() is "collective"); else, when the ranks'
// `signature`s differ, every rank throws Error(invalid_argument) naming the first rank whose
// call differs from rank 0's.
void agree(Communicator& comm, std::exception_ptr failed, std::uint64_t signature = 0);

// Runs `step` on this rank, then agree()s with the others on its outcome and `signature`.
template <class Step>
void step_then_agree(Communicator& comm, Step&& step, std::uint64_t signature = 0) {
  std::exception_ptr failed;
  try {
    step();
  } catch (...) {
    failed = std::current_exception();
  }
  agree(comm, failed, signature);
}

// A 64-bit hash of what must be equal on every rank (the options and the input's dtype and
// shape, written as text).
std::uint64_t signature_of(const std::string& text);
// An input's part of a signature: its dtype and shape.
std::string source_signature(const SourceImpl& source);

}  // namespace parpat::detail
