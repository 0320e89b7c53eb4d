// parpat/io.hpp — reading and writing .npy files and raw byte files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parpat/dtype.hpp"

namespace parpat {

// An array in host memory, C order, elements packed (row stride = cols).
struct HostArray {
  DType dtype = DType::uint8;
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> data;

  std::int64_t size() const;
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(data.data());
  }
};

// Reads a .npy file (format versions 1–3, either byte order, C or Fortran order — the array comes
// back in C order — one or more dimensions, dtypes bool int8 uint8 int16 uint16 int32 uint32
// int64 uint64 float16 float32 float64). Throws Error(io) when the file is missing or unreadable
// and Error(invalid_argument) with one clear sentence for anything malformed: bad magic, a header
// that does not parse, a size that does not match the data, an unsupported dtype, or a 0-D
// shape.
HostArray read_npy(const std::string& path);
// Reads any file as a 1-D uint8 array of its bytes (an .npy file too).
HostArray read_raw(const std::string& path);
// Any input Source::open takes (FILE, FILE.npz[:NAME], - for standard input): .npy by name or
// magic, anything else as raw bytes.
HostArray read_input(const std::string& path);
// Parses .npy bytes already in memory (what read_npy does after reading the file).
HostArray parse_npy(const unsigned char* bytes, std::size_t size, const std::string& name);

// Writes a version 1.0 .npy file (Error(unsupported) for bfloat16, which .npy cannot name).
void write_npy(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
               const void* data);

}  // namespace parpat
