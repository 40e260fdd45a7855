#include "sar/io/file_util.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace sar {

namespace {

Status PosixError(const std::string& what, const std::string& path, int err) {
  return Status::IOError(what + " '" + path + "': " + std::strerror(err));
}

// write(2) until everything is out; short writes happen on signals and full pipes.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

const char* FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Status NotRegular(const std::string& path, mode_t mode) {
  return Status::IOError("cannot read '" + path + "': " + FileTypeName(mode) +
                         ", not a regular file (refused)");
}

Status TooLarge(const std::string& path, uint64_t size, size_t max, bool at_least) {
  return Status::IOError("cannot read '" + path + "': " + (at_least ? "at least " : "") +
                         std::to_string(size) + " bytes, more than the limit of " +
                         std::to_string(max) + " bytes (refused)");
}

// Reads fd to the end into *out, at most max_bytes (one byte more proves the file is larger).
// `hint` is the size fstat reported: the buffer is sized once from it and read straight into,
// because LFT dumps of large fabrics are gigabytes and growing a string chunk by chunk copies
// them several times over. Reading goes on past the hint in case the file grew (or is a pipe
// reporting 0).
Status ReadBounded(int fd, const std::string& path, size_t hint, size_t max_bytes,
                   std::string* out) {
  const size_t limit = max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes + 1;
  size_t used = 0;
  try {
    out->resize(std::min(hint == SIZE_MAX ? hint : hint + 1, limit));
    for (;;) {
      if (used == out->size()) {
        if (used >= limit) return TooLarge(path, used, max_bytes, true);
        const size_t room = limit - used;
        out->resize(used + std::min(room, used + (size_t{1} << 16)));
      }
      const ssize_t n = ::read(fd, out->data() + used, out->size() - used);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError("cannot read", path, errno);
      }
      used += static_cast<size_t>(n);
    }
  } catch (const std::bad_alloc&) {
    // Only the unlimited default gets here (a huge file or an endless pipe): say so instead of
    // letting the exception reach a caller that may be C (the OpenSM plugin).
    return Status::IOError("cannot read '" + path + "': out of memory after " +
                           std::to_string(used) + " bytes");
  }
  if (used > max_bytes) return TooLarge(path, used, max_bytes, true);
  out->resize(used);
  return Status::OK();
}

}  // namespace

ReadOptions UntrustedInputOptions(size_t max_bytes) {
  ReadOptions o;
  o.max_bytes = max_bytes;
  o.regular_file_only = true;
  o.follow_symlinks = false;
  return o;
}

bool FileInfo::may_quote() const {
  if (mode & S_IROTH) return true;
  const uid_t me = ::geteuid();
  return me != 0 && owner == me;
}

Status ReadFileToString(const std::string& path, std::string* out) {
  return ReadFileToString(path, ReadOptions{}, out);
}

Status ReadFileToString(const std::string& path, const ReadOptions& options, std::string* out,
                        FileInfo* info) {
  out->clear();
  struct stat st {};
  if (options.regular_file_only) {
    // Look before opening: opening a FIFO blocks until a writer comes, and opening a device can
    // have side effects. (The descriptor is checked again below: the path may change between.)
    const int r = options.follow_symlinks ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
    if (r == 0 && !S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  } else if (!options.follow_symlinks) {
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return NotRegular(path, st.st_mode);
  }
  int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
  if (options.regular_file_only) flags |= O_NONBLOCK;  // a FIFO swapped in now: no blocking
  if (!options.follow_symlinks) flags |= O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP && !options.follow_symlinks) {
      return Status::IOError("cannot read '" + path +
                             "': a symbolic link, not followed (name the file itself)");
    }
    return PosixError("cannot open", path, err);
  }
  Status s;
  if (::fstat(fd, &st) != 0) {
    s = PosixError("cannot stat", path, errno);
  } else if (options.regular_file_only && !S_ISREG(st.st_mode)) {
    s = NotRegular(path, st.st_mode);
  } else if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > options.max_bytes) {
    s = TooLarge(path, static_cast<uint64_t>(st.st_size), options.max_bytes, false);
  } else {
    if (options.regular_file_only) ::fcntl(fd, F_SETFL, 0);  // back to blocking reads
    const size_t hint = st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
    s = ReadBounded(fd, path, hint, options.max_bytes, out);
  }
  ::close(fd);
  if (!s.ok()) {
    out->clear();
    out->shrink_to_fit();
    return s;
  }
  if (info != nullptr) {
    info->owner = st.st_uid;
    info->group = st.st_gid;
    info->mode = st.st_mode;
  }
  return Status::OK();
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  return WriteFileAtomic(path, data, WriteOptions{});
}

Status WriteFileAtomic(const std::string& path, std::string_view data,
                       const WriteOptions& options) {
  struct stat existing {};
  const bool have_existing = ::lstat(path.c_str(), &existing) == 0;
  if (have_existing && !S_ISREG(existing.st_mode) && !S_ISLNK(existing.st_mode)) {
    if (!S_ISCHR(existing.st_mode)) {
      const char* what = S_ISFIFO(existing.st_mode)   ? "a FIFO"
                         : S_ISSOCK(existing.st_mode) ? "a socket"
                         : S_ISDIR(existing.st_mode)  ? "a directory"
                                                      : "a block device";
      return Status::IOError("'" + path + "': " + what + ", not a regular file; not replaced");
    }
    // O_NONBLOCK: a terminal or other device that would block fails instead of hanging.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return PosixError("cannot open", path, errno);
    const bool ok = WriteAll(fd, data);
    const int err = errno;
    ::close(fd);
    return ok ? Status::OK() : PosixError("cannot write", path, err);
  }
  // The temporary file must live in the same directory so that rename() is atomic (same file
  // system); mkstemp gives it a unique name so concurrent writers do not collide.
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return PosixError("cannot create temporary file for", path, errno);
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return PosixError(what, path, err);
  };
  // mkstemp creates the file 0600. Keep the mode of the regular file we replace, else use the
  // usual 0644. Never the mode of a symbolic link's target: a link at `path` to a file others
  // may write (a root-owned schedule linked to a 0666 file) would hand them the new file too.
  // `existing` is from lstat above. (Reading the umask would need umask(), which changes it for
  // every thread.)
  const mode_t mode = options.mode >= 0                            ? (options.mode & 07777)
                      : have_existing && S_ISREG(existing.st_mode) ? (existing.st_mode & 07777)
                                                                   : 0644;
  // The group first: chown may clear set-id bits that fchmod then sets.
  if (options.group != static_cast<gid_t>(-1) &&
      ::fchown(fd, static_cast<uid_t>(-1), options.group) != 0) {
    return fail("cannot set group of temporary file for");
  }
  if (::fchmod(fd, mode) != 0) return fail("cannot set mode of temporary file for");
  if (!WriteAll(fd, data)) return fail("cannot write temporary file for");
  if (::fsync(fd) != 0) return fail("cannot fsync temporary file for");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return PosixError("cannot close temporary file for", path, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return PosixError("cannot rename temporary file over", path, err);
  }
  return Status::OK();
}

WriteOptions JobPlacementFileOptions(gid_t group) {
  WriteOptions o;
  o.mode = kJobPlacementFileMode;
  o.group = group;
  return o;
}

Status LookUpGroup(const std::string& name, gid_t* out) {
  if (name.empty()) return Status::InvalidArgument("empty group name");
  if (name.find_first_not_of("0123456789") == std::string::npos) {
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(name.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || v >= static_cast<gid_t>(-1)) {
      return Status::InvalidArgument("group id '" + name + "' out of range");
    }
    *out = static_cast<gid_t>(v);
    return Status::OK();
  }
  struct group gr {};
  struct group* found = nullptr;
  std::vector<char> buf(16384);
  int err = 0;
  while ((err = ::getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found)) == ERANGE &&
         buf.size() < (size_t{1} << 24)) {
    buf.resize(buf.size() * 2);
  }
  if (err != 0) return PosixError("cannot look up group", name, err);
  if (found == nullptr) return Status::NotFound("no group '" + name + "' on this host");
  *out = gr.gr_gid;
  return Status::OK();
}

}  // namespace sar
