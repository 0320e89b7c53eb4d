// Sources: where a stream's bytes come from (a file, standard input, an .npz member, host memory)
// behind one interface, so the chunk pipeline reads them all alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "parpat/dtype.hpp"

namespace parpat::detail {

class SourceImpl {
 public:
  virtual ~SourceImpl() = default;

  DType dtype = DType::uint8;
  std::vector<std::int64_t> shape;  // {-1} for raw bytes of unknown length
  std::string name;
  bool raw = false;
  // The data bytes are big-endian (an .npy file saved with '>'); Source::open reads such a
  // source through open_byteswapped_source, which hands the bytes on in this machine's order.
  bool big_endian = false;
  // The data is in Fortran order (an .npy file saved with fortran_order True, `shape` as numpy
  // gives it); Source::open reads such a source through open_c_order_source.
  bool fortran_order = false;

  std::int64_t elements() const;  // −1 while unknown
  // Data bytes, when elements() is known.
  std::uint64_t data_bytes() const {
    return static_cast<std::uint64_t>(elements()) * dtype_size(dtype);
  }

  // Whether read_at() works (regular files, host memory); it may then be called from several
  // threads at once.
  virtual bool random_access() const { return false; }
  // Reads data bytes [offset, offset + bytes) exactly, or throws Error(io) naming the source (a
  // file that shrank while being read, say).
  virtual void read_at(std::uint64_t offset, void* dst, std::size_t bytes);
  // Reads the next data bytes in order; fewer than asked only at the end of the input.
  virtual std::size_t read_next(void* dst, std::size_t bytes) = 0;
  // Whether rewind() can start a second pass.
  virtual bool rereadable() const { return random_access(); }
  // Starts again at the first data byte (a second pass); false when the source cannot.
  virtual bool rewind() = 0;
  // A pointer to data bytes [offset, offset + bytes) without a copy, valid while `keep` lives, or
  // null when this source cannot lend its bytes (pipes, compressed members).
  virtual const void* map(std::uint64_t offset, std::size_t bytes, std::shared_ptr<void>& keep);
};

// A source whose bytes can be read at any offset (a regular file, host memory, a rank's share):
// read_next() and rewind() walk a cursor over read_at().
class RandomAccessSource : public SourceImpl {
 public:
  bool random_access() const override { return true; }
  void read_at(std::uint64_t offset, void* dst, std::size_t bytes) override = 0;
  std::size_t read_next(void* dst, std::size_t bytes) override;
  bool rewind() override {
    cursor_ = 0;
    return true;
  }

 private:
  std::uint64_t cursor_ = 0;  // the next data byte read_next() reads
};

// `inner`'s bytes with every item's bytes reversed: a big-endian source read on a little-endian
// machine. Reads must start and end on whole items (the pipeline's always do); it lends no
// mapped bytes.
std::shared_ptr<SourceImpl> open_byteswapped_source(std::shared_ptr<SourceImpl> inner);
// Reverses the bytes of each `item`-byte element of `data` in place.
void swap_bytes(void* data, std::size_t bytes, std::size_t item);

// `inner` (in Fortran order) read whole into host memory and put in C order: every pattern reads
// it as it reads any C-order array. Costs the array's size in host memory and one pass over it.
std::shared_ptr<SourceImpl> open_c_order_source(std::shared_ptr<SourceImpl> inner);
// Writes the array `fortran` of `shape` (Fortran order, `item`-byte elements) into `c` in C
// order.
void fortran_to_c_order(const unsigned char* fortran, unsigned char* c,
                        const std::vector<std::int64_t>& shape, std::size_t item);

// A path: a regular file (random access, mapped windows) or a pipe or device read in order.
// `as_raw` reads an .npy file as its bytes.
std::shared_ptr<SourceImpl> open_file_source(const std::string& path, bool as_raw = false);
std::shared_ptr<SourceImpl> open_stdin_source();
std::shared_ptr<SourceImpl> open_npz_source(const std::string& path, const std::string& member);
std::shared_ptr<SourceImpl> open_host_source(DType dtype, std::vector<std::int64_t> shape,
                                             const void* data);

// What an .npy header says. `read_exact(dst, n)` supplies the file's first bytes in order and
// throws when fewer than n remain.
struct NpyHeader {
  DType dtype = DType::uint8;
  std::vector<std::int64_t> shape;
  std::size_t header_bytes = 0;  // magic, version, length and dict: where the data starts
  std::uint64_t data_bytes = 0;  // what the shape promises
  bool big_endian = false;       // the descr's byte order is '>' (items wider than one byte)
  bool fortran_order = false;    // the data is in Fortran order
};
NpyHeader read_npy_header(const std::function<void(void*, std::size_t)>& read_exact,
                          const std::string& name);
bool starts_with_npy_magic(const void* bytes, std::size_t size);
// The size check every reader makes: the data present must be what the header promises.
void check_npy_data_size(const NpyHeader& header, std::uint64_t available, const std::string& name);

}  // namespace parpat::detail

namespace parpat::detail {

// Elements [first, first + Π shape) of `whole` (which must allow random access and outlive it)
// as a source of shape `shape`: one rank's share of a distributed input.
std::shared_ptr<SourceImpl> open_share_source(SourceImpl& whole, std::int64_t first,
                                              std::vector<std::int64_t> shape);

}  // namespace parpat::detail
