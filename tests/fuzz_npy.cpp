// libFuzzer target for the .npy reader: any bytes must either parse into an array whose data
// is exactly shape × element size, or be refused with a parpat::Error carrying a message; never
// a crash, an overread (AddressSanitizer) or undefined behaviour (UBSan).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "parpat/error.hpp"
#include "parpat/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  try {
    parpat::HostArray a = parpat::parse_npy(bytes, size, "fuzz input");
    std::size_t elements = 1;
    for (std::int64_t d : a.shape) {
      if (d < 0) std::abort();
      elements *= static_cast<std::size_t>(d);
    }
    if (a.shape.empty() || a.shape.size() > 2) std::abort();
    if (a.data.size() != elements * parpat::dtype_size(a.dtype)) std::abort();
  } catch (const parpat::Error& e) {
    if (std::string(e.what()).empty()) std::abort();
  }
  return 0;
}
