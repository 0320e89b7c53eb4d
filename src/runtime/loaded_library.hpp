// Shared libraries loaded on first use (NVRTC, NCCL), so binaries start on machines without
// them and nothing links them: a table of the library's functions, filled from the first of a
// list of file names that dlopen opens.
//
//   #define FOO_FUNCTIONS(X) X(fooInit) X(fooRun)
//   struct Foo { FOO_FUNCTIONS(PARPAT_LIBRARY_MEMBER) std::string missing; };
//   void* lib = open_first_library({"libfoo.so.1"});
//   #define FOO_BIND(name) bind_function(lib, #name, foo.name, foo.missing, "libfoo");
//   FOO_FUNCTIONS(FOO_BIND)
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

namespace parpat::detail {

// The handle of the first of `names` that dlopen opens (RTLD_NOW | RTLD_LOCAL), or nullptr.
inline void* open_first_library(const std::vector<std::string>& names) {
  for (const auto& name : names)
    if (void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
  return nullptr;
}

// Sets `function` to `lib`'s symbol `name`; a missing one is recorded in `missing` (the first
// only) as "`library` lacks NAME".
template <class Function>
void bind_function(void* lib, const char* name, Function& function, std::string& missing,
                   const char* library) {
  function = reinterpret_cast<Function>(dlsym(lib, name));
  if (!function && missing.empty()) missing = std::string(library) + " lacks " + name;
}

}  // namespace parpat::detail

// A member of the function table: a pointer of the function's own type.
#define PARPAT_LIBRARY_MEMBER(name) decltype(&::name) name = nullptr;
