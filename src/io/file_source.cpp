// Sources over file descriptors and host memory. A regular file is read with pread (from several
// threads at once, each its own range) or lent as mapped windows; a pipe, a terminal or standard
// input is read in order; host memory is lent as it is.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/source.hpp"
#include "parpat/error.hpp"

namespace parpat::detail {

namespace {

[[noreturn]] void io_error(const std::string& what) {
  throw Error(ErrorKind::io, what);
}

bool named_npy(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
}

// Reads up to `bytes` at the descriptor's position, retrying interrupted and partial reads;
// fewer only at the end of the input.
std::size_t read_fully(int fd, void* dst, std::size_t bytes, const std::string& name) {
  std::size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::read(fd, static_cast<char*>(dst) + got, bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) io_error("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

class RegularFile final : public RandomAccessSource {
 public:
  RegularFile(int fd, std::uint64_t file_bytes, const std::string& path, bool as_raw)
      : fd_(fd), file_bytes_(file_bytes) {
    name = path;
    unsigned char magic[6] = {};
    std::size_t peeked = file_bytes >= 6 ? 6 : static_cast<std::size_t>(file_bytes);
    pread_exact(magic, peeked, 0, /*data=*/false);
    if (!as_raw && (named_npy(path) || starts_with_npy_magic(magic, peeked))) {
      std::uint64_t at = 0;
      NpyHeader h = read_npy_header(
          [&](void* dst, std::size_t n) {
            if (n > file_bytes_ - at)
              throw_invalid(
                  name + ": not a valid .npy file: " +
                  (at < 10 ? "file is too short" : "header runs past the end of the file"));
            pread_exact(dst, n, at, false);
            at += n;
          },
          name);
      check_npy_data_size(h, file_bytes_ - h.header_bytes, name);
      dtype = h.dtype;
      shape = h.shape;
      big_endian = h.big_endian;
      fortran_order = h.fortran_order;
      data_offset_ = h.header_bytes;
    } else {
      raw = true;
      dtype = DType::uint8;
      shape = {static_cast<std::int64_t>(file_bytes)};
    }
  }
  ~RegularFile() override { ::close(fd_); }

  void read_at(std::uint64_t offset, void* dst, std::size_t bytes) override {
    pread_exact(dst, bytes, data_offset_ + offset, true);
  }

  // Maps the window read-only and faults its pages in at once (MAP_POPULATE), so the kernels
  // that read it never stop on a page fault.
  const void* map(std::uint64_t offset, std::size_t bytes, std::shared_ptr<void>& keep) override {
    if (bytes == 0) return nullptr;
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < file_bytes_)
      io_error(name + ": the file shrank while it was read");
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    std::uint64_t begin = data_offset_ + offset;
    std::uint64_t aligned = begin / page * page;
    std::size_t length = static_cast<std::size_t>(begin - aligned) + bytes;
    void* p = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_,
                     static_cast<off_t>(aligned));
    if (p == MAP_FAILED) return nullptr;  // the caller reads instead
    keep = std::shared_ptr<void>(p, [length](void* q) { ::munmap(q, length); });
    return static_cast<const char*>(p) + (begin - aligned);
  }

 private:
  void pread_exact(void* dst, std::size_t bytes, std::uint64_t at, bool data) {
    std::size_t got = 0;
    while (got < bytes) {
      ssize_t n =
          ::pread(fd_, static_cast<char*>(dst) + got, bytes - got, static_cast<off_t>(at + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) io_error("cannot read " + name + ": " + std::strerror(errno));
      if (n == 0)
        io_error(name + (data ? ": the file shrank while it was read (" : ": file ended early (") +
                 std::to_string(bytes - got) + " bytes missing)");
      got += static_cast<std::size_t>(n);
    }
  }

  int fd_;
  std::uint64_t file_bytes_;
  std::uint64_t data_offset_ = 0;
};

// A pipe, a terminal or standard input: read once, in order. An .npy stream must hold exactly
// the bytes its header promises; raw bytes run to the end of the input.
class PipeStream final : public SourceImpl {
 public:
  PipeStream(int fd, bool owned, const std::string& label) : fd_(fd), owned_(owned) {
    name = label;
    unsigned char magic[10] = {};
    std::size_t peeked = read_fully(fd_, magic, 6, name);
    if (starts_with_npy_magic(magic, peeked)) {
      std::size_t at = 0;
      NpyHeader h = read_npy_header(
          [&](void* dst, std::size_t n) {
            std::size_t from_magic = at < 6 ? std::min<std::size_t>(6 - at, n) : 0;
            std::memcpy(dst, magic + at, from_magic);
            std::size_t rest = n - from_magic;
            if (read_fully(fd_, static_cast<char*>(dst) + from_magic, rest, name) != rest)
              throw_invalid(name + ": not a valid .npy file: the input ended inside the header");
            at += n;
          },
          name);
      dtype = h.dtype;
      shape = h.shape;
      big_endian = h.big_endian;
      fortran_order = h.fortran_order;
      left_ = h.data_bytes;
    } else {
      raw = true;
      dtype = DType::uint8;
      shape = {-1};
      pending_.assign(magic, magic + peeked);
    }
  }
  ~PipeStream() override {
    if (owned_) ::close(fd_);
  }

  std::size_t read_next(void* dst, std::size_t bytes) override {
    auto* out = static_cast<unsigned char*>(dst);
    std::size_t from_pending = std::min(bytes, pending_.size());
    if (from_pending > 0) std::memcpy(out, pending_.data(), from_pending);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(from_pending));
    if (raw) return from_pending + read_fully(fd_, out + from_pending, bytes - from_pending, name);
    std::size_t want = bytes < left_ ? bytes : static_cast<std::size_t>(left_);
    std::size_t got = read_fully(fd_, out, want, name);
    left_ -= got;
    if (got < want)
      io_error(name + ": the input ended early (" + std::to_string(left_) + " data bytes missing)");
    if (left_ == 0) {
      unsigned char extra;
      if (read_fully(fd_, &extra, 1, name) != 0)
        throw_invalid(name + ": not a valid .npy file: more data than the header promises");
    }
    return got;
  }

  bool rewind() override { return false; }

 private:
  int fd_;
  bool owned_;
  std::uint64_t left_ = 0;
  std::vector<unsigned char> pending_;  // raw bytes read while looking for the magic
};

class HostMemory final : public RandomAccessSource {
 public:
  HostMemory(DType t, std::vector<std::int64_t> s, const void* data)
      : data_(static_cast<const unsigned char*>(data)) {
    name = "host memory";
    dtype = t;
    shape = std::move(s);
  }
  void read_at(std::uint64_t offset, void* dst, std::size_t bytes) override {
    std::memcpy(dst, data_ + offset, bytes);
  }
  const void* map(std::uint64_t offset, std::size_t, std::shared_ptr<void>&) override {
    return data_ + offset;
  }

 private:
  const unsigned char* data_;
};

}  // namespace

std::shared_ptr<SourceImpl> open_file_source(const std::string& path, bool as_raw) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    io_error("cannot read '" + path + "': " + std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw_invalid("'" + path + "' is a directory, not a file");
  }
  if (!S_ISREG(st.st_mode)) return std::make_shared<PipeStream>(fd, true, path);
  try {
    return std::make_shared<RegularFile>(fd, static_cast<std::uint64_t>(st.st_size), path, as_raw);
  } catch (...) {
    // RegularFile's destructor closes fd only once constructed.
    ::close(fd);
    throw;
  }
}

std::shared_ptr<SourceImpl> open_stdin_source() {
  struct stat st {};
  if (::fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
    // `parpat reduce - < file`: a regular file behind the descriptor reads like any other.
    int fd = ::dup(STDIN_FILENO);
    if (fd >= 0) {
      try {
        return std::make_shared<RegularFile>(fd, static_cast<std::uint64_t>(st.st_size),
                                             "standard input", false);
      } catch (...) {
        ::close(fd);
        throw;
      }
    }
  }
  return std::make_shared<PipeStream>(STDIN_FILENO, false, "standard input");
}

std::shared_ptr<SourceImpl> open_host_source(DType dtype, std::vector<std::int64_t> shape,
                                             const void* data) {
  return std::make_shared<HostMemory>(dtype, std::move(shape), data);
}

}  // namespace parpat::detail
