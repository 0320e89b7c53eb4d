// .npz archives (numpy.savez / savez_compressed): a zip file of .npy members, stored or
// deflated. A member is streamed through libzip, which inflates it and checks its CRC at the
// end. libzip is loaded on the first .npz (dlopen of libzip.so.4, Debian's libzip4), so the
// library and the CLI need it only when an archive is read.
#include "io/source.hpp"
#include "parpat/error.hpp"

#ifdef PARPAT_HAVE_LIBZIP_HEADERS
#include <dlfcn.h>
#include <zip.h>

#include <mutex>
#endif

namespace parpat::detail {

#ifndef PARPAT_HAVE_LIBZIP_HEADERS

std::shared_ptr<SourceImpl> open_npz_source(const std::string& path, const std::string&) {
  throw Error(ErrorKind::unsupported,
              path + ": this build reads no .npz archives (built without libzip's headers)");
}

#else

namespace {

// The libzip calls parpat makes, resolved once.
struct Libzip {
  decltype(&zip_open) open = nullptr;
  decltype(&zip_close) close = nullptr;
  decltype(&zip_discard) discard = nullptr;
  decltype(&zip_get_num_entries) num_entries = nullptr;
  decltype(&zip_get_name) get_name = nullptr;
  decltype(&zip_stat_index) stat_index = nullptr;
  decltype(&zip_fopen_index) fopen_index = nullptr;
  decltype(&zip_fread) fread = nullptr;
  decltype(&zip_fclose) fclose = nullptr;
  decltype(&zip_file_strerror) file_strerror = nullptr;
  decltype(&zip_strerror) strerror = nullptr;
  decltype(&zip_error_init_with_code) error_init_with_code = nullptr;
  decltype(&zip_error_strerror) error_strerror = nullptr;
  decltype(&zip_error_fini) error_fini = nullptr;
};

const Libzip& libzip() {
  static Libzip lib;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = dlopen("libzip.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!handle) handle = dlopen("libzip.so", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      failure = "reading .npz needs libzip (libzip.so.4; Debian: apt-get install libzip4)";
      return;
    }
    auto bind = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)> >(dlsym(handle, name));
      if (!fn) failure = std::string("libzip lacks ") + name;
    };
    bind(lib.open, "zip_open");
    bind(lib.close, "zip_close");
    bind(lib.discard, "zip_discard");
    bind(lib.num_entries, "zip_get_num_entries");
    bind(lib.get_name, "zip_get_name");
    bind(lib.stat_index, "zip_stat_index");
    bind(lib.fopen_index, "zip_fopen_index");
    bind(lib.fread, "zip_fread");
    bind(lib.fclose, "zip_fclose");
    bind(lib.file_strerror, "zip_file_strerror");
    bind(lib.strerror, "zip_strerror");
    bind(lib.error_init_with_code, "zip_error_init_with_code");
    bind(lib.error_strerror, "zip_error_strerror");
    bind(lib.error_fini, "zip_error_fini");
  });
  if (!failure.empty()) throw Error(ErrorKind::unsupported, failure);
  return lib;
}

class NpzMember final : public SourceImpl {
 public:
  NpzMember(const std::string& path, const std::string& wanted) : lib_(libzip()) {
    int code = 0;
    archive_ = lib_.open(path.c_str(), ZIP_RDONLY, &code);
    if (!archive_) {
      zip_error_t error;
      lib_.error_init_with_code(&error, code);
      std::string why = lib_.error_strerror(&error);
      lib_.error_fini(&error);
      if (code == ZIP_ER_OPEN || code == ZIP_ER_READ || code == ZIP_ER_NOENT)
        throw Error(ErrorKind::io, "cannot open '" + path + "': " + why);
      throw_invalid(path + ": not a valid .npz archive: " + why);
    }
    try {
      index_ = find_member(path, wanted);
      zip_stat_t st;
      if (lib_.stat_index(archive_, index_, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        throw_invalid(name + ": not a valid .npz member: " + lib_.strerror(archive_));
      member_bytes_ = st.size;
      open_member();
      std::uint64_t at = 0;
      NpyHeader h = read_npy_header(
          [&](void* dst, std::size_t n) {
            if (fread_all(dst, n) != n)
              throw_invalid(name + ": not a valid .npy file: " +
                            (at < 10 ? "member is too short" : "header runs past its end"));
            at += n;
          },
          name);
      check_npy_data_size(h, member_bytes_ - h.header_bytes, name);
      dtype = h.dtype;
      shape = h.shape;
      big_endian = h.big_endian;
      fortran_order = h.fortran_order;
      header_bytes_ = h.header_bytes;
    } catch (...) {
      close_all();
      throw;
    }
  }
  ~NpzMember() override { close_all(); }

  bool rereadable() const override { return true; }

  std::size_t read_next(void* dst, std::size_t bytes) override {
    std::size_t got = fread_all(dst, bytes);
    if (got < bytes && read_ + got < data_bytes())
      throw Error(ErrorKind::io, name + ": the member ended early");
    read_ += got;
    if (read_ == data_bytes()) {
      // libzip checks the member's CRC when a read reaches its end.
      unsigned char extra;
      if (fread_all(&extra, 1) != 0)
        throw_invalid(name + ": corrupt .npz member: data past its end");
    }
    return got;
  }

  bool rewind() override {
    lib_.fclose(file_);
    file_ = nullptr;
    open_member();
    std::vector<unsigned char> header(header_bytes_);
    if (fread_all(header.data(), header.size()) != header.size())
      throw Error(ErrorKind::io, name + ": the member ended early");
    read_ = 0;
    return true;
  }

 private:
  zip_uint64_t find_member(const std::string& path, const std::string& wanted) {
    zip_int64_t count = lib_.num_entries(archive_, 0);
    std::vector<std::string> names;
    for (zip_int64_t i = 0; i < count; ++i) {
      const char* n = lib_.get_name(archive_, static_cast<zip_uint64_t>(i), 0);
      names.emplace_back(n ? n : "");
    }
    auto stem = [](const std::string& n) {
      return n.size() > 4 && n.compare(n.size() - 4, 4, ".npy") == 0 ? n.substr(0, n.size() - 4)
                                                                     : n;
    };
    std::string listed;
    for (const auto& n : names)
      listed += (listed.empty() ? "" : ", ") + stem(n);
    if (wanted.empty()) {
      if (names.size() != 1)
        throw_invalid(path + " holds " + std::to_string(names.size()) + " arrays (" + listed +
                      "): name one as " + path + ":NAME");
      name = path + ":" + stem(names[0]);
      return 0;
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == wanted || stem(names[i]) == wanted) {
        name = path + ":" + stem(names[i]);
        return i;
      }
    }
    throw_invalid(path + " has no array '" + wanted +
                  "' (it holds: " + (listed.empty() ? "nothing" : listed) + ")");
  }

  void open_member() {
    file_ = lib_.fopen_index(archive_, index_, 0);
    if (!file_) throw_invalid(name + ": cannot open the member: " + lib_.strerror(archive_));
  }

  // Reads until `bytes` or the member's end; a failing read (a bad CRC, corrupt deflate data)
  // throws.
  std::size_t fread_all(void* dst, std::size_t bytes) {
    std::size_t got = 0;
    while (got < bytes) {
      zip_int64_t n = lib_.fread(file_, static_cast<char*>(dst) + got, bytes - got);
      if (n < 0) throw_invalid(name + ": corrupt .npz member: " + lib_.file_strerror(file_));
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    return got;
  }

  void close_all() noexcept {
    if (file_) lib_.fclose(file_);
    if (archive_) lib_.discard(archive_);
    file_ = nullptr;
    archive_ = nullptr;
  }

  const Libzip& lib_;
  zip_t* archive_ = nullptr;
  zip_file_t* file_ = nullptr;
  zip_uint64_t index_ = 0;
  std::uint64_t member_bytes_ = 0;
  std::size_t header_bytes_ = 0;
  std::uint64_t read_ = 0;
};

}  // namespace

std::shared_ptr<SourceImpl> open_npz_source(const std::string& path, const std::string& member) {
  return std::make_shared<NpzMember>(path, member);
}

#endif

}  // namespace parpat::detail
