// parpat/error.hpp — the one exception type of the library.
#pragma once

#include <stdexcept>
#include <string>

namespace parpat {

// What went wrong, in the caller's terms. `invalid_argument` and `unsupported` are the caller's
// doing (bad input, a variant a backend lacks); `backend` is a failing driver call; `io` a file.
enum class ErrorKind { invalid_argument, unsupported, io, backend };

// Every failure inside parpat throws this. It carries the backend ("cpu", "cuda", "opencl" or
// "" when none is involved), the call that failed (e.g. "cudaMalloc", "clBuildProgram") and the
// backend's numeric code, so a message can always be traced to its source.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string backend = {}, std::string call = {},
        int code = 0);

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& backend() const noexcept { return backend_; }
  const std::string& call() const noexcept { return call_; }
  int code() const noexcept { return code_; }

 private:
  ErrorKind kind_;
  std::string backend_;
  std::string call_;
  int code_;
};

// Shorthand for the common case of rejecting the caller's input.
[[noreturn]] void throw_invalid(const std::string& message);

}  // namespace parpat
