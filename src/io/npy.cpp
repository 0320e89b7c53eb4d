// .npy reader and writer. The reader trusts nothing: every field of the header is checked
// against the format and against the bytes actually present before any data is copied.
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "io/source.hpp"
#include "parpat/error.hpp"
#include "parpat/io.hpp"
#include "parpat/stream.hpp"

namespace parpat {

namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw_invalid(name + ": not a valid .npy file: " + what);
}

// Finds `'key':` in the header dict and returns the text after the colon.
std::string value_of(const std::string& header, const std::string& key, const std::string& name) {
  for (const char* quote : {"'", "\""}) {
    std::string k = std::string(quote) + key + quote;
    auto pos = header.find(k);
    if (pos == std::string::npos) continue;
    pos = header.find(':', pos + k.size());
    if (pos == std::string::npos) break;
    auto start = header.find_first_not_of(" ", pos + 1);
    if (start == std::string::npos) break;
    return header.substr(start);
  }
  bad(name, "header has no '" + key + "'");
}

// numpy's descr: a byte order ('<' little, '>' big, '|' not applicable, '=' native) and a type
// code. Big-endian data is byte-swapped on the way in (SourceImpl::big_endian).
DType parse_descr(const std::string& text, const std::string& name, bool& big_endian) {
  if (text.empty() || (text[0] != '\'' && text[0] != '"')) bad(name, "descr is not a string");
  auto end = text.find(text[0], 1);
  if (end == std::string::npos) bad(name, "descr string is not closed");
  const std::string d = text.substr(1, end - 1);
  static const std::pair<const char*, DType> known[] = {
      {"b1", DType::boolean}, {"i1", DType::int8},    {"u1", DType::uint8},
      {"i2", DType::int16},   {"u2", DType::uint16},  {"i4", DType::int32},
      {"u4", DType::uint32},  {"i8", DType::int64},   {"u8", DType::uint64},
      {"f4", DType::float32}, {"f8", DType::float64}, {"f2", DType::float16}};
  if (d.size() == 3 && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '='))
    for (auto& [code, t] : known)
      if (d.compare(1, 2, code) == 0 && (d[0] != '|' || dtype_size(t) == 1)) {
        big_endian = d[0] == '>' && dtype_size(t) > 1;
        return t;
      }
  throw_invalid(name + ": unsupported dtype '" + d +
                "' (supported: bool int8 uint8 int16 uint16 int32 uint32 int64 uint64 float16 "
                "float32 float64, either byte order)");
}

// A Python tuple of non-negative integers, as numpy writes it: "()", "(16,)", "(2, 3)" (a
// trailing comma allowed, needed for one element, every other comma between two numbers).
std::vector<std::int64_t> parse_shape(const std::string& text, const std::string& name) {
  if (text.empty() || text[0] != '(') bad(name, "shape is not a tuple");
  std::vector<std::int64_t> shape;
  std::size_t i = 1;
  auto spaces = [&] {
    while (i < text.size() && text[i] == ' ')
      ++i;
  };
  bool comma = false;
  for (spaces(); i < text.size() && text[i] != ')'; spaces()) {
    if (!shape.empty() && !comma) bad(name, "shape numbers are not separated by commas");
    if (text[i] < '0' || text[i] > '9') bad(name, "shape holds a non-number");
    std::int64_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) bad(name, "dimension overflows");
      v = v * 10 + (text[i++] - '0');
    }
    if (i < text.size() && text[i] == 'L') ++i;  // Python 2 longs
    shape.push_back(v);
    spaces();
    comma = i < text.size() && text[i] == ',';
    if (comma) ++i;
  }
  if (i == text.size()) bad(name, "shape tuple is not closed");
  if (shape.size() == 1 && !comma) bad(name, "shape (n) is not a tuple (numpy writes (n,))");
  return shape;
}

}  // namespace

std::int64_t HostArray::size() const {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

namespace detail {

bool starts_with_npy_magic(const void* bytes, std::size_t size) {
  return size >= sizeof kMagic && std::memcmp(bytes, kMagic, sizeof kMagic) == 0;
}

NpyHeader read_npy_header(const std::function<void(void*, std::size_t)>& read_exact,
                          const std::string& name) {
  unsigned char prefix[12] = {};
  read_exact(prefix, 10);
  if (!starts_with_npy_magic(prefix, 10)) bad(name, "bad magic");
  int major = prefix[6];
  if (major < 1 || major > 3) bad(name, "unknown format version " + std::to_string(major));
  std::size_t header_len = prefix[8] | (prefix[9] << 8);
  std::size_t prefix_len = 10;
  if (major > 1) {
    read_exact(prefix + 10, 2);
    header_len |=
        (static_cast<std::size_t>(prefix[10]) << 16) | (static_cast<std::size_t>(prefix[11]) << 24);
    prefix_len = 12;
  }
  std::string header(header_len, '\0');
  read_exact(header.data(), header_len);
  if (header.find('{') == std::string::npos || header.find('}') == std::string::npos)
    bad(name, "header is not a dict");

  NpyHeader h;
  h.header_bytes = prefix_len + header_len;
  h.dtype = parse_descr(value_of(header, "descr", name), name, h.big_endian);
  std::string fortran = value_of(header, "fortran_order", name);
  h.fortran_order = fortran.rfind("True", 0) == 0;
  if (!h.fortran_order && fortran.rfind("False", 0) != 0)
    bad(name, "fortran_order is neither True nor False");
  h.shape = parse_shape(value_of(header, "shape", name), name);
  if (h.shape.empty())
    throw_invalid(name + ": 0-D arrays are not supported (1 or more dimensions only)");
  std::size_t item = dtype_size(h.dtype);
  std::uint64_t count = 1;
  for (auto d : h.shape) {
    if (d != 0 &&
        count > std::numeric_limits<std::uint64_t>::max() / item / static_cast<std::uint64_t>(d))
      bad(name, "shape is too large");
    count *= static_cast<std::uint64_t>(d);
  }
  h.data_bytes = count * item;
  return h;
}

void check_npy_data_size(const NpyHeader& header, std::uint64_t available,
                         const std::string& name) {
  if (header.data_bytes != available) {
    bad(name, "header promises " + std::to_string(header.data_bytes) +
                  " data bytes but the file holds " + std::to_string(available) +
                  (header.data_bytes > available ? " (truncated)" : ""));
  }
}

}  // namespace detail

HostArray parse_npy(const unsigned char* bytes, std::size_t size, const std::string& name) {
  std::size_t at = 0;
  auto read_exact = [&](void* dst, std::size_t n) {
    if (n > size - at)
      bad(name, at < 10 ? "file is too short" : "header runs past the end of the file");
    std::memcpy(dst, bytes + at, n);
    at += n;
  };
  detail::NpyHeader h = detail::read_npy_header(read_exact, name);
  detail::check_npy_data_size(h, size - h.header_bytes, name);
  HostArray a;
  a.dtype = h.dtype;
  a.shape = h.shape;
  if (h.fortran_order) {
    a.data.resize(h.data_bytes);
    detail::fortran_to_c_order(bytes + h.header_bytes, a.data.data(), h.shape, dtype_size(h.dtype));
  } else {
    a.data.assign(bytes + h.header_bytes, bytes + h.header_bytes + h.data_bytes);
  }
  if (h.big_endian) detail::swap_bytes(a.data.data(), a.data.size(), dtype_size(h.dtype));
  return a;
}

namespace {

// The whole of a source's data in host memory, read in large blocks.
HostArray read_whole(Source& source, bool must_be_npy) {
  detail::SourceImpl& s = source.impl();
  const std::string& spec = s.name;
  if (must_be_npy && s.raw) bad(spec, "bad magic");
  HostArray a;
  a.dtype = s.dtype;
  if (s.elements() >= 0) {
    a.shape = s.shape;
    a.data.resize(static_cast<std::size_t>(s.data_bytes()));
    if (!a.data.empty() && s.read_next(a.data.data(), a.data.size()) != a.data.size())
      throw Error(ErrorKind::io, spec + ": the input ended early");
    return a;
  }
  constexpr std::size_t kBlock = std::size_t{1} << 24;
  std::size_t got = 0;
  for (;;) {
    a.data.resize(got + kBlock);
    std::size_t n = s.read_next(a.data.data() + got, kBlock);
    got += n;
    if (n < kBlock) break;
  }
  a.data.resize(got);
  a.shape = {static_cast<std::int64_t>(got)};
  return a;
}

}  // namespace

HostArray read_npy(const std::string& path) {
  Source source = Source::open(path);
  return read_whole(source, true);
}

HostArray read_raw(const std::string& path) {
  Source source(detail::open_file_source(path, /*as_raw=*/true));
  return read_whole(source, false);
}

HostArray read_input(const std::string& path) {
  Source source = Source::open(path);
  return read_whole(source, false);
}

void write_npy(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
               const void* data) {
  static const char* descr[] = {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4",  "<u4",
                                "<i8", "<u8", "<f4", "<f8", "<f2", nullptr};
  if (!descr[static_cast<int>(dtype)])
    throw Error(ErrorKind::unsupported,
                std::string("numpy's .npy format has no ") + dtype_name(dtype) + " dtype");
  std::ostringstream h;
  h << "{'descr': '" << descr[static_cast<int>(dtype)] << "', 'fortran_order': False, 'shape': (";
  std::int64_t n = 1;
  for (auto d : shape) {
    h << d << ", ";
    n *= d;
  }
  if (shape.size() >= 2) {
    // numpy writes (a, b), not (a, b, )
    std::string s = h.str();
    s.erase(s.size() - 2);
    h.str(s);
    h.seekp(0, std::ios::end);
  }
  h << "), }";
  std::string header = h.str();
  std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(ErrorKind::io, "cannot write '" + path + "': " + std::strerror(errno));
  out.write(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  out.put(1);
  out.put(0);
  out.put(static_cast<char>(header.size() & 0xff));
  out.put(static_cast<char>(header.size() >> 8));
  out << header;
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n * dtype_size(dtype)));
  out.close();  // a full disk may only show when the last block is written
  if (!out) throw Error(ErrorKind::io, "cannot write '" + path + "' (disk full?)");
}

}  // namespace parpat
